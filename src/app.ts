import type { Writable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyRequest } from 'fastify';
import swagger from '@fastify/swagger';
import { z } from 'zod';
import { jsonSchemaTransform, jsonSchemaTransformObject, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { serializerCompiler } from './http/serializer.js';
import type { AppContext } from './context.js';
import { frameworkErrorHandler, registerErrorHandling } from './http/error-handling.js';
import { registerBodyParsers } from './http/body-parsers.js';
import { answerConnectRequests, answerUnmetExpectations, writeClientError } from './http/client-errors.js';
import { capConnections, checkingIntervalMs, connectionLimits, HEADERS_TIMEOUT_MS, type ConnectionLimits } from './http/connection-limits.js';
import { registerAuth, type AuthPolicy } from './http/auth.js';
import { credentials } from './domains/auth/credentials.store.js';
import { documentErrorResponses, securityFor, SECURITY_SCHEMES } from './http/openapi.js';
import { finishDocument, type RouteNotes } from './http/openapi-document.js';
import { registerRouteCatalog } from './http/route-catalog.js';
import { registerDocs } from './http/docs.js';
import { redactUrl } from './http/redact.js';
import { registerWebPageGuard } from './http/web-page-guard.js';
import { bindSandbox } from './http/request-sandbox.js';
import { registerClockMoveGate } from './http/clock-move-gate.js';
import { journalRoutes, registerJournal } from './emulator/journal.service.js';
import { endUiEvents } from './emulator/dashboard.events.js';
import { endListener } from './emulator/listen.service.js';
import { registerFaultRules } from './faults/fault-rules.hooks.js';
import { VERSION } from './version.js';
import { documentParts, routeModules } from './modules.js';
import { SESSION_PATH, type SessionRegistry } from './sessions/sessions.registry.js';
import { sessionsRoutes } from './sessions/sessions.routes.js';
import { sessionsDocument } from './sessions/sessions.openapi.js';

export const DEFAULT_BODY_LIMIT = 1024 * 1024; // docs/decisions.md#status-codes: 1 MiB

export interface BuildAppOptions {
  /** Where log lines go (default stdout); tests capture them to prove secrets stay out. */
  logStream?: Writable;
  /** Extra plugins registered after the domain routes (tests use this for probe routes). */
  plugins?: FastifyPluginAsync[];
  /**
   * The sessions the app serves beside the root sandbox (docs/sessions.md): the root's /_emulator/sessions routes, and
   * every /_sessions/{id}/... request bound to that session's sandbox before routing.
   */
  sessions?: SessionRegistry;
  /** How long a request may take to arrive and how many connections are open at once (docs/robustness.md#connections); tests shorten them. */
  limits?: Partial<ConnectionLimits>;
}

/**
 * Build the one Fastify app of the server around its root sandbox (routes are thin; domains hold the logic). Every
 * route is registered once; each request is bound to its sandbox, the root or a session, before routing
 * (docs/architecture.md#the-request-path, step 0), and handlers and hooks read it with `ctxOf(request)`.
 */
export async function buildApp(ctx: AppContext, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const { sessions } = options;
  const limits = connectionLimits(options.limits);
  const app = Fastify({
    logger:
      ctx.config.logLevel === 'silent'
        ? false
        : {
            level: ctx.config.logLevel,
            ...(options.logStream ? { stream: options.logStream } : {}),
            // Secrets never appear in logs (docs/decisions.md#no-secrets-in-logs): requests are logged as method, url
            // and address only (no headers, no bodies), and the url's signed-link parameters are masked. The redact
            // list is a second line of defence should anything log headers later.
            serializers: { req: serializeRequest },
            redact: {
              paths: [
                'req.headers.authorization',
                'req.headers["x-service-signature"]',
                'req.headers["x-service-api-key"]',
                'req.headers["x-admin-token"]',
              ],
              censor: '[REDACTED]',
            },
          },
    bodyLimit: DEFAULT_BODY_LIMIT,
    // docs/robustness.md#connections: a request must arrive in full within the timeout (a body that never ends is a 408
    // and a closed connection); answers and event streams are not timed.
    requestTimeout: limits.requestTimeoutMs,
    // Node swaps the two timeouts when the headers' is the longer, so it is kept at most the request's (60 s otherwise).
    http: {
      requestTimeout: limits.requestTimeoutMs,
      headersTimeout: Math.min(HEADERS_TIMEOUT_MS, limits.requestTimeoutMs),
      connectionsCheckingInterval: checkingIntervalMs(limits.requestTimeoutMs),
    },
    // Long ids must reach the handlers (and get a 404 error body), not Fastify's bare 414.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1024 },
    // Requests Node's HTTP parser refuses before routing still get the error body (http/client-errors.ts).
    clientErrorHandler: writeClientError,
    return503OnClosing: false,
    // Which sandbox (docs/architecture.md#the-request-path, step 0): a session's requests are routed without their
    // /_sessions/{id} prefix, the target as sent kept for signing (docs/sessions.md#addresses-and-signing).
    rewriteUrl: (req) => sandboxUrl(req, ctx, sessions),
    // A URL that does not percent-decode or an over-long path parameter fails in the router, before any
    // hook or error handler: answer it with the error body of interface 7.1 too (found by fuzzing: docs/robustness.md).
    frameworkErrors: frameworkErrorHandler,
    // zod compiles every schema (set again below, where the types are checked). Naming the compilers here
    // also spares the start-up from loading Fastify's default ones (ajv, fast-json-stringify), which nothing
    // uses; Fastify's typings only describe ajv-style factories, hence the casts.
    schemaController: {
      compilersFactory: { buildValidator: (() => optionalBodyAware) as never, buildSerializer: (() => serializerCompiler) as never },
    },
  }).withTypeProvider<ZodTypeProvider>();

  answerConnectRequests(app.server);
  answerUnmetExpectations(app.server);
  capConnections(app.server, limits.maxConnections, (message) => app.log.warn(message));
  app.setValidatorCompiler(optionalBodyAware);
  app.setSerializerCompiler(serializerCompiler);
  registerRouteCatalog(app);
  registerErrorHandling(app);
  // first of all hooks: a request from a web page that may not drive the sandbox is refused (docs/robustness.md#web-pages),
  // then a session path whose session does not exist is a 404 before anything else runs
  registerWebPageGuard(app, ctx.config);
  if (sessions) app.addHook('onRequest', sessions.onRequest);
  registerBodyParsers(app);

  const routeNotes: RouteNotes = new Map();
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'service-sandbox',
        version: VERSION,
        description:
          'Local emulator of the accounts, transactions and enrollment service (interface 1.0) plus its /_emulator control plane. ' +
          'Every non-2xx answer has the ServiceError body { message, errorCode?, validationErrors? }.',
      },
      servers: [{ url: `http://${ctx.config.host === '0.0.0.0' ? '127.0.0.1' : ctx.config.host}:${ctx.config.port}` }],
      components: { securitySchemes: SECURITY_SCHEMES },
    },
    // Each operation gets the security requirement of its `config.auth` policy (interface 5); the policy is
    // also noted for the last pass (http/openapi-document.ts: the X-Service-User-Id header).
    transform: (input) => {
      const result = jsonSchemaTransform(input);
      const auth = (input.route.config as { auth?: AuthPolicy } | undefined)?.auth;
      const security = securityFor(auth, input.url);
      if (security && result.schema && !(result.schema as { hide?: boolean }).hide) {
        (result.schema as Record<string, unknown>).security = security;
      }
      const path = input.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      const optionalBody = acceptsNoBody(input.route.schema?.body);
      for (const method of [input.route.method].flat()) routeNotes.set(`${String(method).toUpperCase()} ${path}`, { auth, optionalBody });
      return result;
    },
    // every module's own part of the document, and the sessions' (docs/openapi.md#what-each-area-adds)
    transformObject: (input) => finishDocument(documentErrorResponses(jsonSchemaTransformObject(input)), routeNotes, [...documentParts, sessionsDocument]),
  });
  registerDocs(app);
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  // The same document as YAML (docs/openapi.md#where-it-lives).
  app.get('/openapi.yaml', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('application/yaml; charset=utf-8').send(app.swagger({ yaml: true })),
  );

  // Fault rules act before the journal's hooks, so the journal records the answer the client really got
  // (docs/faults.md#in-the-journal).
  registerFaultRules(app);
  // docs/test-kit.md#request-journal: the journal sees every request, including ones refused by auth or validation.
  registerJournal(app, ctx.config);
  // docs/decisions.md#scheduler-slices: a sandbox's requests wait while its clock moves (after the fault rules' delays)
  registerClockMoveGate(app);
  registerAuth(app, ctx.config, credentials); // before any route: it gives each route its policy's hook
  journalRoutes(app);
  for (const module of routeModules) await app.register(module);
  if (sessions) await app.register(sessionsRoutes(ctx, sessions));
  // Open event streams (the dashboard's, listen's) would hold the listener open: the root's end, and every session
  // ends (its streams first, then the requests inside it), before the app closes (docs/dashboard.md#live-updates).
  app.addHook('preClose', async () => {
    endUiEvents(ctx);
    endListener(ctx);
    await sessions?.close();
  });
  for (const plugin of options.plugins ?? []) await app.register(plugin);

  await app.ready();
  return app;
}

// Fastify hands a missing body to the validator as null, so a route whose body schema is optional
// (`POST /v1/auth/token` takes `{ scopes? }` or nothing) would refuse a request without one. A null here is
// such a missing body: a JSON `null` sent as the body is refused by the body parser before validation
// (docs/decisions.md#null-body). The OpenAPI document marks such a body optional.
const optionalBodyAware: typeof validatorCompiler = (route) => {
  const validate = validatorCompiler(route);
  if (route.httpPart !== 'body' || !acceptsNoBody(route.schema)) return validate;
  return (data) => (data === null ? { value: undefined } : validate(data));
};

function acceptsNoBody(body: unknown): boolean {
  return body instanceof z.ZodType && body.safeParse(undefined).success;
}

/** Bind the request to its sandbox and answer the url to route: a session's without its prefix. */
function sandboxUrl(req: IncomingMessage, root: AppContext, sessions: SessionRegistry | undefined): string {
  const url = req.url ?? '/';
  if (sessions && url.startsWith(SESSION_PATH)) return sessions.enter(req);
  bindSandbox(req, root);
  return url;
}

function serializeRequest(request: FastifyRequest) {
  return { method: request.method, url: redactUrl(request.url), remoteAddress: request.ip };
}

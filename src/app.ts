import type { Writable } from 'node:stream';
import { createServer } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyServerFactory, type FastifyPluginAsync, type FastifyRequest } from 'fastify';
import swagger from '@fastify/swagger';
import { z } from 'zod';
import { jsonSchemaTransform, jsonSchemaTransformObject, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { serializerCompiler } from './http/serializer.js';
import type { AppContext } from './context.js';
import { frameworkErrorHandler, registerErrorHandling } from './http/error-handling.js';
import { registerBodyParsers } from './http/body-parsers.js';
import { answerConnectRequests, writeClientError } from './http/client-errors.js';
import { registerAuth, type AuthPolicy } from './http/auth.js';
import { credentials } from './domains/auth/credentials.store.js';
import { documentErrorResponses, securityFor, SECURITY_SCHEMES } from './http/openapi.js';
import { finishDocument, type RouteNotes } from './http/openapi-document.js';
import { registerRouteCatalog } from './http/route-catalog.js';
import { registerDocs } from './http/docs.js';
import { redactUrl } from './http/redact.js';
import { journalRoutes, registerJournal } from './emulator/journal.service.js';
import { endUiEvents } from './emulator/dashboard.events.js';
import { registerFaultRules } from './faults/fault-rules.hooks.js';
import { VERSION } from './version.js';
import { routeModules } from './modules.js';
import type { SessionRegistry } from './sessions/sessions.registry.js';
import { sessionsRoutes } from './sessions/sessions.routes.js';

export const DEFAULT_BODY_LIMIT = 1024 * 1024; // docs/decisions.md#status-codes: 1 MiB

export interface BuildAppOptions {
  /** Where log lines go (default stdout); tests capture them to prove secrets stay out. */
  logStream?: Writable;
  /** Extra plugins registered after the domain routes (tests use this for probe routes). */
  plugins?: FastifyPluginAsync[];
  /**
   * The server's root sandbox serves sessions (docs/sessions.md): their control-plane routes, and its listener
   * hands every /_sessions/{id}/... request to that session's app. A session's own app has none.
   */
  sessions?: (ctx: AppContext) => SessionRegistry;
  /**
   * Let requests in between the steps of the build (a session built ahead for the pool: docs/sessions.md#how-fast),
   * so a request to another sandbox waits for one step, not the whole build.
   */
  yieldBetweenSteps?: boolean;
}

/** Build the Fastify app around a context (routes are thin; domains hold the logic). */
export async function buildApp(ctx: AppContext, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const sessions = options.sessions?.(ctx);
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
    // Long ids must reach the handlers (and get a 404 error body), not Fastify's bare 414.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1024 },
    // Requests Node's HTTP parser refuses before routing still get the error body (http/client-errors.ts).
    clientErrorHandler: writeClientError,
    return503OnClosing: false,
    // One listener for the root sandbox and every session: a session's requests go to its own app, with the
    // server's timeouts as Fastify would set them (docs/sessions.md#addresses-and-signing).
    serverFactory: sessions ? sessionAwareServer(sessions) : undefined,
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
  app.setValidatorCompiler(optionalBodyAware);
  app.setSerializerCompiler(serializerCompiler);
  registerRouteCatalog(app);
  registerErrorHandling(app);
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
    transformObject: (input) => finishDocument(documentErrorResponses(jsonSchemaTransformObject(input)), routeNotes),
  });
  registerDocs(app);
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  // The same document as YAML (docs/openapi.md#where-it-lives).
  app.get('/openapi.yaml', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('application/yaml; charset=utf-8').send(app.swagger({ yaml: true })),
  );

  // Fault rules act before the journal's hooks, so the journal records the answer the client really got
  // (docs/faults.md#in-the-journal).
  registerFaultRules(app, ctx, () => journal);
  // docs/test-kit.md#request-journal: the journal sees every request, including ones refused by auth or validation.
  const journal = registerJournal(app, ctx);
  registerAuth(app, ctx, credentials); // before any route: it gives each route its policy's hook
  journalRoutes(app, journal);
  const step = options.yieldBetweenSteps ? () => new Promise<void>((resolve) => setImmediate(resolve)) : () => undefined;
  for (const module of routeModules) {
    await app.register(module(ctx));
    await step();
  }
  if (sessions) {
    await app.register(sessionsRoutes(ctx, sessions));
    app.addHook('onClose', () => sessions.close());
    // A session's dashboard event stream holds the shared listener open: end them all before it closes
    // (docs/dashboard.md#live-updates).
    app.addHook('preClose', (done) => {
      for (const session of sessions.list()) endUiEvents(session.sandbox.ctx);
      done();
    });
  }
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

/** The root's listener: session paths to their apps, the rest to the root app; timeouts as Fastify sets them. */
function sessionAwareServer(sessions: SessionRegistry): FastifyServerFactory {
  return (handler, serverOptions) => {
    const server = createServer((req, res) => {
      if (!sessions.dispatch(req, res)) handler(req, res);
    });
    const { keepAliveTimeout, requestTimeout, connectionTimeout } = serverOptions as { keepAliveTimeout: number; requestTimeout: number; connectionTimeout: number };
    server.keepAliveTimeout = keepAliveTimeout;
    server.requestTimeout = requestTimeout;
    server.setTimeout(connectionTimeout);
    return server;
  };
}

function serializeRequest(request: FastifyRequest) {
  return { method: request.method, url: redactUrl(request.url), remoteAddress: request.ip };
}

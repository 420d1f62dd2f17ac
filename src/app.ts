import type { Writable } from 'node:stream';
import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyRequest } from 'fastify';
import swagger from '@fastify/swagger';
import { z } from 'zod';
import {
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import type { AppContext } from './context.js';
import { errors, frameworkErrorHandler, registerErrorHandling, ServiceError } from './http/errors.js';
import { registerAuth, type AuthPolicy } from './http/auth.js';
import { documentErrorResponses, securityFor, SECURITY_SCHEMES } from './http/openapi.js';
import { registerRouteCatalog } from './http/route-catalog.js';
import { registerDocs } from './http/docs.js';
import { redactUrl } from './http/redact.js';
import { noteArrival } from './db/read-cache.js';
import { registerAdminGuard } from './emulator/admin-guard.js';
import { journalRoutes, registerJournal } from './emulator/journal.js';
import { VERSION } from './version.js';
import { routeModules } from './routes.js';

export const DEFAULT_BODY_LIMIT = 1024 * 1024; // contract 1: 1 MiB

export interface BuildAppOptions {
  /** Where log lines go (default stdout); tests capture them to prove secrets stay out. */
  logStream?: Writable;
  /** Extra plugins registered after the domain routes (tests use this for probe routes). */
  plugins?: FastifyPluginAsync[];
}

/** Build the Fastify app around a context (routes are thin; domains hold the logic). */
export async function buildApp(ctx: AppContext, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger:
      ctx.config.logLevel === 'silent'
        ? false
        : {
            level: ctx.config.logLevel,
            ...(options.logStream ? { stream: options.logStream } : {}),
            // Secrets never appear in logs (issue 2): requests are logged as method, url and address only
            // (no headers, no bodies), and the url's signed-link parameters are masked. The redact list is
            // a second line of defence should anything log headers later.
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
    // Node's HTTP parser refuses some requests before Fastify routes them (headers or URL over 16 KiB,
    // bad framing); they still get the error body of contract 1.
    clientErrorHandler: (error: NodeJS.ErrnoException, socket) => {
      const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
      const status = tooLarge ? 431 : 400;
      const body = JSON.stringify({
        message: tooLarge ? 'The request line or headers are larger than 16 KiB' : 'The request could not be parsed as HTTP',
        errorCode: 'INVALID_REQUEST',
      });
      if (socket.writable) {
        socket.end(
          `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
      } else socket.destroy(error);
    },
    return503OnClosing: false,
    // A URL that does not percent-decode or an over-long path parameter fails in the router, before any
    // hook or error handler: answer it with the error body of interface 7.1 too (issue 9 fuzzing).
    frameworkErrors: frameworkErrorHandler,
    // zod compiles every schema (set again below, where the types are checked). Naming the compilers here
    // also spares the start-up from loading Fastify's default ones (ajv, fast-json-stringify), which nothing
    // uses; Fastify's typings only describe ajv-style factories, hence the casts.
    schemaController: {
      compilersFactory: { buildValidator: (() => optionalBodyAware) as never, buildSerializer: (() => serializerCompiler) as never },
    },
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(optionalBodyAware);
  app.setSerializerCompiler(serializerCompiler);
  registerRouteCatalog(app);
  registerErrorHandling(app);
  registerBodyParsers(app);

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
    // Each operation gets the security requirement of its `config.auth` policy (interface 5).
    transform: (input) => {
      const result = jsonSchemaTransform(input);
      const security = securityFor((input.route.config as { auth?: AuthPolicy } | undefined)?.auth, input.url);
      if (security && result.schema && !(result.schema as { hide?: boolean }).hide) {
        (result.schema as Record<string, unknown>).security = security;
      }
      return result;
    },
    transformObject: (input) => documentErrorResponses(jsonSchemaTransformObject(input)),
  });
  registerDocs(app);
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  // Cached reads re-check other processes' commits once per arriving request (db/read-cache.ts).
  app.addHook('onRequest', (_request, _reply, done) => {
    noteArrival();
    done();
  });
  registerAdminGuard(app, ctx);
  // issue 8: the request journal sees every request, including ones refused by auth or validation.
  journalRoutes(app, registerJournal(app, ctx));
  registerAuth(app, ctx);
  for (const module of routeModules) await app.register(module(ctx));
  for (const plugin of options.plugins ?? []) await app.register(plugin);

  await app.ready();
  return app;
}

// Fastify hands a missing body to the validator as null, so a route whose body schema is optional
// (`POST /v1/auth/token` takes `{ scopes? }` or nothing) would refuse a request without one. A null body
// on such a route is treated as absent.
const optionalBodyAware: typeof validatorCompiler = (route) => {
  const validate = validatorCompiler(route);
  if (route.httpPart !== 'body' || !(route.schema instanceof z.ZodType) || !route.schema.safeParse(undefined).success) return validate;
  return (data) => (data === null ? { value: undefined } : validate(data));
};

function serializeRequest(request: FastifyRequest) {
  return { method: request.method, url: redactUrl(request.url), remoteAddress: request.ip };
}

function registerBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  // Fastify's JSON parser refuses `__proto__` and `constructor.prototype` keys; it is used only when the
  // body contains one of those words, so ordinary bodies are parsed once and keep JSON.parse's message.
  const guardedJsonParse = app.getDefaultJsonParser('error', 'error');
  const malformed = (detail: string) =>
    errors.invalid(`The body is not valid JSON: ${detail}`, [{ type: 'InvalidFormat', fieldRef: 'body', message: `Malformed JSON body: ${detail}` }]);

  // Keep the raw bytes: HMAC signatures cover the body byte for byte (contract 2). An empty body with a
  // JSON content type counts as no body, so `curl -H 'Content-Type: application/json' -X POST` works on
  // routes that take none.
  app.addContentTypeParser(['application/json', 'application/*+json'], { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    request.rawBody = body;
    if (body.length === 0) return done(null, undefined);
    const text = body.toString('utf8');
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      return done(malformed((error as Error).message), undefined);
    }
    if (text.includes('__proto__') || text.includes('constructor')) {
      return guardedJsonParse(request, text, (error) => {
        if (error) return done(malformed('keys named __proto__ or constructor.prototype are not accepted'), undefined);
        done(null, value);
      });
    }
    done(null, value);
  });
  // The payout endpoint takes a Base64 text body (interface 4.12).
  // Elsewhere a non-empty text body is refused like any other non-JSON type (415).
  app.addContentTypeParser('text/plain', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    request.rawBody = body;
    if (request.routeOptions.config?.auth?.modes.includes('payout')) return done(null, body.toString('utf8'));
    if (body.length === 0) return done(null, undefined);
    done(new ServiceError(415, 'INVALID_REQUEST', 'Unsupported Content-Type "text/plain"; send application/json (text/plain is for the payout endpoint)'), undefined);
  });
  // Any other type: fine without a body (curl -d '' sends a form type), otherwise 415 (contract 1 body).
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    request.rawBody = body;
    if (body.length === 0) return done(null, undefined);
    const type = String(request.headers['content-type'] ?? '').split(';')[0]!.trim();
    const what = type ? `Unsupported Content-Type "${type}"` : 'A body was sent without a Content-Type';
    done(new ServiceError(415, 'INVALID_REQUEST', `${what}; send application/json (text/plain on the payout endpoint)`), undefined);
  });
}

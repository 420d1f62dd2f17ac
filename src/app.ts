import Fastify, { type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { AppContext } from './context.js';
import { errors, registerErrorHandling } from './http/errors.js';
import { registerAuth } from './http/auth.js';
import { registerAdminGuard } from './emulator/admin-guard.js';
import { VERSION } from './version.js';
import { routeModules } from './routes.js';

export const DEFAULT_BODY_LIMIT = 1024 * 1024; // contract 1: 1 MiB

/** Build the Fastify app around a context (routes are thin; domains hold the logic). */
export async function buildApp(ctx: AppContext): Promise<FastifyInstance> {
  const app = Fastify({
    logger:
      ctx.config.logLevel === 'silent'
        ? false
        : {
            level: ctx.config.logLevel,
            // Secrets never appear in logs: only method, url and status are logged, and these are redacted anyway.
            redact: ['req.headers.authorization', 'req.headers["x-service-signature"]', 'req.headers["x-service-api-key"]'],
          },
    bodyLimit: DEFAULT_BODY_LIMIT,
    routerOptions: { ignoreTrailingSlash: true },
    return503OnClosing: false,
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerErrorHandling(app);
  registerBodyParsers(app);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'service-sandbox',
        version: VERSION,
        description: 'Local emulator of the accounts, transactions and enrollment service (interface 1.0) plus its /_emulator control plane.',
      },
      servers: [{ url: `http://${ctx.config.host === '0.0.0.0' ? '127.0.0.1' : ctx.config.host}:${ctx.config.port}` }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer' },
          hmacApiKey: { type: 'apiKey', in: 'header', name: 'X-Service-Api-Key' },
        },
      },
    },
    transform: jsonSchemaTransform,
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  registerAdminGuard(app, ctx);
  registerAuth(app, ctx);
  for (const module of routeModules) await app.register(module(ctx));

  await app.ready();
  return app;
}

function registerBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  // Keep the raw bytes: HMAC signatures cover the body byte for byte (contract 2).
  app.addContentTypeParser(['application/json', 'application/*+json'], { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    request.rawBody = body;
    if (body.length === 0) return done(null, undefined);
    try {
      done(null, JSON.parse(body.toString('utf8')));
    } catch (error) {
      const wrapped = errors.invalid(`The body is not valid JSON: ${(error as Error).message}`, [
        { type: 'InvalidFormat', fieldRef: 'body', message: 'Malformed JSON body' },
      ]);
      done(wrapped, undefined);
    }
  });
  app.addContentTypeParser('text/plain', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    request.rawBody = body;
    done(null, body.toString('utf8'));
  });
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    request.rawBody = body;
    done(null, body.length === 0 ? undefined : body);
  });
}

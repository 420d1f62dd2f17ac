import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import swagger from '@fastify/swagger';
import { errors } from './errors.js';

// Swagger UI at /docs (issue 2), built on its first request instead of at start-up (issue 9: cold start).
// @fastify/swagger-ui registers @fastify/static and its file routes, a tenth of the start-up, for a page
// most runs never open. The UI lives in a small Fastify instance of its own, made on the first /docs
// request, holding the main app's finished document (@fastify/swagger in static mode); the main app
// forwards /docs and /docs/* to it.

const PREFIX = '/docs';
// Hop-by-hop and length headers are the main app's to set.
const NOT_FORWARDED = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date']);

export function registerDocs(app: FastifyInstance): void {
  let ui: Promise<FastifyInstance> | undefined;
  const build = async (): Promise<FastifyInstance> => {
    const inner = Fastify({ logger: false });
    await inner.register(swagger, { mode: 'static', specification: { document: app.swagger() as never } });
    const { default: swaggerUi } = await import('@fastify/swagger-ui');
    await inner.register(swaggerUi, { routePrefix: PREFIX });
    await inner.ready();
    return inner;
  };

  const forward = async (request: FastifyRequest, reply: FastifyReply) => {
    ui ??= build().catch((error: unknown) => {
      ui = undefined; // a failed build is tried again on the next request
      throw error;
    });
    const inner = await ui;
    // HEAD is asked as GET so the length header is the page's; Node sends no body on a HEAD answer.
    const answer = await inner.inject({ method: 'GET', url: request.raw.url ?? request.url, headers: request.headers });
    if (answer.statusCode === 404) {
      const path = request.url.split('?')[0]!;
      throw errors.notFound(`No route for ${request.method} ${path}; see /openapi.json for the routes this emulator serves`);
    }
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value !== undefined && !NOT_FORWARDED.has(name)) reply.header(name, value);
    }
    return reply.code(answer.statusCode).send(answer.rawPayload.length > 0 ? answer.rawPayload : undefined);
  };

  app.get(PREFIX, { schema: { hide: true } }, forward);
  app.get(`${PREFIX}/*`, { schema: { hide: true } }, forward);
}

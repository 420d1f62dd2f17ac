import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import swagger from '@fastify/swagger';
import { noRoute, toServiceError } from './error-handling.js';

// Swagger UI at /docs, built on its first request instead of at start-up (cold start: docs/benchmarks.md).
// @fastify/swagger-ui registers @fastify/static and its file routes, a tenth of the start-up, for a page
// most runs never open. The UI lives in a small Fastify instance of its own, made on the first /docs
// request, holding the main app's finished document (@fastify/swagger in static mode); the main app
// forwards the UI's routes to it.

const PREFIX = '/docs';
// Hop-by-hop and length headers are the main app's to set.
const NOT_FORWARDED = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date']);

const FRAMING_HEADERS = {
  'content-security-policy': "frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

export function registerDocs(app: FastifyInstance): void {
  let ui: Promise<FastifyInstance> | undefined;
  const build = async (): Promise<FastifyInstance> => {
    const inner = Fastify({ logger: false, routerOptions: { ignoreTrailingSlash: true } });
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
    // The UI's own refusals (404, a forbidden static path, 412, 416 ...) get the error body of interface 7.
    if (answer.statusCode === 404) throw noRoute(request.method, request.url.split('?')[0]!);
    if (answer.statusCode >= 400) {
      let message = answer.statusMessage;
      try {
        message = (JSON.parse(answer.body) as { message?: string }).message ?? message;
      } catch {
        // not a JSON error body: the status text serves
      }
      throw toServiceError(Object.assign(new Error(message), { statusCode: answer.statusCode }), request);
    }
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value !== undefined && !NOT_FORWARDED.has(name)) reply.header(name, value);
    }
    // docs/robustness.md#web-pages: no page may frame Swagger UI, whose "Try it out" drives the control plane
    reply.headers(FRAMING_HEADERS);
    return reply.code(answer.statusCode).send(answer.rawPayload.length > 0 ? answer.rawPayload : undefined);
  };

  // The UI's own routes, so another method on one of them is a 405 and any other /docs path a 404.
  for (const url of [PREFIX, `${PREFIX}/json`, `${PREFIX}/yaml`, `${PREFIX}/static/*`]) app.get(url, { schema: { hide: true } }, forward);
}

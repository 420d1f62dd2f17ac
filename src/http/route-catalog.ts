import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import type { AuthPolicy } from './auth.js';

// Every registered route, recorded as it is added. Two uses: the 405 answer (docs/decisions.md#status-codes) needs to
// know which methods a concrete path accepts (Fastify's router only answers "no route"), and the OpenAPI test
// checks that every route carries an operationId, tags, a summary, response schemas and an auth policy.

export interface CatalogRoute {
  method: string;
  url: string;
  schema: (FastifySchema & { hide?: boolean; operationId?: string; tags?: string[]; summary?: string; response?: Record<string, unknown> }) | undefined;
  auth: AuthPolicy | undefined;
  pattern: RegExp;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route of this app, in registration order (route-catalog.ts); the app holds it, not a module-level map. */
    routeCatalog: CatalogRoute[];
  }
}

/** Register on the root instance before any route is added. */
export function registerRouteCatalog(app: FastifyInstance): void {
  const routes: CatalogRoute[] = [];
  app.decorate('routeCatalog', routes);
  app.addHook('onRoute', (options: RouteOptions) => {
    const methods = Array.isArray(options.method) ? options.method : [options.method];
    for (const method of methods) {
      routes.push({
        method: String(method).toUpperCase(),
        url: options.url,
        schema: options.schema as CatalogRoute['schema'],
        auth: (options.config as { auth?: AuthPolicy } | undefined)?.auth,
        pattern: patternOf(options.url),
      });
    }
  });
}

/** The routes of the app (root instance), in registration order. */
export function routeCatalog(app: FastifyInstance): readonly CatalogRoute[] {
  return app.hasDecorator('routeCatalog') ? app.routeCatalog : [];
}

/** Methods registered for a concrete request path (no query string), sorted; empty when the path is unknown. */
export function methodsForPath(app: FastifyInstance, path: string): string[] {
  const methods = new Set<string>();
  for (const route of routeCatalog(app)) if (route.pattern.test(path)) methods.add(route.method);
  return [...methods].sort();
}

// `/v1/accounts/:accountId` -> ^/v1/accounts/[^/]+/?$ ; `/docs/static/*` -> ^/docs/static/.*$
// The app ignores trailing slashes (routerOptions.ignoreTrailingSlash), so the pattern does too.
function patternOf(url: string): RegExp {
  const segments = url.split('/').map((segment) => {
    if (segment === '*') return '.*';
    if (segment.includes(':')) return '[^/]+';
    return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  });
  const body = segments.join('/');
  return new RegExp(`^${body.endsWith('.*') ? body : `${body.replace(/\/$/, '')}/?`}$`);
}

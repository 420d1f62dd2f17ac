import type { IncomingMessage } from 'node:http';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';

// Addresses the client sees. A sandbox served under a path prefix (a session, docs/sessions.md#addresses-and-signing): its app routes the
// path without the prefix, while the request target as sent (prefix included) stays in `originalUrl`, which
// is what the HMAC canonical string covers (http/auth.ts), and the prefix is kept for links the app builds.

const PREFIX = Symbol('service-sandbox.pathPrefix');

type PrefixedRequest = IncomingMessage & { originalUrl?: string; [PREFIX]?: string };

/** Note that `req` arrived under `prefix` and answer the url to route without it (`/_sessions/x?a` -> `/?a`). */
export function enterPathPrefix(req: IncomingMessage, prefix: string): string {
  const raw = req as PrefixedRequest;
  const url = raw.url ?? '/';
  raw.originalUrl = url;
  raw[PREFIX] = prefix;
  const rest = url.slice(prefix.length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/** The path prefix the request arrived under ('' for the root sandbox). */
export function pathPrefixOf(request: FastifyRequest): string {
  return (request.raw as PrefixedRequest)[PREFIX] ?? '';
}

const HOST_HEADER = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** Scheme and host the client used (its Host header, so links work through Docker's port mapping), else the configured address. */
export function originOf(ctx: AppContext, request: FastifyRequest): string {
  const host = request.host;
  if (host && HOST_HEADER.test(host)) return `${request.protocol ?? 'http'}://${host}`;
  const configured = ctx.config.host === '0.0.0.0' ? '127.0.0.1' : ctx.config.host;
  return `http://${configured}:${ctx.config.port}`;
}

/** Absolute base of links the app hands out (statement downloads): the origin and the sandbox's path prefix. */
export function publicBaseUrl(ctx: AppContext, request: FastifyRequest): string {
  return originOf(ctx, request) + pathPrefixOf(request);
}

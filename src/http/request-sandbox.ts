import type { IncomingMessage } from 'node:http';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { errors } from '../core/errors.js';

// One app, many sandboxes (docs/architecture.md#the-request-path, step 0): the routes are registered once, and
// each request carries the sandbox it belongs to (the root or a session), resolved from its path before routing.
// Handlers, hooks and the journal read it from the request, never from a closure.

const SANDBOX = Symbol('service-sandbox.sandbox');

type BoundRequest = IncomingMessage & { [SANDBOX]?: AppContext };

/** Say which sandbox `req` belongs to: called before routing (src/app.ts, the app's `rewriteUrl`). */
export function bindSandbox(req: IncomingMessage, ctx: AppContext): void {
  (req as BoundRequest)[SANDBOX] = ctx;
}

/** The sandbox a request belongs to, if one was found (none: a session path whose session does not exist). */
export function sandboxOf(request: FastifyRequest): AppContext | undefined {
  return (request.raw as BoundRequest)[SANDBOX];
}

/** The context of the sandbox a request belongs to: what every handler passes to its domain function. */
export function ctxOf(request: FastifyRequest): AppContext {
  const ctx = (request.raw as BoundRequest)[SANDBOX];
  if (!ctx) throw errors.internal('the request has no sandbox');
  return ctx;
}

import { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sandboxOf } from '../http/request-sandbox.js';
import { errors } from '../core/errors.js';
import { journalOf } from '../emulator/journal.service.js';
import type { FaultEffect, FiredFault } from './fault-rules.schema.js';
import { decideFaults, hasActiveFaultRules } from './fault-rules.service.js';
import { isInternalCall } from './internal-call.js';
import { markConnectionClosed } from '../lib/connection-closed.js';

// Where fault rules act on a request (docs/faults.md#how-rules-are-evaluated): after authentication and validation
// (so a rule can match the user and the body), before the handler; an ambiguous failure acts again in onSend,
// after the handler has committed.

declare module 'fastify' {
  interface FastifyRequest {
    /** Faults that fired on this request, for the journal (docs/faults.md#in-the-journal). */
    faultsFired?: FiredFault[];
    /** An ambiguous failure to apply once the real answer is ready. */
    faultAmbiguous?: { ruleId: string; status: Extract<FaultEffect, { type: 'ambiguous' }>['status'] };
  }
}

/** Paths no rule ever matches: the control plane and the documents (docs/faults.md#what-rules-never-touch). */
const EXEMPT = ['/_emulator', '/openapi.json', '/openapi.yaml', '/docs'];

const STATUS_TEXT: Record<number, string> = {
  429: 'Too many requests',
  500: 'Internal error',
  502: 'Bad gateway',
  503: 'Service unavailable',
  504: 'Gateway timeout',
};

/** Register before the journal, so the journal records the answer the client really got. */
export function registerFaultRules(app: FastifyInstance): void {
  app.addHook('preHandler', (request, reply, done) => {
    const ctx = sandboxOf(request);
    if (!ctx || !hasActiveFaultRules(ctx) || EXEMPT.some((prefix) => request.url.startsWith(prefix))) return done();
    // the demo's and act-as's own calls to the API (docs/faults.md#what-rules-never-touch)
    if (isInternalCall(request.headers)) return done();
    const [path] = request.url.split('?', 1);
    const decision = decideFaults(ctx, {
      method: request.method,
      path: path!,
      userId: request.auth?.userId ?? null,
      body: request.body,
      rawBody: request.rawBody ?? undefined,
    });
    if (!decision) return done();
    request.faultsFired = decision.fired;
    const act = () => {
      const terminal = decision.terminal;
      if (!terminal) return done();
      const effect = terminal.effect;
      if (effect.type === 'ambiguous') {
        request.faultAmbiguous = { ruleId: terminal.ruleId, status: effect.status };
        return done();
      }
      if (effect.type === 'drop') return dropConnection(request, reply);
      sendFaultStatus(reply, terminal.ruleId, effect);
    };
    if (decision.latencyMs > 0) setTimeout(act, decision.latencyMs);
    else act();
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    const ambiguous = request.faultAmbiguous;
    if (!ambiguous) return done(null, payload);
    request.faultAmbiguous = undefined;
    const note = request.faultsFired?.find((fired) => fired.ruleId === ambiguous.ruleId);
    if (note) note.detail = note.detail.replace('processed', `processed (${reply.statusCode})`);
    discard(payload);
    if (ambiguous.status === undefined) {
      journalOf(request)?.addUnanswered(request);
      closeConnection(request);
      return done(null, '');
    }
    reply.code(ambiguous.status);
    for (const header of ['content-disposition', 'content-length', 'location', 'etag', 'cache-control']) reply.removeHeader(header);
    reply.header('content-type', 'application/json; charset=utf-8');
    const body = errors
      .fault(
        ambiguous.status,
        `${STATUS_TEXT[ambiguous.status]} (fault rule ${ambiguous.ruleId}: the request was processed before this answer; retry it with the same idempotency key)`,
      )
      .toBody();
    done(null, JSON.stringify(body));
  });
}

function sendFaultStatus(reply: FastifyReply, ruleId: string, effect: Extract<FaultEffect, { type: 'status' }>): void {
  const message = effect.message ?? `${STATUS_TEXT[effect.status]} (fault rule ${ruleId}: nothing was processed)`;
  const retryAfter = effect.retryAfterSeconds ?? (effect.status === 429 || effect.status === 503 ? 1 : undefined);
  if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter));
  void reply.code(effect.status).type('application/json; charset=utf-8').send(JSON.stringify(errors.fault(effect.status, message).toBody()));
}

/** No answer at all: the journal records it now (no onResponse follows a destroyed socket). */
function dropConnection(request: FastifyRequest, reply: FastifyReply): void {
  journalOf(request)?.addUnanswered(request);
  reply.hijack();
  closeConnection(request);
}

/**
 * Close the client's connection. Destroying a request whose body has been read leaves its socket open, so the
 * socket itself is destroyed; a request injected in process (a test's app.inject) has no real socket and is
 * destroyed instead, which its caller sees as a reset.
 */
function closeConnection(request: FastifyRequest): void {
  const socket = request.raw.socket;
  if (socket instanceof Socket) socket.destroy();
  else {
    markConnectionClosed(request.raw); // src/lib/connection-closed.ts: destroy() alone may be ignored in process
    request.raw.destroy();
  }
}

/** A streamed answer (a statement file) that will not be sent is closed, not left open. */
function discard(payload: unknown): void {
  if (payload && typeof payload === 'object' && 'destroy' in payload && typeof (payload as { destroy: unknown }).destroy === 'function') {
    (payload as { destroy(): void }).destroy();
  }
}

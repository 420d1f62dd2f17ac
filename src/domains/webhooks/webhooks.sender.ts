import type { Agent } from 'undici';
import { newHttpAgent, postWithTimeout } from '../../lib/http-post.js';
import type { AppContext } from '../../context.js';
import type { AttemptKind } from './webhooks.schema.js';
import { chaosTargetOf, prepareAttempt, type AttemptResult, type PreparedAttempt } from './webhooks.attempt.js';
import { recordAttempt, RESPONSE_BODY_LOG_LIMIT } from './webhooks.record.js';
import { deliveryInterceptorOf, noChaos, type AttemptChaos } from './webhooks.interceptor.js';
import { deliveryTransportFor } from './webhooks.transport.js';
import type { StateSlot } from '../../runtime/sandbox-runtime.js';
import { afterOpenTransaction, stateReplacements } from '../../scheduler/scheduler.js';

// The asynchronous half of one webhook attempt (docs/webhooks.md#delivery-rules, interface 6.1): prepare the signed
// request in a short transaction, POST it (src/lib/http-post.ts) outside any transaction, then record the outcome in another.
// The HTTP timeout is a real-time network limit (config webhookTimeoutMs, 10 s by default), not business
// time; the retry schedule that follows a failure runs on the emulated clock (webhooks.queue.ts).

interface SenderState {
  /** Created with the first attempt (undici loads then, not at start-up). */
  agent: Agent | null;
  /** Deliveries with an attempt on the wire, scheduled or replayed: never two at once for one delivery. */
  inFlight: Set<string>;
  /** Called after every attempt settles (the dispatcher wakes up; drain() re-checks). */
  listeners: Set<() => void>;
}

/**
 * Per sandbox (docs/architecture.md#runtime); a reset keeps its connections and the attempts on the wire, which finish
 * unrecorded: an attempt on the wire across a reset or restore (stateReplacements moved) is not recorded, since the
 * deliveries it would be recorded against may now be others with the same ids (docs/webhooks.md#reset).
 */
export const senderSlot: StateSlot<SenderState> = {
  name: 'webhooks.sender',
  create: newSenderState,
  reset: 'keep',
  carriedBySnapshots: false,
  newSession: 'fresh',
};

function newSenderState(): SenderState {
  return { agent: null, inFlight: new Set(), listeners: new Set() };
}

export function senderState(ctx: AppContext): SenderState {
  return ctx.runtime.get(senderSlot);
}

/** Close the HTTP connection pool of a context (the next attempt opens a new one). */
export async function closeSender(ctx: AppContext): Promise<void> {
  const state = senderState(ctx);
  ctx.runtime.set(senderSlot, newSenderState());
  await state.agent?.close().catch(() => undefined);
}

export type AttemptOutcome = 'SENT' | 'BUSY' | 'SKIPPED' | 'ABORTED';

export interface AttemptOptions {
  timeoutMs: number;
  /** Aborts the send without recording it (dispatcher shutdown): the delivery stays owed. */
  signal?: AbortSignal;
}

/**
 * Make one attempt of a delivery now: a scheduled one first waits out the holds webhook chaos planned for it and
 * may be followed by a duplicate (docs/faults.md#webhook-chaos). Never throws for receiver or network failures.
 */
export async function attemptDelivery(ctx: AppContext, deliveryId: string, kind: AttemptKind, options: AttemptOptions): Promise<AttemptOutcome> {
  const state = senderState(ctx);
  if (state.inFlight.has(deliveryId)) return 'BUSY';
  state.inFlight.add(deliveryId);
  try {
    const interceptor = deliveryInterceptorOf(ctx);
    const chaos = kind === 'SCHEDULED' ? planChaos(ctx, deliveryId) : noChaos();
    if (!(await interceptor.hold(ctx, chaos, options.signal))) return 'ABORTED';
    // released while a big save, restore or reset holds the sandbox: prepared on the state that follows it
    // (docs/control-plane.md#big-states)
    if (ctx.db.inTransaction) await afterOpenTransaction(ctx);
    if (!ctx.db.open) return 'ABORTED';
    const generation = stateReplacements(ctx); // the deliveries as prepared; a reset during the send makes them others
    const prepared = prepareAttempt(ctx, deliveryId, kind, chaos);
    if ('skipped' in prepared) return 'SKIPPED';
    const recorded = await sendAndRecord(ctx, state, prepared, options, generation);
    if (recorded === 'ABORTED') return 'ABORTED';
    interceptor.sent(ctx, chaos.target);
    if (recorded.outcome === 'SUCCEEDED' && recorded.number !== null && interceptor.duplicate(ctx, chaos)) {
      await sendDuplicate(ctx, state, deliveryId, recorded.number, options, generation);
    }
    return 'SENT';
  } finally {
    state.inFlight.delete(deliveryId);
    for (const listener of [...state.listeners]) listener();
  }
}

/** The interceptor's plan for a scheduled attempt (webhook chaos); the delivery is read only while it is active. */
function planChaos(ctx: AppContext, deliveryId: string): AttemptChaos {
  const interceptor = deliveryInterceptorOf(ctx);
  if (!interceptor.active(ctx)) return noChaos();
  const target = chaosTargetOf(ctx, deliveryId);
  return target ? interceptor.plan(ctx, target) : noChaos();
}

type Recorded = { outcome: AttemptResult['outcome']; number: number | null } | 'ABORTED';

async function sendAndRecord(ctx: AppContext, state: SenderState, prepared: PreparedAttempt, options: AttemptOptions, generation: number): Promise<Recorded> {
  // docs/webhooks.md#listen: the forward-to URL of a `listen` relay is reached through it, never directly
  const transport = deliveryTransportFor(ctx, prepared.url);
  let result: AttemptResult;
  if (transport) result = await transport.send(ctx, prepared, options);
  else {
    // pipelining 0: a fresh connection per attempt, no keep-alive (docs/decisions.md#webhook-connections)
    state.agent ??= newHttpAgent({ connections: 64, pipelining: 0 });
    result = await send(state.agent, prepared, options);
  }
  if (options.signal?.aborted) return 'ABORTED';
  // recorded after a big save, restore or reset that holds the sandbox now, never into it (docs/control-plane.md#big-states)
  if (ctx.db.inTransaction) await afterOpenTransaction(ctx);
  // docs/webhooks.md#reset: reset or restored while on the wire; its delivery id may now name another event's delivery
  if (stateReplacements(ctx) !== generation) return 'ABORTED';
  try {
    return { outcome: result.outcome, number: recordAttempt(ctx, prepared, result) };
  } catch (error) {
    // the database was closed under us (shutdown): the delivery is still owed and is sent again later
    if (!ctx.db.open) return 'ABORTED';
    throw error;
  }
}

/** docs/faults.md#duplicate: the same body (same eventId) once more, signed afresh, logged as a DUPLICATE attempt. */
async function sendDuplicate(ctx: AppContext, state: SenderState, deliveryId: string, originalNumber: number, options: AttemptOptions, generation: number): Promise<void> {
  const chaos = noChaos();
  chaos.effects.push({ type: 'duplicate', detail: `attempt ${originalNumber} succeeded; the same event sent again, signed afresh` });
  const prepared = prepareAttempt(ctx, deliveryId, 'DUPLICATE', chaos);
  if ('skipped' in prepared) return;
  await sendAndRecord(ctx, state, prepared, options, generation);
}

/** Replay (docs/decisions.md#webhook-replay): one extra attempt, signed afresh, answered once it has settled. */
export async function replayDelivery(ctx: AppContext, deliveryId: string): Promise<AttemptOutcome> {
  return attemptDelivery(ctx, deliveryId, 'REPLAY', { timeoutMs: ctx.config.webhookTimeoutMs });
}

/** POST the attempt directly; interface 6.1: a 2xx status within the timeout acknowledges, the answer's body is only logged. */
async function send(agent: Agent, attempt: PreparedAttempt, options: AttemptOptions): Promise<AttemptResult> {
  const answer = await postWithTimeout(agent, attempt, {
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    abortReason: 'dispatcher stopped',
    keepBytes: RESPONSE_BODY_LOG_LIMIT,
    readBytes: 64 * 1024,
  });
  if (answer.status === null) return { outcome: 'FAILED', responseStatus: null, responseBody: null, error: answer.error, latencyMs: answer.latencyMs };
  const ok = answer.status >= 200 && answer.status < 300;
  return {
    outcome: ok ? 'SUCCEEDED' : 'FAILED',
    responseStatus: answer.status,
    responseBody: answer.body,
    error: ok ? null : `receiver answered ${answer.status}; any 2xx acknowledges`,
    latencyMs: answer.latencyMs,
  };
}

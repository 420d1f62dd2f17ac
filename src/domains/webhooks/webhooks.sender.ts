import { performance } from 'node:perf_hooks';
import { createRequire } from 'node:module';
import type { Agent } from 'undici';
import type { AppContext } from '../../context.js';
import type { AttemptKind } from './webhooks.schema.js';
import { chaosTargetOf, prepareAttempt, type AttemptResult, type PreparedAttempt } from './webhooks.attempt.js';
import { recordAttempt, RESPONSE_BODY_LOG_LIMIT } from './webhooks.record.js';
import { deliveryInterceptorOf, noChaos, type AttemptChaos } from './webhooks.interceptor.js';
import { deliveryTransportFor } from './webhooks.transport.js';
import type { StateSlot } from '../../runtime/sandbox-runtime.js';

// undici is loaded when the first delivery is sent, not at start-up (cold start: docs/benchmarks.md).
let undiciModule: typeof import('undici') | undefined;
function undici(): typeof import('undici') {
  undiciModule ??= createRequire(import.meta.url)('undici') as typeof import('undici');
  return undiciModule;
}

// The asynchronous half of one webhook attempt (docs/webhooks.md#delivery-rules, interface 6.1): prepare the signed
// request in a short transaction, POST it with undici outside any transaction, then record the outcome in another.
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

/** Per sandbox (docs/architecture.md#runtime); a reset keeps it: attempts on the wire finish and are recorded or dropped. */
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
    const prepared = prepareAttempt(ctx, deliveryId, kind, chaos);
    if ('skipped' in prepared) return 'SKIPPED';
    const recorded = await sendAndRecord(ctx, state, prepared, options);
    if (recorded === 'ABORTED') return 'ABORTED';
    interceptor.sent(ctx, chaos.target);
    if (recorded.outcome === 'SUCCEEDED' && recorded.number !== null && interceptor.duplicate(ctx, chaos)) {
      await sendDuplicate(ctx, state, deliveryId, recorded.number, options);
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

async function sendAndRecord(ctx: AppContext, state: SenderState, prepared: PreparedAttempt, options: AttemptOptions): Promise<Recorded> {
  // docs/webhooks.md#listen: the forward-to URL of a `listen` relay is reached through it, never directly
  const transport = deliveryTransportFor(ctx, prepared.url);
  let result: AttemptResult;
  if (transport) result = await transport.send(ctx, prepared, options);
  else {
    // pipelining 0: a fresh connection per attempt, no keep-alive (docs/decisions.md#webhook-connections)
    state.agent ??= new (undici().Agent)({ connections: 64, pipelining: 0 });
    result = await send(state.agent, prepared, options);
  }
  if (options.signal?.aborted) return 'ABORTED';
  try {
    return { outcome: result.outcome, number: recordAttempt(ctx, prepared, result) };
  } catch (error) {
    // the database was closed under us (shutdown): the delivery is still owed and is sent again later
    if (!ctx.db.open) return 'ABORTED';
    throw error;
  }
}

/** docs/faults.md#duplicate: the same body (same eventId) once more, signed afresh, logged as a DUPLICATE attempt. */
async function sendDuplicate(ctx: AppContext, state: SenderState, deliveryId: string, originalNumber: number, options: AttemptOptions): Promise<void> {
  const chaos = noChaos();
  chaos.effects.push({ type: 'duplicate', detail: `attempt ${originalNumber} succeeded; the same event sent again, signed afresh` });
  const prepared = prepareAttempt(ctx, deliveryId, 'DUPLICATE', chaos);
  if ('skipped' in prepared) return;
  await sendAndRecord(ctx, state, prepared, options);
}

/** Replay (docs/decisions.md#webhook-replay): one extra attempt, signed afresh, answered once it has settled. */
export async function replayDelivery(ctx: AppContext, deliveryId: string): Promise<AttemptOutcome> {
  return attemptDelivery(ctx, deliveryId, 'REPLAY', { timeoutMs: ctx.config.webhookTimeoutMs });
}

async function send(agent: Agent, attempt: PreparedAttempt, options: AttemptOptions): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  // One controller per attempt, aborted by the timeout or by the dispatcher's stop signal. (Not
  // AbortSignal.any: on Node 20 every derived signal stays attached to the long-lived stop signal.)
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error('timeout'));
  }, options.timeoutMs);
  const onStop = () => controller.abort(new Error('dispatcher stopped'));
  if (options.signal?.aborted) onStop();
  else options.signal?.addEventListener('abort', onStop, { once: true });
  try {
    const response = await undici().request(attempt.url, {
      method: 'POST',
      headers: attempt.headers,
      body: attempt.body,
      signal: controller.signal,
      dispatcher: agent,
      // belts and braces; the timer above fires first and names the failure a timeout
      headersTimeout: options.timeoutMs + 1000,
      bodyTimeout: options.timeoutMs + 1000,
    });
    // interface 6.1: a 2xx status within the timeout acknowledges; the answer's body is only logged
    const latencyMs = elapsed();
    const responseBody = await readAnswerPreview(response.body, RESPONSE_BODY_LOG_LIMIT, 64 * 1024);
    const ok = response.statusCode >= 200 && response.statusCode < 300;
    return {
      outcome: ok ? 'SUCCEEDED' : 'FAILED',
      responseStatus: response.statusCode,
      responseBody,
      error: ok ? null : `receiver answered ${response.statusCode}; any 2xx acknowledges`,
      latencyMs,
    };
  } catch (error) {
    return {
      outcome: 'FAILED',
      responseStatus: null,
      responseBody: null,
      error: timedOut ? `no answer within ${options.timeoutMs} ms (timeout)` : describeNetworkError(error),
      latencyMs: elapsed(),
    };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onStop);
  }
}

/**
 * The first `keepBytes` of an answer's body as text (null when empty), reading at most `readBytes` before the
 * stream is let go. The sender and the receiver check (src/faults/receiver-check.service.ts) both log answers so.
 */
export async function readAnswerPreview(body: AsyncIterable<Buffer> & { destroy(): unknown }, keepBytes: number, readBytes = keepBytes): Promise<string | null> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    for await (const chunk of body) {
      if (bytes < keepBytes) chunks.push(chunk);
      bytes += chunk.length;
      if (bytes >= readBytes) break; // enough; leaving the loop destroys the stream
    }
  } catch {
    // the status already arrived; a body cut short does not change the outcome
  }
  const text = Buffer.concat(chunks).subarray(0, keepBytes).toString('utf8');
  return text === '' ? null : text;
}

export function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  const code = (error as { code?: string }).code ?? (cause as { code?: string } | undefined)?.code;
  const message = error.message || (cause instanceof Error ? cause.message : '');
  return code && !message.includes(code) ? `${code}: ${message}` : message || code || 'network error';
}

import type { ServerResponse } from 'node:http';
import type { AppContext } from '../context.js';
import { errors } from '../core/errors.js';
import type { StateSlot } from '../runtime/sandbox-runtime.js';
import type { BackgroundService } from '../domains/domain.js';
import { setWebhookEndpoint } from '../domains/webhooks/webhooks.endpoints.js';
import { RESPONSE_BODY_LOG_LIMIT } from '../domains/webhooks/webhooks.record.js';
import type { AttemptResult } from '../domains/webhooks/webhooks.attempt.js';
import { withScenarioReceiver } from './scenario-receiver.js';
import { registerDeliveryTransport, type DeliveryTransport, type TransportedAttempt } from '../domains/webhooks/webhooks.transport.js';
import type { ListenResultBody, ListenStatus } from './listen.schema.js';
import { EVENT_STREAM_TYPE } from './dashboard.events.js';

// The `listen` relay (docs/webhooks.md#listen): `service-sandbox listen --forward-to URL` holds an event stream open
// (GET /_emulator/webhooks/listen/stream); every attempt of a delivery to URL is written to that stream instead of
// being sent, and the attempt is answered by what the listener reports back (POST .../results) after posting it to the
// app. Attempts, retries, the delivery log and webhook chaos run exactly as for a direct delivery: only the last hop
// differs. While no listener is connected, attempts to URL fail as to an unreachable URL and follow the retry schedule.

/** A comment line on the stream this often, so proxies and the listener know it is alive. */
const HEARTBEAT_MS = 15_000;

interface Listener {
  id: string;
  forwardTo: string;
  response: ServerResponse;
  connectedAtMs: number;
  heartbeat: NodeJS.Timeout;
}

interface WaitingAttempt {
  listenerId: string;
  answer: (result: AttemptResult) => void;
}

interface ListenState {
  /** The URL whose attempts travel through the relay; null: none (deliveries go out directly). */
  forwardTo: string | null;
  listener: Listener | null;
  waiting: Map<string, WaitingAttempt>;
  /** Numbers of listeners and attempts: never reused in a sandbox, so a late report never meets a newer attempt. */
  listeners: number;
  attempts: number;
}

/**
 * Per sandbox (docs/architecture.md#runtime). A reset ends the relay: the stream closes (the listener connects again
 * by itself and points the reset sandbox's endpoints at its URL again) and attempts waiting for an answer fail.
 */
export const listenSlot: StateSlot<ListenState> = {
  name: 'emulator.listen',
  create: () => ({ forwardTo: null, listener: null, waiting: new Map(), listeners: 0, attempts: 0 }),
  reset: (state) => stopRelay(state, 'the sandbox was reset'),
  carriedBySnapshots: false,
  newSession: 'fresh',
};

function stateOf(ctx: AppContext): ListenState {
  return ctx.runtime.get(listenSlot);
}

/** The URL without its query: the receiver check's query-string case still goes through the relay. */
function withoutQuery(url: string): string {
  const cut = url.search(/[?#]/);
  return cut === -1 ? url : url.slice(0, cut);
}

function failed(error: string, latencyMs = 0): AttemptResult {
  return { outcome: 'FAILED', responseStatus: null, responseBody: null, error, latencyMs };
}

function write(listener: Listener, event: string, data: unknown): void {
  listener.response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** Close the listener's stream and fail what waits on it. */
function dropListener(state: ListenState, listener: Listener, why: string, event?: { name: string; data: unknown }): void {
  clearInterval(listener.heartbeat);
  if (state.listener === listener) state.listener = null;
  for (const [attemptId, waiting] of state.waiting) {
    if (waiting.listenerId !== listener.id) continue;
    state.waiting.delete(attemptId);
    waiting.answer(failed(`the listener went away before the app answered (${why})`));
  }
  if (!listener.response.writableEnded) {
    if (event) write(listener, event.name, event.data);
    listener.response.end();
  }
}

/** `reconnect`: whether the listener should connect again (after a reset: yes; the relay stopped: no). */
function stopRelay(state: ListenState, why: string, reconnect = true): void {
  if (state.listener) dropListener(state, state.listener, why, { name: 'closed', data: { reason: why, reconnect } });
  state.forwardTo = null;
}

/**
 * A listener connects: every programme's webhook endpoint becomes `forwardTo` (deliveries are signed for its path),
 * the stream answers `ready`, and attempts to `forwardTo` are written to it from now on. A listener already
 * connected is replaced (its stream ends with `replaced`).
 */
export function connectListener(ctx: AppContext, forwardTo: string, response: ServerResponse): void {
  const state = stateOf(ctx);
  const endpoints = setWebhookEndpoint(ctx, { url: forwardTo });
  state.listeners += 1;
  const id = `lst_${state.listeners}`;
  if (state.listener) dropListener(state, state.listener, `replaced by ${id}`, { name: 'replaced', data: { by: id } });
  response.writeHead(200, {
    'content-type': EVENT_STREAM_TYPE,
    'cache-control': 'no-cache',
    'x-content-type-options': 'nosniff',
    'x-accel-buffering': 'no',
  });
  const listener: Listener = {
    id,
    forwardTo,
    response,
    connectedAtMs: Date.now(),
    heartbeat: setInterval(() => response.write(': still here\n\n'), HEARTBEAT_MS),
  };
  listener.heartbeat.unref();
  state.forwardTo = forwardTo;
  state.listener = listener;
  response.once('close', () => dropListener(state, listener, 'its stream closed'));
  write(listener, 'ready', { listenerId: id, forwardTo, endpoints: endpoints.endpoints });
}

/** The listener's report of one attempt: the app's answer becomes the attempt's result, as a direct send's would. */
export function reportAttempt(ctx: AppContext, listenerId: string, report: ListenResultBody): void {
  const state = stateOf(ctx);
  const waiting = state.waiting.get(report.attemptId);
  if (!waiting || waiting.listenerId !== listenerId) {
    throw errors.notFound(`No attempt ${report.attemptId} of listener ${listenerId} waits for an answer: it timed out, or the listener was replaced or reset`);
  }
  state.waiting.delete(report.attemptId);
  const ok = report.status !== null && report.status >= 200 && report.status < 300;
  const body = report.responseBody ?? null;
  waiting.answer({
    outcome: ok ? 'SUCCEEDED' : 'FAILED',
    responseStatus: report.status,
    responseBody: body === null || body === '' ? null : body.slice(0, RESPONSE_BODY_LOG_LIMIT),
    error: ok ? null : report.status !== null ? `receiver answered ${report.status}; any 2xx acknowledges` : (report.error ?? 'no answer'),
    latencyMs: report.latencyMs,
  });
}

export function listenStatus(ctx: AppContext): ListenStatus {
  const state = stateOf(ctx);
  return {
    forwardTo: state.forwardTo,
    connected: state.listener !== null,
    listenerId: state.listener?.id ?? null,
    connectedAt: state.listener ? new Date(state.listener.connectedAtMs).toISOString() : null,
    waiting: state.waiting.size,
  };
}

/** `DELETE /_emulator/webhooks/listen`: the stream ends and attempts go out directly again. */
export function stopListening(ctx: AppContext): void {
  stopRelay(stateOf(ctx), 'the relay was stopped (DELETE /_emulator/webhooks/listen)', false);
}

/** End the stream when the sandbox closes (a session ended), or the server would wait for it. */
export function endListener(ctx: AppContext): void {
  const state = stateOf(ctx);
  if (state.listener) dropListener(state, state.listener, 'the sandbox closed', { name: 'closed', data: { reason: 'the sandbox closed', reconnect: true } });
}

/** Background service (emulator.domain.ts): the relay's stream ends when its sandbox closes. */
export const listenService: BackgroundService = (ctx) => () => endListener(ctx);

const relay: DeliveryTransport = {
  carries(ctx, url) {
    const { forwardTo } = stateOf(ctx);
    return forwardTo !== null && withoutQuery(url) === withoutQuery(forwardTo);
  },
  send(ctx, attempt: TransportedAttempt, options) {
    const state = stateOf(ctx);
    const listener = state.listener;
    if (!listener) {
      return Promise.resolve(failed(`no listener connected for ${state.forwardTo}: start \`service-sandbox listen --forward-to ${state.forwardTo}\` (docs/webhooks.md#listen)`));
    }
    state.attempts += 1;
    const attemptId = `att_${state.attempts}`;
    return new Promise<AttemptResult>((resolve) => {
      const started = performance.now();
      let timer: NodeJS.Timeout | undefined;
      const finish = (result: AttemptResult) => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onStop);
        state.waiting.delete(attemptId);
        resolve(result);
      };
      const onStop = () => finish(failed('dispatcher stopped', performance.now() - started));
      timer = setTimeout(() => finish(failed(`no answer within ${options.timeoutMs} ms (timeout)`, options.timeoutMs)), options.timeoutMs);
      options.signal?.addEventListener('abort', onStop, { once: true });
      state.waiting.set(attemptId, { listenerId: listener.id, answer: finish });
      write(listener, 'attempt', {
        listenerId: listener.id,
        attemptId,
        deliveryId: attempt.deliveryId,
        url: attempt.url,
        headers: attempt.headers,
        body: attempt.body,
        timeoutMs: options.timeoutMs,
      });
    });
  },
};

/** Registered on every sandbox's runtime when its context is created (emulator.domain.ts, `wire`). */
export function registerListenRelay(ctx: AppContext): void {
  // and the receiver of scenarios the server plays (docs/scenarios.md#format)
  registerDeliveryTransport(ctx, withScenarioReceiver(relay));
}


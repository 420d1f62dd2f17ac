import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { performance } from 'node:perf_hooks';
import { checkServerVersion } from './version-check.js';
import { timeoutOf, timeoutSignal } from './timeout.js';
import { isHttpUrl } from '../lib/http-url.js';

// Webhook forwarding (docs/clients.md#forwarding, docs/webhooks.md#listen): the relay's client, spoken natively over
// fetch. It holds the sandbox's event stream open (`GET {base}/_emulator/webhooks/listen/stream?forwardTo=URL`), posts
// every attempt it is handed to the app with exactly its headers and bytes, and reports the app's answer back
// (`POST {base}/_emulator/webhooks/listen/{listenerId}/results`), so attempts, retries, the delivery log and webhook
// chaos behave as with direct delivery. `service-sandbox listen` (src/cli/listen.command.ts) is this function with a
// terminal around it: one implementation.

/** The first bytes of the app's answer read and reported: what the delivery log keeps of a direct attempt's (2 KiB). */
const ANSWER_BYTES_REPORTED = 2048;
/** How long to wait before connecting again after the stream dropped or the emulator could not be reached. */
const DEFAULT_RECONNECT_DELAY_MS = 1000;
/** How often, and how many times, a stop checks that the emulator has let the stream go (at most about 2 s). */
const RELEASE_CHECK_MS = 10;
const RELEASE_CHECKS = 200;
const SESSION_BASE = /\/_sessions\/([^/?#]+)$/;

/** One delivery attempt as the emulator hands it over (docs/webhooks.md#listen). */
export interface ForwardedAttempt {
  attemptId: string;
  deliveryId: string | null;
  /** The app's URL, with the query the emulator sent it with, if any (the receiver check's query-string case). */
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}

/** What the app answered, as reported to the emulator. */
export interface ForwardResult {
  /** The app's status; null when it did not answer. */
  status: number | null;
  responseBody: string | null;
  /** Why the app did not answer (a refused connection, a timeout). */
  error: string | null;
  latencyMs: number;
}

/** One attempt carried to the app: what `onDelivery` gets. */
export interface ForwardedDelivery {
  attempt: ForwardedAttempt;
  result: ForwardResult;
  /** X-Service-Event-Type of the attempt. */
  eventType: string | null;
  /** `metadata.eventId` of the body. */
  eventId: string | null;
}

/** The stream's `ready` event: the relay is connected, the app's URL is every programme's webhook endpoint. */
export interface ForwardingReady {
  listenerId: string;
  forwardTo: string;
  /** True when this is a connection after the first (after a reset, or after the stream dropped). */
  reconnected: boolean;
}

/** Why forwarding ended: `stopped` by you; the others by the emulator, each with a message that says what happened. */
export type ForwardingEnd =
  | { reason: 'stopped'; message: string }
  | { reason: 'session-ended'; message: string }
  | { reason: 'replaced'; message: string }
  | { reason: 'relay-stopped'; message: string }
  | { reason: 'refused'; message: string };

export interface ForwardWebhooksOptions {
  /** Stops forwarding when aborted (as `stop()` does); aborted before the stream is ready, the call rejects with its reason. */
  signal?: AbortSignal;
  /** The server's --admin-token, sent as `Authorization: Bearer` on the relay's routes. */
  adminToken?: string;
  /** Called for each attempt once the app answered (or did not), before the answer is reported. */
  onDelivery?(delivery: ForwardedDelivery): void;
  /** Called on each connection, the first included. */
  onReady?(ready: ForwardingReady): void;
  /** Called when the emulator could not be reached or the stream dropped, before connecting again. */
  onReconnecting?(notice: { message: string; delayMs: number }): void;
  /** Called once when forwarding ends, with why. */
  onEnd?(end: ForwardingEnd): void;
  /** Wait before connecting again after a drop (default 1000 ms). */
  reconnectDelayMs?: number;
  /** A fetch of your own for the relay's routes (default: the global one). */
  fetch?: typeof fetch;
  /**
   * Real ms each of the relay's requests may take (default 60 s, as the client's; `Infinity`: none): the stream's
   * first answer, each result reported, the checks of a stop. An open stream is not bounded.
   */
  timeoutMs?: number;
}

/** A running forwarder: `stop()`, the `signal` you gave, or `await using` ends it. */
export interface WebhookForwarder extends AsyncDisposable {
  /** The app's URL the sandbox's webhooks go to. */
  readonly appUrl: string;
  /** The listener id of the current connection. */
  readonly listenerId: string;
  /** Settles (never rejects) when forwarding ends, with why. */
  readonly ended: Promise<ForwardingEnd>;
  /** Stop forwarding: the stream is closed, attempts go out directly again. Resolves with why it ended. */
  stop(): Promise<ForwardingEnd>;
}

export type ForwardingErrorCode = 'SESSION_ENDED' | 'REFUSED' | 'UNREACHABLE';

/** Forwarding could not start: the session is gone, the emulator refused (admin token, bad URL), or it is unreachable. */
export class WebhookForwardingError extends Error {
  constructor(
    readonly code: ForwardingErrorCode,
    message: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'WebhookForwardingError';
  }
}

/**
 * Forward the webhooks of the sandbox at `baseUrl` (the root, or a session's `.../_sessions/ses_...`) to `appUrl`.
 * Resolves once the stream is ready, so deliveries of what you do next reach the app; rejects with a
 * WebhookForwardingError when the emulator refuses or cannot be reached.
 */
export async function forwardWebhooks(baseUrl: string, appUrl: string, options: ForwardWebhooksOptions = {}): Promise<WebhookForwarder> {
  const base = baseUrl.replace(/\/+$/, '');
  if (!isHttpUrl(appUrl)) {
    throw new TypeError(`forwardWebhooks: "${appUrl}" is not an http:// or https:// URL, such as http://127.0.0.1:3000/webhooks`);
  }
  const send = options.fetch ?? globalThis.fetch;
  const delayMs = options.reconnectDelayMs ?? DEFAULT_RECONNECT_DELAY_MS;
  const stopper = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stopper.signal]) : stopper.signal;
  const headers = (extra: Record<string, string> = {}): Record<string, string> => ({
    ...extra,
    ...(options.adminToken ? { authorization: `Bearer ${options.adminToken}` } : {}),
  });
  const timeoutMs = timeoutOf(options.timeoutMs);
  const health = timeoutSignal(`GET ${base}/_emulator/health`, timeoutMs, signal);
  await checkServerVersion(base, { fetch: send, adminToken: options.adminToken, signal: health.signal }).finally(health.done);

  const connect = async (): Promise<ReadableStream<Uint8Array>> => {
    const url = `${base}/_emulator/webhooks/listen/stream?forwardTo=${encodeURIComponent(appUrl)}`;
    let response: Response;
    // the stream's first answer is bounded; once it is open, only a stop (or the emulator) ends it
    const opening = new AbortController();
    const timer = Number.isFinite(timeoutMs) ? setTimeout(() => opening.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs) : undefined;
    try {
      response = await send(url, { headers: headers({ accept: 'text/event-stream' }), signal: AbortSignal.any([signal, opening.signal]) });
    } catch (error) {
      if (signal.aborted) throw error;
      if (opening.signal.aborted) {
        throw new WebhookForwardingError('UNREACHABLE', `cannot reach ${base} (${(opening.signal.reason as Error).message})`, undefined, { cause: error });
      }
      const code = (error as { cause?: { code?: string } }).cause?.code;
      throw new WebhookForwardingError('UNREACHABLE', `cannot reach ${base} (${code ?? (error as Error).message})`, undefined, { cause: error });
    } finally {
      clearTimeout(timer);
    }
    if (response.ok && response.body) return response.body;
    const message = await refusalMessage(response);
    const session = SESSION_BASE.exec(base)?.[1];
    if (response.status === 404 && session) {
      throw new WebhookForwardingError('SESSION_ENDED', `session ${decodeURIComponent(session)} has ended (or never existed): its webhooks are no longer forwarded`, 404);
    }
    // a 4xx will not change by itself (admin token, bad URL); a 5xx or a proxy's error may
    const code = response.status >= 400 && response.status < 500 ? 'REFUSED' : 'UNREACHABLE';
    throw new WebhookForwardingError(code, `${base} refused the listener: ${response.status} ${message}`, response.status);
  };

  const report = (listenerId: string, attempt: ForwardedAttempt, result: ForwardResult) => {
    const url = `${base}/_emulator/webhooks/listen/${encodeURIComponent(listenerId)}/results`;
    const bounded = timeoutSignal(`POST ${url}`, timeoutMs, signal);
    return send(url, {
      method: 'POST',
      headers: headers({ 'content-type': 'application/json' }),
      body: JSON.stringify({ attemptId: attempt.attemptId, ...result }),
      signal: bounded.signal,
    })
      .then(
        (answer) => answer.body?.cancel(),
        () => undefined, // the stream dropped meanwhile, or no answer in time: the emulator counts the attempt as failed
      )
      .finally(bounded.done);
  };

  /** Read one connection's stream: resolves with the end the emulator announced, or null when it should connect again. */
  const run = async (stream: ReadableStream<Uint8Array>, onReady: (listenerId: string) => void): Promise<ForwardingEnd | null> => {
    let listenerId = '';
    for await (const { event, data } of serverSentEvents(stream)) {
      const payload = JSON.parse(data) as Record<string, unknown>;
      if (event === 'ready') {
        listenerId = String(payload.listenerId);
        onReady(listenerId);
      } else if (event === 'replaced') {
        return { reason: 'replaced', message: `another listener (${String(payload.by)}) took over the webhooks of ${base}` };
      } else if (event === 'closed') {
        if (payload.reconnect === false) return { reason: 'relay-stopped', message: `the emulator stopped the relay: ${String(payload.reason)}` };
        return null;
      } else if (event === 'attempt') {
        const attempt = payload as unknown as ForwardedAttempt;
        const id = listenerId;
        // each attempt on its own: a slow app does not hold back the next delivery (the emulator limits how many)
        void forward(attempt, signal).then((result) => {
          options.onDelivery?.({ attempt, result, ...describe(attempt) });
          return report(id, attempt, result);
        });
      }
    }
    return null;
  };

  let current = '';
  let firstStream: ReadableStream<Uint8Array>;
  try {
    firstStream = await connect();
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    throw error;
  }
  let resolveReady!: () => void;
  let rejectReady!: (error: unknown) => void;
  const ready = new Promise<void>((resolve, reject) => {
    resolveReady = resolve;
    rejectReady = reject;
  });
  let connections = 0;
  const onReady = (listenerId: string) => {
    current = listenerId;
    options.onReady?.({ listenerId, forwardTo: appUrl, reconnected: connections > 0 });
    connections += 1;
    resolveReady();
  };

  const loop = async (): Promise<ForwardingEnd> => {
    let stream: ReadableStream<Uint8Array> | null = firstStream;
    let announcedClose = false;
    while (!signal.aborted) {
      try {
        stream ??= await connect();
        const end = await run(stream, onReady);
        stream = null;
        if (end) return end;
        // the emulator closed the stream and asked for a reconnect (a reset, a session ending): connect again at once,
        // and quietly; when its session has ended, that answers 404 and the forwarder ends with one message
        announcedClose = true;
        continue;
      } catch (error) {
        stream = null;
        if (signal.aborted) break;
        if (error instanceof WebhookForwardingError && error.code === 'SESSION_ENDED') return { reason: 'session-ended', message: error.message };
        if (error instanceof WebhookForwardingError && error.code === 'REFUSED') return { reason: 'refused', message: error.message };
        const message = error instanceof WebhookForwardingError ? error.message : `the stream from ${base} dropped (${(error as Error).message})`;
        if (connections === 0 && !announcedClose) {
          rejectReady(error);
          return { reason: 'refused', message };
        }
        options.onReconnecting?.({ message, delayMs });
      }
      await abortableDelay(delayMs, signal);
    }
    await released();
    return { reason: 'stopped', message: `stopped forwarding the webhooks of ${base} to ${appUrl}` };
  };

  /**
   * After a stop, wait (briefly) until the emulator has seen the stream close, so that what the caller does next is
   * not forwarded: the close travels on the stream's own connection and may arrive after the caller's next request.
   */
  const released = async () => {
    for (let round = 0; round < RELEASE_CHECKS && current !== ''; round++) {
      const bounded = timeoutSignal(`GET ${base}/_emulator/webhooks/listen`, timeoutMs);
      try {
        const answer = await send(`${base}/_emulator/webhooks/listen`, { headers: headers(), signal: bounded.signal });
        if (!answer.ok) return void (await answer.body?.cancel());
        const status = (await answer.json()) as { connected?: boolean; listenerId?: string | null };
        if (!status.connected || status.listenerId !== current) return;
      } catch {
        return; // the emulator is gone (or does not answer): nothing is forwarded any more
      } finally {
        bounded.done();
      }
      await new Promise((resolve) => setTimeout(resolve, RELEASE_CHECK_MS));
    }
  };

  const ended = loop().then((end) => {
    stopper.abort();
    options.onEnd?.(end);
    return end;
  });
  // a stream that ends before its `ready` (never sent by the emulator) ends the call too
  void ended.then((end) => rejectReady(new WebhookForwardingError('REFUSED', end.message)));
  try {
    await ready;
  } catch (error) {
    stopper.abort();
    throw error;
  }
  const stop = async () => {
    stopper.abort();
    return ended;
  };
  return {
    appUrl,
    get listenerId() {
      return current;
    },
    ended,
    stop,
    [Symbol.asyncDispose]: async () => {
      await stop();
    },
  };
}

async function refusalMessage(response: Response): Promise<string> {
  const text = await response.text().catch(() => '');
  try {
    return (JSON.parse(text) as { message?: string }).message ?? text;
  } catch {
    return text; // not the error body: the text as it came
  }
}

function describe(attempt: ForwardedAttempt): { eventType: string | null; eventId: string | null } {
  let eventId: string | null = null;
  try {
    eventId = (JSON.parse(attempt.body) as { metadata?: { eventId?: string } }).metadata?.eventId ?? null;
  } catch {
    // a body that is not JSON (never sent by the emulator) is forwarded all the same
  }
  return { eventType: attempt.headers['x-service-event-type'] ?? null, eventId };
}

/**
 * POST the attempt to the app with exactly its headers and bytes (node:http adds only Host and Connection; fetch would
 * add its own and could not send the emulator's as they are). As direct delivery (src/lib/http-post.ts): the status
 * decides, and of the body at most its first 2 KiB are read, then the connection is let go, so a large answer costs
 * nothing and an answer whose body never ends is still the status it sent. The emulator's own timer for the attempt
 * runs for `timeoutMs` from before it handed the attempt over, so the body is waited for until half of it at most:
 * the report must reach the emulator before that timer does (docs/clients.md#forwarding).
 */
function forward(attempt: ForwardedAttempt, signal: AbortSignal): Promise<ForwardResult> {
  const started = performance.now();
  const target = new URL(attempt.url);
  const body = Buffer.from(attempt.body, 'utf8');
  return new Promise((resolve) => {
    let settled = false;
    let statusAt: number | null = null;
    const timers: NodeJS.Timeout[] = [];
    const finish = (result: Omit<ForwardResult, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      timers.forEach(clearTimeout);
      outgoing.destroy(); // done with the answer: what else the app sends is not read
      // the latency is to the status line, as direct delivery measures it
      resolve({ ...result, latencyMs: Math.round(((statusAt ?? performance.now()) - started) * 10) / 10 });
    };
    const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const outgoing = request(target, { method: 'POST', signal, headers: { ...attempt.headers, 'content-length': String(body.length) } }, (answer) => {
      statusAt = performance.now();
      const status = answer.statusCode ?? null;
      const chunks: Buffer[] = [];
      let bytes = 0;
      const withBody = () => {
        const text = Buffer.concat(chunks).subarray(0, ANSWER_BYTES_REPORTED).toString('utf8');
        finish({ status, responseBody: text === '' ? null : text, error: null });
      };
      answer.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        bytes += chunk.length;
        if (bytes >= ANSWER_BYTES_REPORTED) withBody();
      });
      answer.on('end', withBody);
      answer.on('error', withBody); // the status came: a body cut short does not change the outcome
      answer.on('aborted', withBody);
      timers.push(setTimeout(withBody, Math.max(0, attempt.timeoutMs / 2 - (statusAt - started))));
    });
    timers.push(
      setTimeout(() => finish({ status: null, responseBody: null, error: `no answer within ${attempt.timeoutMs} ms (timeout)` }), attempt.timeoutMs),
    );
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      finish({ status: null, responseBody: null, error: error.code ? `${error.code}: ${error.message}` : error.message });
    });
    outgoing.end(body);
  });
}

/** The events of a text/event-stream body (docs/webhooks.md#listen: one JSON object per event; comments skipped). */
async function* serverSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<{ event: string; data: string }> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      if (data.length > 0) yield { event, data: data.join('\n') };
    }
  }
}

function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

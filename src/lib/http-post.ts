import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import type { Agent } from 'undici';

// One signed POST to a receiver with a real-time timeout: how a webhook attempt (src/domains/webhooks/webhooks.sender.ts)
// and a receiver check case (src/faults/receiver-check.service.ts) reach their URL directly. The timeout is a
// network limit in real time (docs/webhooks.md#delivery-rules: interface 6.1's 10 s by default), never business time.

// undici is loaded on the first POST, not at start-up (cold start: docs/benchmarks.md).
let undiciModule: typeof import('undici') | undefined;
function undici(): typeof import('undici') {
  undiciModule ??= createRequire(import.meta.url)('undici') as typeof import('undici');
  return undiciModule;
}

/** A connection pool for `postWithTimeout` (undici loads with the first one). */
export function newHttpAgent(options: { connections: number; pipelining?: number }): Agent {
  return new (undici().Agent)(options);
}

export interface PostRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface PostOptions {
  /** Real ms before the answer's status line; past it the POST fails as a timeout. */
  timeoutMs: number;
  /** Aborts the POST (a dispatcher's stop); it then fails with `abortReason`'s message. */
  signal?: AbortSignal;
  abortReason?: string;
  /** Of the answer's body, the first `keepBytes` are kept as text, reading at most `readBytes` (default `keepBytes`). */
  keepBytes: number;
  readBytes?: number;
}

/** What came back: a status (any, 2xx or not) or, with status null, why none did. */
export interface PostAnswer {
  status: number | null;
  /** The kept start of the answer's body; null when empty or none. */
  body: string | null;
  /** null when a status came back; else "no answer within N ms (timeout)" or the network error. */
  error: string | null;
  /** Real ms to the status line, or to the failure. */
  latencyMs: number;
}

/** POST once and answer what came back; never throws for what the receiver or the network does. */
export async function postWithTimeout(agent: Agent, request: PostRequest, options: PostOptions): Promise<PostAnswer> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  // One controller per POST, aborted by the timeout or by the caller's signal. (Not AbortSignal.any: on Node 20
  // every derived signal stays attached to a long-lived signal.)
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error('timeout'));
  }, options.timeoutMs);
  const onAbort = () => controller.abort(new Error(options.abortReason ?? 'aborted'));
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const response = await undici().request(request.url, {
      method: 'POST',
      headers: request.headers,
      body: request.body,
      signal: controller.signal,
      dispatcher: agent,
      // belts and braces; the timer above fires first and names the failure a timeout
      headersTimeout: options.timeoutMs + 1000,
      bodyTimeout: options.timeoutMs + 1000,
    });
    const latencyMs = elapsed();
    const body = await readAnswerPreview(response.body, options.keepBytes, options.readBytes);
    return { status: response.statusCode, body, error: null, latencyMs };
  } catch (error) {
    const message = timedOut ? `no answer within ${options.timeoutMs} ms (timeout)` : describeNetworkError(error);
    return { status: null, body: null, error: message, latencyMs: elapsed() };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * The first `keepBytes` of an answer's body as text (null when empty), reading at most `readBytes` before the
 * stream is let go.
 */
async function readAnswerPreview(body: AsyncIterable<Buffer> & { destroy(): unknown }, keepBytes: number, readBytes = keepBytes): Promise<string | null> {
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

function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  const code = (error as { code?: string }).code ?? (cause as { code?: string } | undefined)?.code;
  const message = error.message || (cause instanceof Error ? cause.message : '');
  return code && !message.includes(code) ? `${code}: ${message}` : message || code || 'network error';
}

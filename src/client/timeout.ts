// The kit's default timeout (docs/clients.md#timeouts): every request but the forwarding stream's body is bounded, so a
// server that accepts a connection and never answers (a wedged container, a fault rule's long latency) fails a test
// with a message instead of holding it for undici's 300 s. 60 s, as the Go kit's DefaultTimeout.

/** How long a call may take, in real ms, unless the client's `timeoutMs` says otherwise. */
export const DEFAULT_TIMEOUT_MS = 60_000;

/** A call that had no (whole) answer within the client's `timeoutMs`. */
export class SandboxTimeoutError extends Error {
  constructor(
    readonly what: string,
    readonly timeoutMs: number,
  ) {
    super(`${what}: no answer within ${timeoutMs} ms (the client's timeoutMs, docs/clients.md#timeouts)`);
    this.name = 'SandboxTimeoutError';
  }
}

/**
 * A signal that aborts with a SandboxTimeoutError after `ms` (none when `ms` is Infinity), or with `signal`'s reason
 * when that aborts first. `done()` lets go of the timer and of `signal` (call it once the answer was read).
 */
export function timeoutSignal(what: string, ms: number, signal?: AbortSignal): { signal: AbortSignal; done(): void } {
  const controller = new AbortController();
  const follow = () => controller.abort(signal?.reason);
  if (signal?.aborted) follow();
  else signal?.addEventListener('abort', follow, { once: true });
  const timer = Number.isFinite(ms) ? setTimeout(() => controller.abort(new SandboxTimeoutError(what, ms)), ms) : undefined;
  timer?.unref();
  return {
    signal: controller.signal,
    done: () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', follow);
    },
  };
}

/** The timeout for one call: the client's, or the default; a negative or NaN one is a mistake worth a clear error. */
export function timeoutOf(ms: number | undefined): number {
  if (ms === undefined) return DEFAULT_TIMEOUT_MS;
  if (!(ms > 0)) throw new RangeError(`timeoutMs must be a positive number of milliseconds (Infinity: no timeout), not ${String(ms)}`);
  return ms;
}

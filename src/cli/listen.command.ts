import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { performance } from 'node:perf_hooks';

// `service-sandbox listen --forward-to URL` (docs/cli.md#listen, docs/webhooks.md#listen): webhooks for an app the
// emulator cannot reach (the emulator in a container, the app on the host). The command connects OUT to the
// emulator's control plane and holds an event stream open; the emulator hands it every delivery attempt, signed
// for the forward-to URL's path, with the headers and bytes it would have sent; the command posts them to the
// app as they are and reports the app's answer back, so attempts, retries, the delivery log and webhook chaos
// behave as with direct delivery. Exit 2 on bad usage or a refusal of the emulator; otherwise it runs until
// interrupted, reconnecting when the stream drops.

const USAGE = 'usage: service-sandbox listen --forward-to URL [--url SANDBOX_URL] [--session ID] [--admin-token TOKEN] [--json]';
const VALUE_OPTIONS = ['forward-to', 'url', 'session', 'admin-token'] as const;
type ValueOption = (typeof VALUE_OPTIONS)[number];

/** How long the command waits before connecting again after the stream dropped. */
const RECONNECT_MS = 1000;
/** The first bytes of the app's answer reported to the emulator (the delivery log keeps 1 KiB). */
const ANSWER_BYTES_REPORTED = 4096;

class UsageError extends Error {}

interface ListenArguments {
  forwardTo: string;
  base: string;
  adminToken: string | undefined;
  json: boolean;
}

/** One delivery attempt as the emulator hands it over (docs/webhooks.md#listen). */
interface ForwardedAttempt {
  attemptId: string;
  deliveryId: string | null;
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}

interface ForwardResult {
  status: number | null;
  responseBody: string | null;
  error: string | null;
  latencyMs: number;
}

function isHttpUrl(value: string): boolean {
  return /^https?:\/\//.test(value) && URL.canParse(value);
}

function parseArguments(argv: string[], env: NodeJS.ProcessEnv): ListenArguments {
  const options: Partial<Record<ValueOption, string>> = {};
  let json = false;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    if (arg === '--json') {
      json = true;
      continue;
    }
    const name = arg.startsWith('--') ? arg.slice(2) : '';
    if (!(VALUE_OPTIONS as readonly string[]).includes(name)) throw new UsageError(`unknown argument ${arg}; ${USAGE.slice('usage: '.length)}`);
    const value = argv[i + 1];
    if (value === undefined) throw new UsageError(`${arg} needs a value`);
    options[name as ValueOption] = value;
    i += 1;
  }
  const forwardTo = options['forward-to'];
  if (!forwardTo) throw new UsageError(`--forward-to is required; ${USAGE.slice('usage: '.length)}`);
  if (!isHttpUrl(forwardTo)) throw new UsageError(`--forward-to "${forwardTo}": accepts an http:// or https:// URL, such as http://127.0.0.1:3000/webhooks`);
  const url = (options.url ?? env.SANDBOX_URL ?? 'http://127.0.0.1:4010').replace(/\/+$/, '');
  if (!isHttpUrl(url)) throw new UsageError(`--url / SANDBOX_URL "${url}": accepts the emulator's http:// or https:// address, such as http://127.0.0.1:4010`);
  const session = options.session;
  if (session !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(session)) throw new UsageError(`--session "${session}": accepts a session id such as ses_5f0c1a9e2b7d4c31`);
  return {
    forwardTo,
    base: session ? `${url}/_sessions/${session}` : url,
    adminToken: options['admin-token'] ?? env.ADMIN_TOKEN,
    json,
  };
}

/** POST the attempt to the app with exactly its headers and bytes (node:http adds only Host and Connection); `url` is the
 * forward-to URL, with the query the emulator sent it with, if any (the receiver check's query-string case). */
function forward(attempt: ForwardedAttempt, forwardTo: string): Promise<ForwardResult> {
  const started = performance.now();
  const target = new URL(forwardTo);
  const body = Buffer.from(attempt.body, 'utf8');
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: Omit<ForwardResult, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      resolve({ ...result, latencyMs: Math.round((performance.now() - started) * 10) / 10 });
    };
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const outgoing = send(target, { method: 'POST', headers: { ...attempt.headers, 'content-length': String(body.length) } }, (answer) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      answer.on('data', (chunk: Buffer) => {
        if (bytes < ANSWER_BYTES_REPORTED) chunks.push(chunk);
        bytes += chunk.length;
      });
      answer.on('end', () => {
        const text = Buffer.concat(chunks).subarray(0, ANSWER_BYTES_REPORTED).toString('utf8');
        finish({ status: answer.statusCode ?? null, responseBody: text === '' ? null : text, error: null });
      });
      answer.on('error', () => finish({ status: answer.statusCode ?? null, responseBody: null, error: null }));
    });
    outgoing.setTimeout(attempt.timeoutMs, () => {
      outgoing.destroy();
      finish({ status: null, responseBody: null, error: `no answer within ${attempt.timeoutMs} ms (timeout)` });
    });
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      finish({ status: null, responseBody: null, error: error.code ? `${error.code}: ${error.message}` : error.message });
    });
    outgoing.end(body);
  });
}

/** The line printed for one delivery: time, event type, event id, the app's status (or error) and latency. */
function lineOf(attempt: ForwardedAttempt, result: ForwardResult): string {
  let eventId = '-';
  try {
    eventId = (JSON.parse(attempt.body) as { metadata?: { eventId?: string } }).metadata?.eventId ?? '-';
  } catch {
    // a body that is not JSON (never sent by the emulator) is forwarded all the same
  }
  const outcome = result.status !== null ? `-> ${result.status}` : `-> failed (${result.error})`;
  return `${new Date().toISOString()}  ${attempt.headers['x-service-event-type'] ?? '-'}  ${eventId}  ${outcome}  ${result.latencyMs} ms\n`;
}

/** Read `data:` events of a text/event-stream body (docs/webhooks.md#listen: one JSON object per event). */
async function* serverSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<{ event: string; data: string }> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
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

class RefusedError extends Error {}
/** The relay was stopped or taken over: the command ends (exit 0) instead of connecting again. */
class StoppedError extends Error {}

/** One connection: returns when the stream ends; throws RefusedError when the emulator refuses the listener. */
async function listenOnce(args: ListenArguments, signal: AbortSignal, say: (line: string) => void): Promise<void> {
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (args.adminToken) headers['x-admin-token'] = args.adminToken;
  const streamUrl = `${args.base}/_emulator/webhooks/listen/stream?forwardTo=${encodeURIComponent(args.forwardTo)}`;
  const response = await fetch(streamUrl, { headers, signal });
  if (!response.ok || !response.body) {
    const text = await response.text().catch(() => '');
    let message = text;
    try {
      message = (JSON.parse(text) as { message?: string }).message ?? text;
    } catch {
      // not the error body: the text as it came
    }
    const refusal = `${args.base} refused the listener: ${response.status} ${message}`;
    // a 4xx will not change by itself (unknown session, admin token, bad URL); a 5xx or proxy error may
    if (response.status >= 400 && response.status < 500) throw new RefusedError(refusal);
    throw new Error(refusal);
  }
  for await (const { event, data } of serverSentEvents(response.body)) {
    const payload = JSON.parse(data) as Record<string, unknown>;
    if (event === 'ready') {
      say(`Ready: webhooks of ${args.base} go to ${args.forwardTo} (listener ${String(payload.listenerId)}); Ctrl+C to stop\n`);
      continue;
    }
    if (event === 'closed' || event === 'replaced') {
      say(`${new Date().toISOString()}  the emulator ended the stream: ${event === 'replaced' ? `another listener (${String(payload.by)}) took over` : String(payload.reason)}\n`);
      if (event === 'replaced' || payload.reconnect === false) throw new StoppedError();
      return;
    }
    if (event !== 'attempt') continue;
    const attempt = payload as unknown as ForwardedAttempt;
    // each attempt on its own: a slow app answer does not hold back the next delivery (the emulator limits how many)
    void forward(attempt, attempt.url).then(async (result) => {
      say(args.json ? `${JSON.stringify({ at: new Date().toISOString(), eventType: attempt.headers['x-service-event-type'] ?? null, deliveryId: attempt.deliveryId, ...result })}\n` : lineOf(attempt, result));
      const reportHeaders: Record<string, string> = { 'content-type': 'application/json' };
      if (args.adminToken) reportHeaders['x-admin-token'] = args.adminToken;
      await fetch(`${args.base}/_emulator/webhooks/listen/${encodeURIComponent(String(payload.listenerId))}/results`, {
        method: 'POST',
        headers: reportHeaders,
        body: JSON.stringify({ attemptId: attempt.attemptId, ...result }),
        signal,
      }).catch(() => undefined); // the stream dropped meanwhile: the emulator counts the attempt as failed
    });
  }
}

export async function listenCommand(argv: string[], env: NodeJS.ProcessEnv, signal: AbortSignal): Promise<number> {
  let args: ListenArguments;
  try {
    args = parseArguments(argv, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`service-sandbox listen: ${error.message}\n`);
    return 2;
  }
  const say = (line: string) => process.stdout.write(line);
  while (!signal.aborted) {
    try {
      await listenOnce(args, signal, say);
      if (!signal.aborted) process.stderr.write(`service-sandbox listen: the emulator closed the stream; connecting again\n`);
    } catch (error) {
      if (signal.aborted) break;
      if (error instanceof StoppedError) return 0;
      if (error instanceof RefusedError) {
        process.stderr.write(`service-sandbox listen: ${error.message}\n`);
        return 2;
      }
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      process.stderr.write(`service-sandbox listen: cannot reach ${args.base} (${cause ?? (error as Error).message}); connecting again in ${RECONNECT_MS / 1000} s\n`);
    }
    await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
  }
  return 0;
}

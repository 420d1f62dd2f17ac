import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkWebhookSignature, DEFAULT_WEBHOOK_TOLERANCE_MS } from '../webhook-verify.js';
import type { components } from './generated/openapi.js';

// A webhook receiver for tests (docs/clients.md#typescript), the one the Python, Go and Java kits ship too: an HTTP
// server on 127.0.0.1 that verifies every delivery with checkWebhookSignature (docs/webhooks.md), refuses what is not
// genuine with a 401 (so the emulator retries it), and dedupes on metadata.eventId: a retry, a replay or a chaos
// duplicate is acknowledged and set aside, each event is kept once (docs/faults.md#webhook-chaos). Everything is
// recorded before the answer is sent, so once settle has answered the lists hold every attempt it made. It judges a
// request by the rules every kit's receiver follows, in their order (docs/clients.md#receivers-one-rule-set).

/** A delivery's body: the transaction event of docs/webhooks.md. */
export type WebhookEvent = components['schemas']['TransactionWebhookEvent'];

/** The webhook key of a session (`session.credentials.webhook`) or of the server's fixtures. */
export interface WebhookKey {
  apiKey: string;
  secret: string;
}

export interface RejectedDelivery {
  /**
   * `METHOD` (not a POST), `BAD_REQUEST` (a request node:http could not read, such as a bad Content-Length: answered
   * 400), checkWebhookSignature's reason (`MISSING_HEADER`, `MALFORMED_TIMESTAMP`, ...), `UNKNOWN_KEY` for another
   * X-Service-Api-Key, `NOT_JSON` for a body that is not an event.
   */
  reason: string;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
}

export interface WebhookReceiverOptions {
  /** The key deliveries must be signed with; else give it with `expect(key)` before the first delivery. */
  key?: WebhookKey;
  /** The path of the URL (default `/webhooks`): what the signature covers. */
  path?: string;
  /** A port (default: a free one). */
  port?: number;
  /** Largest accepted |now - X-Service-Timestamp| in real ms (default 5 minutes). */
  toleranceMs?: number;
  /** A connection that sends nothing for this long (real ms) is closed (default 10 s). */
  idleTimeoutMs?: number;
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:{port}{path}`: a session's `webhookUrl`, or `listen --forward-to`. */
  readonly url: string;
  /** Each event once, in arrival order. */
  readonly events: WebhookEvent[];
  /** Genuine deliveries of an eventId already kept (acknowledged with 200, not kept again). */
  readonly duplicates: WebhookEvent[];
  /** Deliveries refused with 401. */
  readonly rejected: RejectedDelivery[];
  /** Verify with this key from now on (a session created with this receiver's URL: `session.credentials.webhook`). */
  expect(key: WebhookKey): void;
  /** The events of one transaction, in arrival order. */
  forTransaction(transactionId: string): WebhookEvent[];
  close(): Promise<void>;
}

/** How long a connection may send nothing before it is closed (docs/clients.md#receivers-one-rule-set, rule 2). */
const IDLE_TIMEOUT_MS = 10_000;

/** Start a verifying, deduplicating receiver on 127.0.0.1. */
export async function startWebhookReceiver(options: WebhookReceiverOptions = {}): Promise<WebhookReceiver> {
  const path = options.path ?? '/webhooks';
  let key = options.key;
  const events: WebhookEvent[] = [];
  const duplicates: WebhookEvent[] = [];
  const rejected: RejectedDelivery[] = [];
  const seen = new Set<string>();

  const server = await serveDeliveries({
    ...options,
    path,
    keyFor: (apiKey) => (key && key.apiKey === apiKey ? key : undefined),
    onRejected: ({ reason, headers, rawBody }) => void rejected.push({ reason, headers, rawBody }),
    onGenuine: ({ event }) => {
      if (seen.has(event.metadata.eventId)) duplicates.push(event);
      else {
        seen.add(event.metadata.eventId);
        events.push(event);
      }
      return 200; // a duplicate too: 200, as every kit's receiver (docs/clients.md#typescript)
    },
  });

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    events,
    duplicates,
    rejected,
    expect: (next) => {
      key = next;
    },
    forTransaction: (transactionId) => events.filter((event) => event.transaction.id === transactionId),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A request judged by the rules: what it was sent to, with, and the bytes of its body. */
export interface JudgedRequest {
  /** The request's target as sent (`/webhooks`, `/webhooks?x=1`); empty for a request node:http could not read. */
  url: string;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
}

/** What the receivers' server is told (internal: startWebhookReceiver and the test kit's inbox, src/testkit). */
export interface DeliveryServerOptions {
  port?: number;
  /** The path the signature is checked over. */
  path: string;
  /** The key of an X-Service-Api-Key the receiver expects, else undefined (rule 5). */
  keyFor(apiKey: string): WebhookKey | undefined;
  toleranceMs?: number;
  idleTimeoutMs?: number;
  /** A refusal, with its reason, before it is answered (401; 400 for `BAD_REQUEST`). */
  onRejected(rejection: JudgedRequest & { reason: string }): void;
  /** A genuine delivery, before it is answered: the 2xx status to answer it with. */
  onGenuine(delivery: JudgedRequest & { event: WebhookEvent }): number;
}

/**
 * An HTTP server on 127.0.0.1 that judges every request by docs/clients.md#receivers-one-rule-set, in its order (the
 * first rule that applies gives the answer), records it through the callbacks, then answers. Every refusal is an
 * answer, never a dropped connection; only a connection that sends nothing is closed.
 */
export async function serveDeliveries(options: DeliveryServerOptions): Promise<Server> {
  const judge = (method: string | undefined, headers: IncomingHttpHeaders, rawBody: Buffer): { reason: string } | { event: WebhookEvent } => {
    // 1. a POST only
    if (method !== 'POST') return { reason: 'METHOD' };
    // 3. without the spaces and tabs around them (node:http trims them too); a header sent twice arrives joined with
    // ", " by node:http, and so fails as malformed below
    const header = (name: string) => {
      const value = headers[name];
      return (Array.isArray(value) ? value.join(', ') : (value ?? '')).replace(/^[ \t]+|[ \t]+$/g, '');
    };
    const apiKey = header('x-service-api-key');
    const timestamp = header('x-service-timestamp');
    const signature = header('x-service-signature');
    // 4. before the key: a request with no headers at all is missing them, not signed with another key
    if (!apiKey || !timestamp || !signature) return { reason: 'MISSING_HEADER' };
    // 5.
    const key = options.keyFor(apiKey);
    if (!key) return { reason: 'UNKNOWN_KEY' };
    // 6.
    const verdict = checkWebhookSignature({
      apiKey,
      secret: key.secret,
      timestamp,
      signature,
      path: options.path,
      rawBody,
      toleranceMs: options.toleranceMs ?? DEFAULT_WEBHOOK_TOLERANCE_MS,
    });
    if (!verdict.valid) return { reason: verdict.reason };
    // 7. a JSON object with a non-empty string metadata.eventId
    try {
      const event = JSON.parse(rawBody.toString('utf8')) as unknown;
      const eventId = (event as { metadata?: { eventId?: unknown } } | null)?.metadata?.eventId;
      return typeof event === 'object' && event !== null && !Array.isArray(event) && typeof eventId === 'string' && eventId !== ''
        ? { event: event as WebhookEvent }
        : { reason: 'NOT_JSON' };
    } catch {
      return { reason: 'NOT_JSON' };
    }
  };

  const server = createServer((request, response) => {
    // 2. the body whole, whatever its framing (node:http reads Content-Length and chunked bodies alike)
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const judged: JudgedRequest = { url: request.url ?? '', headers: request.headers, rawBody: Buffer.concat(chunks) };
      const verdict = judge(request.method, judged.headers, judged.rawBody);
      if ('reason' in verdict) {
        options.onRejected({ ...judged, reason: verdict.reason });
        response.writeHead(401).end();
        return;
      }
      // 8.
      response.writeHead(options.onGenuine({ ...judged, event: verdict.event })).end();
    });
  });
  // 2. a request node:http cannot read (a Content-Length that is not a number, or is negative; a malformed request
  // line) is answered 400 and kept, never a dropped connection; one that sends nothing for 10 s is closed
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    if (error.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return void socket.end('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
    options.onRejected({ url: '', headers: {}, rawBody: Buffer.alloc(0), reason: 'BAD_REQUEST' });
    socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  });
  server.timeout = options.idleTimeoutMs ?? IDLE_TIMEOUT_MS; // no 'timeout' listener: node:http destroys the idle socket
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  return server;
}

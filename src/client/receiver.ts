import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkWebhookSignature, DEFAULT_WEBHOOK_TOLERANCE_MS } from '../webhook-verify.js';
import type { components } from './generated/openapi.js';

// A webhook receiver for tests (docs/clients.md#typescript), the one the Python, Go and Java kits ship too: an HTTP
// server on 127.0.0.1 that verifies every delivery with checkWebhookSignature (docs/webhooks.md), refuses what is not
// genuine with a 401 (so the emulator retries it), and dedupes on metadata.eventId: a retry, a replay or a chaos
// duplicate is acknowledged and set aside, each event is kept once (docs/faults.md#webhook-chaos). Everything is
// recorded before the answer is sent, so once settle has answered the lists hold every attempt it made.

/** A delivery's body: the transaction event of docs/webhooks.md. */
export type WebhookEvent = components['schemas']['TransactionWebhookEvent'];

/** The webhook key of a session (`session.credentials.webhook`) or of the server's fixtures. */
export interface WebhookKey {
  apiKey: string;
  secret: string;
}

export interface RejectedDelivery {
  /** checkWebhookSignature's reason, `UNKNOWN_KEY` for another X-Service-Api-Key, `NOT_JSON` for a body that is not an event. */
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

/** Start a verifying, deduplicating receiver on 127.0.0.1. */
export async function startWebhookReceiver(options: WebhookReceiverOptions = {}): Promise<WebhookReceiver> {
  const path = options.path ?? '/webhooks';
  let key = options.key;
  const events: WebhookEvent[] = [];
  const duplicates: WebhookEvent[] = [];
  const rejected: RejectedDelivery[] = [];
  const seen = new Set<string>();

  const judge = (headers: IncomingHttpHeaders, rawBody: Buffer): { reason: string } | { event: WebhookEvent } => {
    const header = (name: string) => (typeof headers[name] === 'string' ? (headers[name] as string) : undefined);
    const apiKey = header('x-service-api-key');
    if (!key || apiKey !== key.apiKey) return { reason: 'UNKNOWN_KEY' };
    const verdict = checkWebhookSignature({
      apiKey,
      secret: key.secret,
      timestamp: header('x-service-timestamp'),
      signature: header('x-service-signature'),
      path,
      rawBody,
      toleranceMs: options.toleranceMs ?? DEFAULT_WEBHOOK_TOLERANCE_MS,
    });
    if (!verdict.valid) return { reason: verdict.reason };
    try {
      const event = JSON.parse(rawBody.toString('utf8')) as WebhookEvent;
      return typeof event?.metadata?.eventId === 'string' ? { event } : { reason: 'NOT_JSON' };
    } catch {
      return { reason: 'NOT_JSON' };
    }
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      const verdict = request.method === 'POST' ? judge(request.headers, rawBody) : { reason: `METHOD ${request.method}` };
      if ('reason' in verdict) {
        rejected.push({ reason: verdict.reason, headers: request.headers, rawBody });
        response.writeHead(401).end();
        return;
      }
      const { event } = verdict;
      if (seen.has(event.metadata.eventId)) duplicates.push(event);
      else {
        seen.add(event.metadata.eventId);
        events.push(event);
      }
      response.writeHead(200).end(); // a duplicate too: 200, as every kit's receiver (docs/clients.md#typescript)
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
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

import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serveDeliveries, type WebhookKey } from '../client/receiver.js';
import { isPayoutTarget, signedHeaders } from '../client/signing.js';
import type { FaultRule, FaultRuleInput } from '../faults/fault-rules.schema.js';
import type { WebhookChaos, WebhookChaosInput } from '../faults/webhook-chaos.schema.js';

// What the in-process sandbox and the session mode of the test kit share (docs/test-kit.md): the credentials,
// the signed fetch and the attached webhook receiver, which verifies as every kit's receiver does
// (docs/clients.md#receivers-one-rule-set), so a forged delivery is refused and retried as a real app would make it.

export interface SandboxCredentials {
  programmeId: string;
  single: { apiKey: string; secret: string; userId: string };
  multi: { apiKey: string; secret: string };
  webhook: { apiKey: string; secret: string };
}

/** A genuine delivery the attached receiver acknowledged (204). */
export interface ReceivedWebhook {
  /** The request's target as sent (`/webhooks`). */
  path: string;
  headers: Record<string, string>;
  /** The body's bytes as they came (what the signature covers). */
  rawBody: Buffer;
  body: { transaction: Record<string, unknown>; metadata: Record<string, unknown> };
  receivedAt: number;
}

/** A request the attached receiver refused (401; 400 for `BAD_REQUEST`), and why. */
export interface RejectedWebhook {
  /** `METHOD`, `BAD_REQUEST`, `MISSING_HEADER`, `UNKNOWN_KEY`, the verifier's reason (`SIGNATURE_MISMATCH`, ...), `NOT_JSON`. */
  reason: string;
  path: string;
  headers: Record<string, string>;
  rawBody: Buffer;
  receivedAt: number;
}

export type SignedFetch = (method: string, path: string, body?: unknown, options?: { user?: string; apiKey?: string; secret?: string }) => Promise<Response>;

export interface WebhookInbox {
  /** Every genuine delivery, in arrival order (a duplicate or a retry of an event too). */
  received(): ReceivedWebhook[];
  /** Every refused request, in arrival order: a forged, stale or unsigned delivery is here, never in `received`. */
  rejected(): RejectedWebhook[];
  waitFor(predicate: (webhook: ReceivedWebhook) => boolean, timeoutMs?: number): Promise<ReceivedWebhook>;
  clear(): void;
}

/** What both kinds of sandbox offer a test. */
export interface SandboxClient {
  /** Base address: `http://127.0.0.1:53121`, or a session's `http://127.0.0.1:4010/_sessions/ses_...`. */
  url: string;
  credentials: SandboxCredentials;
  /** HMAC-signed fetch; `user` sets X-Service-User-Id and switches to the MULTI_USER key. */
  signedFetch: SignedFetch;
  /** Advance the emulated clock, running every job due by then (rail steps, reviews, retries). */
  advanceClock(ms: number): Promise<void>;
  /** Back to the start (fixtures or snapshot, and the start clock); forgets received webhooks. */
  reset(): Promise<void>;
  /** Save the whole state under a name (docs/control-plane.md#snapshots); the same name again replaces it. */
  snapshot(name: string): Promise<void>;
  /** Bring a saved state back, its clock included; forgets received webhooks, as reset does. */
  restore(name: string): Promise<void>;
  /**
   * Add a fault rule (docs/faults.md#fault-rules): matching API requests get latency, a 429/5xx, a closed
   * connection or an ambiguous failure. Answers the rule as `GET /_emulator/faults` lists it; a bad rule rejects
   * with the 400's message.
   */
  addFault(rule: FaultRuleInput): Promise<FaultRule>;
  /** Remove every fault rule. */
  clearFaults(): Promise<void>;
  /**
   * Replace the webhook chaos settings (docs/faults.md#webhook-chaos): duplicates, reordering, delays, stale or
   * future timestamps, bad signatures, bursts. `{}` or `clearWebhookChaos()` turns it off.
   */
  setWebhookChaos(settings: WebhookChaosInput): Promise<WebhookChaos>;
  clearWebhookChaos(): Promise<void>;
  webhooks: WebhookInbox;
  close(): Promise<void>;
}

/**
 * A fetch signed as the fixtures' keys, over the path of the URL as sent (a session's prefix included:
 * docs/sessions.md#addresses-and-signing), by the typed client's signing function (src/client/signing.ts,
 * docs/clients.md#typescript): HMAC mode, or the payout variant with a text/plain body on
 * /v1/payout-origination/* (docs/payouts.md#rules).
 */
export function signedFetcher(baseUrl: string, credentials: SandboxCredentials): SignedFetch {
  return (method, path, body, options = {}) => {
    const useMulti = options.user !== undefined && !options.apiKey;
    const apiKey = options.apiKey ?? (useMulti ? credentials.multi.apiKey : credentials.single.apiKey);
    const secret = options.secret ?? (useMulti ? credentials.multi.secret : credentials.single.secret);
    const payload = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
    const url = new URL(baseUrl + path);
    const target = url.pathname + url.search;
    const headers = signedHeaders({ key: { apiKey, secret, programmeId: credentials.programmeId }, method, target, body: payload });
    if (options.user) headers['X-Service-User-Id'] = options.user;
    if (body !== undefined) headers['Content-Type'] = isPayoutTarget(target) ? 'text/plain' : 'application/json';
    return fetch(url, { method, headers, body: body === undefined ? undefined : payload });
  };
}

/**
 * A webhook receiver on a random 127.0.0.1 port, keeping what it gets for the test to read. It verifies each delivery
 * with the keys given to `expect` (the fixtures' or the session's webhook keys) by the rules of every kit's receiver
 * (src/client/receiver.ts): a genuine one is answered 204 and kept in `received`, anything else 401 and kept in
 * `rejected`, so the emulator records a failed attempt and retries it, as with a real app.
 */
export async function startWebhookInbox(): Promise<WebhookInbox & { url: string; expect(keys: () => WebhookKey[]): void; close(): Promise<void> }> {
  const received: ReceivedWebhook[] = [];
  const rejected: RejectedWebhook[] = [];
  const waiters = new Set<() => void>();
  let keys: () => WebhookKey[] = () => [];
  const server = await serveDeliveries({
    path: '/webhooks',
    keyFor: (apiKey) => keys().find((key) => key.apiKey === apiKey),
    onRejected: ({ reason, url, headers, rawBody }) => void rejected.push({ reason, path: url, headers: plain(headers), rawBody, receivedAt: Date.now() }),
    onGenuine: ({ url, headers, rawBody, event }) => {
      received.push({ path: url, headers: plain(headers), rawBody, body: event as unknown as ReceivedWebhook['body'], receivedAt: Date.now() });
      for (const wake of waiters) wake();
      return 204;
    },
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    expect: (next) => {
      keys = next;
    },
    received: () => [...received],
    rejected: () => [...rejected],
    clear: () => {
      received.length = 0;
      rejected.length = 0;
    },
    waitFor(predicate, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = received.find(predicate);
          if (found) {
            cleanup();
            resolve(found);
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          const refused = rejected.length === 0 ? '' : `; refused ${rejected.length}: ${[...new Set(rejected.map((item) => item.reason))].join(', ')}`;
          reject(new Error(`no matching webhook within ${timeoutMs} ms (received ${received.length}${refused})`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The headers node:http gave, each as one string (a header sent twice is one value joined with ", "). */
function plain(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  return flat;
}

import { hexDigestsEqual, signRequest } from './lib/hmac.js';

// The transaction webhook's signature (interface 6.1), for both sides: the emulator's dispatcher signs with
// `signWebhook`, and receivers (users' apps and test suites) check deliveries with
// `verifyWebhookSignature`. Both are exported from the package (src/index.ts). The signature is the request
// signature of lib/hmac.ts (which needs nothing beyond node:crypto, so a receiver can import this without
// pulling in the server), over POST and the URL's path.

/** Default accepted distance between X-Service-Timestamp and the receiver's clock. */
export const DEFAULT_WEBHOOK_TOLERANCE_MS = 5 * 60 * 1000;

export interface SignWebhookInput {
  /** The webhook API key (X-Service-Api-Key). */
  apiKey: string;
  /** The webhook secret paired with that key. */
  secret: string;
  /** X-Service-Timestamp as sent: milliseconds since the Unix epoch, digits only. */
  timestamp: string;
  /** Path of the webhook URL; a query string, if present, is ignored (interface 6.1). */
  path: string;
  /** The request body, byte for byte. */
  rawBody: string | Uint8Array;
}

/**
 * Lowercase hex HMAC-SHA256, keyed with the webhook secret, of apiKey + timestamp + `POST` + URL path (no
 * query string) + raw body, concatenated with no separators (interface 6.1).
 */
export function signWebhook(input: SignWebhookInput): string {
  const { apiKey, secret, timestamp, rawBody } = input;
  return signRequest({ apiKey, secret, timestamp, method: 'POST', target: pathWithoutQuery(input.path), body: rawBody });
}

export interface VerifyWebhookInput {
  /** X-Service-Api-Key of the delivery (use it to pick the secret when you hold several). */
  apiKey: string | undefined;
  secret: string;
  /** X-Service-Timestamp of the delivery. */
  timestamp: string | undefined;
  /** Path the delivery was posted to, e.g. `/webhooks` (`request.url` is fine: the query is dropped). */
  path: string;
  /** The raw request body, before any JSON parsing. */
  rawBody: string | Uint8Array;
  /** X-Service-Signature of the delivery. */
  signature: string | undefined;
  /** Largest accepted |now - timestamp| in ms (default 5 minutes); `Infinity` disables the check. */
  toleranceMs?: number;
  /** The receiver's clock in epoch ms (default `Date.now()`). */
  nowMs?: number;
}

export type WebhookVerificationResult =
  | { valid: true }
  | { valid: false; reason: 'MISSING_HEADER' | 'MALFORMED_TIMESTAMP' | 'TIMESTAMP_OUT_OF_TOLERANCE' | 'MALFORMED_SIGNATURE' | 'SIGNATURE_MISMATCH' };

/** Like `verifyWebhookSignature`, with the reason when a delivery is rejected. */
export function checkWebhookSignature(input: VerifyWebhookInput): WebhookVerificationResult {
  const { apiKey, timestamp, signature } = input;
  if (!apiKey || !timestamp || !signature) return { valid: false, reason: 'MISSING_HEADER' };
  if (!/^[0-9]{1,16}$/.test(timestamp)) return { valid: false, reason: 'MALFORMED_TIMESTAMP' };
  const tolerance = input.toleranceMs ?? DEFAULT_WEBHOOK_TOLERANCE_MS;
  const now = input.nowMs ?? Date.now();
  if (Math.abs(now - Number(timestamp)) > tolerance) return { valid: false, reason: 'TIMESTAMP_OUT_OF_TOLERANCE' };
  if (!/^[0-9a-fA-F]{64}$/.test(signature)) return { valid: false, reason: 'MALFORMED_SIGNATURE' };
  const expected = signWebhook({ apiKey, secret: input.secret, timestamp, path: input.path, rawBody: input.rawBody });
  return hexDigestsEqual(expected, signature) ? { valid: true } : { valid: false, reason: 'SIGNATURE_MISMATCH' };
}

/**
 * True when a delivery carries a valid signature over exactly this body and path, and its timestamp is
 * within `toleranceMs` of the receiver's clock. Comparison is constant-time.
 */
export function verifyWebhookSignature(input: VerifyWebhookInput): boolean {
  return checkWebhookSignature(input).valid;
}

function pathWithoutQuery(path: string): string {
  const query = path.indexOf('?');
  return query === -1 ? path : path.slice(0, query);
}

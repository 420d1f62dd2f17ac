import { createHmac, timingSafeEqual } from 'node:crypto';

// HMAC helpers shared by request authentication (interface 5.2, docs/authentication.md), webhook signing
// (interface 6.1) and statement links (docs/decisions.md#statement-links).

export function hmacSha256Hex(secret: string, ...parts: Array<string | Uint8Array>): string {
  const mac = createHmac('sha256', secret);
  for (const part of parts) mac.update(part);
  return mac.digest('hex');
}

/** Constant-time comparison of two hex digests; case-insensitive, false on any length mismatch. */
export function hexDigestsEqual(expectedHex: string, givenHex: string): boolean {
  if (!/^[0-9a-fA-F]+$/.test(givenHex) || givenHex.length !== expectedHex.length) return false;
  const a = Buffer.from(expectedHex.toLowerCase(), 'hex');
  const b = Buffer.from(givenHex.toLowerCase(), 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The canonical request string (docs/decisions.md#hmac-canonical-string): apiKey + timestamp as sent + upper-case
 * method + request target (path and `?query` exactly as sent) + raw body bytes, with no separators.
 */
export function canonicalRequest(apiKey: string, timestamp: string, method: string, target: string, body: Uint8Array | string): Buffer {
  const head = Buffer.from(`${apiKey}${timestamp}${method.toUpperCase()}${target}`, 'utf8');
  const raw = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  return Buffer.concat([head, raw]);
}

/** Sign a request the way a client must (used by the sign CLI, the test kit and tests). */
export function signRequest(input: {
  apiKey: string;
  secret: string;
  timestamp: string;
  method: string;
  target: string;
  body?: Uint8Array | string;
}): string {
  return hmacSha256Hex(input.secret, canonicalRequest(input.apiKey, input.timestamp, input.method, input.target, input.body ?? ''));
}

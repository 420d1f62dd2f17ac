import type { Middleware } from 'openapi-fetch';
import { signRequest } from '../lib/hmac.js';

// Request signing for clients (docs/clients.md#typescript), both variants of docs/authentication.md:
// - HMAC mode: X-Service-Timestamp in epoch milliseconds, X-Service-Signature the bare lower-case hex;
// - the payout variant on /v1/payout-origination/* (docs/payouts.md#rules): an RFC 3339 timestamp and
//   `sha256=<hex>`.
// Both sign apiKey + timestamp + METHOD + path?query as sent + raw body (lib/hmac.ts canonicalRequest), a session's
// `/_sessions/{id}` prefix included (docs/sessions.md#addresses-and-signing). The typed client, the in-process test
// kit (src/testkit/kit-parts.ts) and any generator's fetch hook use the one function here, `signedHeaders`.

/** An API key of a programme, what a signed request is made with. */
export interface SigningKey {
  apiKey: string;
  secret: string;
  /** X-Service-Program-Id: the programme the key belongs to. */
  programmeId: string;
}

/** The default fixtures' SINGLE_USER key (docs/authentication.md), the one most examples sign with. */
export const DEFAULT_SINGLE_KEY: SigningKey = { apiKey: 'pk_sandbox_single', secret: 'sk_sandbox_single_secret', programmeId: 'prg_sandbox' };
/** The default fixtures' MULTI_USER key: send X-Service-User-Id with it. */
export const DEFAULT_MULTI_KEY: SigningKey = { apiKey: 'pk_sandbox_multi', secret: 'sk_sandbox_multi_secret', programmeId: 'prg_sandbox' };

const PAYOUT_PATH = '/v1/payout-origination/';
const SESSION_PREFIX = /^\/_sessions\/[^/?]+/;

/** True for a target the payout variant signs: `/v1/payout-origination/...`, under a session's prefix too. */
export function isPayoutTarget(target: string): boolean {
  return target.replace(SESSION_PREFIX, '').startsWith(PAYOUT_PATH);
}

/** True for a target of the control plane (`/_emulator/...`, a session's too), which takes no HMAC signature. */
export function isControlPlaneTarget(target: string): boolean {
  return target.replace(SESSION_PREFIX, '').startsWith('/_emulator/');
}

export interface SignInput {
  key: SigningKey;
  method: string;
  /** The request target as sent: path and `?query`, a session's prefix included. */
  target: string;
  /** The body byte for byte ('' or absent for none). */
  body?: string | Uint8Array;
  /** The signing time in epoch ms (default `Date.now()`). */
  nowMs?: number;
}

/**
 * The four X-Service-* headers of a signed request: the payout variant for a payout target, HMAC mode
 * otherwise. X-Service-User-Id is not signed, so it is the caller's to add.
 */
export function signedHeaders(input: SignInput): Record<string, string> {
  const { key, method, target } = input;
  const payout = isPayoutTarget(target);
  const now = input.nowMs ?? Date.now();
  const timestamp = payout ? new Date(now).toISOString() : String(now);
  const signature = signRequest({ apiKey: key.apiKey, secret: key.secret, timestamp, method, target, body: input.body ?? '' });
  return {
    'X-Service-Api-Key': key.apiKey,
    'X-Service-Timestamp': timestamp,
    'X-Service-Program-Id': key.programmeId,
    'X-Service-Signature': payout ? `sha256=${signature}` : signature,
  };
}

export interface SigningOptions {
  /** Sent as `Authorization: Bearer` on control-plane requests when the server runs with --admin-token. */
  adminToken?: string;
}

/**
 * Sign a fetch `Request` in place and return it: `/v1` requests get the X-Service-* headers over the URL's path as
 * sent and the body's bytes; a payout request also gets `Content-Type: text/plain` (docs/payouts.md#rules); a
 * control-plane request gets the admin token when one is given. Headers already there are replaced: the payout
 * operation declares them as parameters, so a typed call may carry placeholders (a request signed by hand on purpose
 * goes through a plain fetch).
 */
export async function signFetchRequest(request: Request, key: SigningKey, options: SigningOptions = {}): Promise<Request> {
  const url = new URL(request.url);
  const target = url.pathname + url.search;
  if (isControlPlaneTarget(target)) {
    if (options.adminToken && !request.headers.has('authorization')) request.headers.set('Authorization', `Bearer ${options.adminToken}`);
    return request;
  }
  const body = request.body === null ? new Uint8Array() : new Uint8Array(await request.clone().arrayBuffer());
  if (isPayoutTarget(target)) request.headers.set('Content-Type', 'text/plain');
  for (const [name, value] of Object.entries(signedHeaders({ key, method: request.method, target, body }))) request.headers.set(name, value);
  return request;
}

/** The openapi-fetch middleware (`client.use(signingMiddleware(key))`) that signs every request it sends. */
export function signingMiddleware(key: SigningKey, options: SigningOptions = {}): Middleware {
  return {
    onRequest: ({ request }) => signFetchRequest(request, key, options),
  };
}

/**
 * A `fetch` that signs what it sends: the hook for generators that take a fetch function (hey-api's
 * `fetch` option, orval's custom fetch mutator, swagger-typescript-api's `customFetch`, openapi-fetch's `fetch`).
 */
export function signingFetch(key: SigningKey, options: SigningOptions & { fetch?: typeof fetch } = {}): typeof fetch {
  const send = options.fetch ?? globalThis.fetch;
  return async (input, init) => send(await signFetchRequest(new Request(input, init), key, options));
}

import { signedHeaders, type SigningKey } from '../src/client/signing.js';
import { checkWebhookSignature, signWebhook } from '../src/webhook-verify.js';

// The signing and verification test vectors every kit runs (docs/clients.md#test-vectors):
// clients/signing-vectors.json, computed here by the reference implementation (src/client/signing.ts for requests,
// src/webhook-verify.ts for deliveries). scripts/signing-vectors.mjs writes the file (`--check` compares);
// test/kits/signing-vectors.test.ts fails when the committed file differs from what this gives.

const SINGLE: SigningKey = { apiKey: 'pk_sandbox_single', secret: 'sk_sandbox_single_secret', programmeId: 'prg_sandbox' };
const MULTI: SigningKey = { apiKey: 'pk_sandbox_multi', secret: 'sk_sandbox_multi_secret', programmeId: 'prg_sandbox' };
const WEBHOOK = { apiKey: 'wk_sandbox', secret: 'whsec_sandbox_secret' };
/** 2026-03-01T12:00:00.000Z, the kits' default frozen clock, plus 123 ms so a timestamp's milliseconds show. */
const NOW_MS = Date.UTC(2026, 2, 1, 12, 0, 0, 123);

interface RequestCase {
  name: string;
  why: string;
  key: SigningKey;
  method: string;
  target: string;
  body?: string;
  bodyBase64?: string;
}

const requestCases: RequestCase[] = [
  { name: 'get-no-body', why: 'HMAC mode: epoch-millisecond timestamp, bare lower-case hex', key: SINGLE, method: 'GET', target: '/v1/accounts' },
  {
    name: 'query-as-sent',
    why: 'the query is signed byte for byte as sent: order and percent-encoding kept, never re-encoded',
    key: SINGLE,
    method: 'GET',
    target: '/v1/transactions?pageSize=2&sortBy=createdAt&minCreatedAt=2026-03-01T00%3A00%3A00Z',
  },
  { name: 'lower-case-method', why: 'the method is upper-cased in the canonical string', key: MULTI, method: 'post', target: '/v1/auth/users', body: '{"type":"PERSON"}' },
  {
    name: 'utf8-body',
    why: 'a text body is signed as its UTF-8 bytes',
    key: MULTI,
    method: 'POST',
    target: '/v1/beneficiaries',
    body: '{"name":"Zoë Müller","note":"日本"}',
  },
  {
    name: 'binary-body',
    why: 'a body is signed as raw bytes, whatever they are',
    key: SINGLE,
    method: 'PUT',
    target: '/v1/users/usr_acme/documents',
    bodyBase64: Buffer.from([0x25, 0x50, 0x44, 0x46, 0x00, 0xff, 0xfe, 0x0a]).toString('base64'),
  },
  {
    name: 'session-prefix',
    why: "a session's /_sessions/{id} prefix is part of the signed target",
    key: SINGLE,
    method: 'GET',
    target: '/_sessions/ses_0123456789abcdef/v1/accounts?pageSize=1',
  },
  {
    name: 'payout',
    why: 'the payout variant: RFC 3339 timestamp with milliseconds (UTC, Z), signature sha256=<hex>',
    key: SINGLE,
    method: 'POST',
    target: '/v1/payout-origination/pacs008',
    body: 'PERvY3VtZW50Lz4=',
  },
  {
    name: 'payout-in-session',
    why: "the payout variant is chosen on the path after a session's prefix",
    key: SINGLE,
    method: 'POST',
    target: '/_sessions/ses_0123456789abcdef/v1/payout-origination/json',
    body: 'eyJhIjoxfQ==',
  },
  {
    name: 'payout-words-elsewhere',
    why: 'only a path that starts with /v1/payout-origination/ (after any session prefix) is a payout target',
    key: SINGLE,
    method: 'GET',
    target: '/v1/transactions?next=/v1/payout-origination/json',
  },
  {
    name: 'payout-words-deeper',
    why: 'a path that contains /v1/payout-origination/ further in is not a payout target',
    key: SINGLE,
    method: 'GET',
    target: '/v1/users/v1/payout-origination/x',
  },
];

const requests = requestCases.map((item) => {
  const body = item.bodyBase64 !== undefined ? Buffer.from(item.bodyBase64, 'base64') : (item.body ?? '');
  const headers = signedHeaders({ key: item.key, method: item.method, target: item.target, body, nowMs: NOW_MS });
  return {
    name: item.name,
    why: item.why,
    key: item.key,
    method: item.method,
    target: item.target,
    ...(item.bodyBase64 !== undefined ? { bodyBase64: item.bodyBase64 } : { body: item.body ?? '' }),
    nowMs: NOW_MS,
    variant: headers['X-Service-Signature']!.startsWith('sha256=') ? 'payout' : 'hmac',
    headers,
  };
});

interface WebhookCase {
  name: string;
  why: string;
  /** The path and body the receiver checks. */
  path: string;
  body: string;
  /** What the sender signed, when it differs from what is checked. */
  signed?: { path?: string; body?: string };
  /** X-Service-Timestamp as sent and signed, when it is not SENT_MS's digits. */
  timestamp?: string;
  /** What to change in the genuine headers. */
  headers?: (genuine: Record<string, string>) => Record<string, string>;
  nowMs?: number;
  toleranceMs?: number;
}

const BODY = '{"eventId":"evt_0123456789abcdef","eventType":"transaction_created","data":{"id":"txn_0123456789abcdef","amount":"10.00"}}';
const SENT_MS = NOW_MS - 1_000;
const without = (name: string) => (headers: Record<string, string>) => Object.fromEntries(Object.entries(headers).filter(([key]) => key !== name));

const webhookCases: WebhookCase[] = [
  { name: 'genuine', why: 'signed over apiKey + timestamp + POST + path + raw body', path: '/webhooks', body: BODY },
  { name: 'query-ignored', why: "the webhook URL's query string is not signed", path: '/webhooks?tenant=a', body: BODY },
  { name: 'upper-case-hex', why: 'hex digits compare case-insensitively', path: '/webhooks', body: BODY, headers: (h) => ({ ...h, 'X-Service-Signature': h['X-Service-Signature']!.toUpperCase() }) },
  { name: 'edge-of-tolerance', why: 'exactly toleranceMs away is still accepted', path: '/webhooks', body: BODY, nowMs: SENT_MS + 300_000 },
  { name: 'missing-signature', why: 'any of the three headers missing', path: '/webhooks', body: BODY, headers: without('X-Service-Signature') },
  { name: 'missing-api-key', why: 'any of the three headers missing', path: '/webhooks', body: BODY, headers: without('X-Service-Api-Key') },
  { name: 'malformed-timestamp', why: 'the timestamp is epoch milliseconds, digits only', path: '/webhooks', body: BODY, headers: (h) => ({ ...h, 'X-Service-Timestamp': '2026-03-01T12:00:00Z' }) },
  { name: 'too-old', why: 'more than toleranceMs (default 300000) from the receiver clock', path: '/webhooks', body: BODY, nowMs: SENT_MS + 300_001 },
  { name: 'too-new', why: 'the tolerance applies both ways', path: '/webhooks', body: BODY, nowMs: SENT_MS - 300_001 },
  { name: 'narrow-tolerance', why: 'a receiver may narrow the tolerance', path: '/webhooks', body: BODY, nowMs: SENT_MS + 1_001, toleranceMs: 1_000 },
  { name: 'malformed-signature', why: 'a signature is 64 hex digits (no sha256= prefix on webhooks)', path: '/webhooks', body: BODY, headers: (h) => ({ ...h, 'X-Service-Signature': `sha256=${h['X-Service-Signature']}` }) },
  { name: 'body-changed', why: 'one byte of the body changed after signing', path: '/webhooks', body: BODY.replace('10.00', '10.01'), signed: { body: BODY } },
  { name: 'other-path', why: 'the path the receiver was posted to is signed', path: '/hooks', body: BODY, signed: { path: '/webhooks' } },
  // the shape is checked before the number: a parser that reads the digits (and so takes leading zeros, or refuses a
  // long run) gives another verdict (docs/clients.md#receivers-one-rule-set, rule 6)
  { name: 'timestamp-17-digits', why: 'at most 16 digits: leading zeros do not make a longer timestamp valid (signed as sent)', path: '/webhooks', body: BODY, timestamp: `0000${SENT_MS}` },
  { name: 'timestamp-5000-digits', why: 'a timestamp far too long is malformed, not an error of the parser (signed as sent)', path: '/webhooks', body: BODY, timestamp: `${'0'.repeat(4987)}${SENT_MS}` },
  { name: 'signature-trailing-newline', why: 'exactly 64 hex digits with nothing after them, not even a line break', path: '/webhooks', body: BODY, headers: (h) => ({ ...h, 'X-Service-Signature': `${h['X-Service-Signature']}\n` }) },
];

const webhooks = webhookCases.map((item) => {
  const timestamp = item.timestamp ?? String(SENT_MS);
  const signature = signWebhook({ apiKey: WEBHOOK.apiKey, secret: WEBHOOK.secret, timestamp, path: item.signed?.path ?? item.path, rawBody: item.signed?.body ?? item.body });
  const genuine = { 'X-Service-Api-Key': WEBHOOK.apiKey, 'X-Service-Timestamp': timestamp, 'X-Service-Signature': signature };
  const headers = item.headers ? item.headers(genuine) : genuine;
  const nowMs = item.nowMs ?? NOW_MS;
  const toleranceMs = item.toleranceMs ?? 300_000;
  const result = checkWebhookSignature({
    apiKey: headers['X-Service-Api-Key'],
    secret: WEBHOOK.secret,
    timestamp: headers['X-Service-Timestamp'],
    signature: headers['X-Service-Signature'],
    path: item.path,
    rawBody: item.body,
    nowMs,
    toleranceMs,
  });
  return { name: item.name, why: item.why, secret: WEBHOOK.secret, path: item.path, body: item.body, headers, nowMs, toleranceMs, valid: result.valid, reason: result.valid ? null : result.reason };
});

/** The whole vectors file, as JSON text. */
export function signingVectors(): string {
  const file = {
    $comment: 'Generated by scripts/signing-vectors.mjs from the reference implementation; every kit runs these in its unit tests (docs/clients.md#test-vectors). Do not edit by hand.',
    requests,
    controlPlane: {
      why: 'control-plane targets (/_emulator/..., a session prefix allowed) are not HMAC-signed; with --admin-token the token goes in Authorization: Bearer',
      targets: ['/_emulator/clock', '/_sessions/ses_0123456789abcdef/_emulator/settle'],
      adminToken: 'admin-secret',
      headers: { Authorization: 'Bearer admin-secret' },
    },
    webhookReasons: ['MISSING_HEADER', 'MALFORMED_TIMESTAMP', 'TIMESTAMP_OUT_OF_TOLERANCE', 'MALFORMED_SIGNATURE', 'SIGNATURE_MISMATCH'],
    webhooks,
  };
  return `${JSON.stringify(file, null, 2)}\n`;
}

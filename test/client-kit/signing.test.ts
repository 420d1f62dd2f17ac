import { createHmac } from 'node:crypto';
import t from 'tap';
import { DEFAULT_SINGLE_KEY, isPayoutTarget, signedHeaders, signFetchRequest } from '../../src/client/index.js';

// The client's signing function (src/client/signing.ts, docs/clients.md#typescript) against the rules written out
// by hand: HMAC mode and the payout variant (docs/authentication.md, docs/payouts.md#rules), the path as sent with
// a session's prefix (docs/sessions.md#addresses-and-signing). test/client-kit/client-journey.test.ts shows the
// server accepts what it makes.

const key = DEFAULT_SINGLE_KEY;
const NOW = Date.parse('2026-03-01T12:00:00.000Z');
const hex = (text: string) => createHmac('sha256', key.secret).update(text).digest('hex');

t.test('HMAC mode: epoch milliseconds and bare hex over apiKey + timestamp + METHOD + path?query + body', async (t) => {
  const headers = signedHeaders({ key, method: 'get', target: '/_sessions/ses_0123456789abcdef/v1/accounts?pageSize=5', nowMs: NOW });
  t.same(headers, {
    'X-Service-Api-Key': 'pk_sandbox_single',
    'X-Service-Timestamp': String(NOW),
    'X-Service-Program-Id': 'prg_sandbox',
    'X-Service-Signature': hex(`pk_sandbox_single${NOW}GET/_sessions/ses_0123456789abcdef/v1/accounts?pageSize=5`),
  });
  const body = '{"amount":"1.00"}';
  t.equal(
    signedHeaders({ key, method: 'POST', target: '/v1/transaction-intents', body: Buffer.from(body), nowMs: NOW })['X-Service-Signature'],
    hex(`pk_sandbox_single${NOW}POST/v1/transaction-intents${body}`),
    'bytes sign as their text',
  );
});

t.test('the payout variant: RFC 3339 and sha256=, a session prefix included', async (t) => {
  const target = '/_sessions/ses_0123456789abcdef/v1/payout-origination/json';
  t.ok(isPayoutTarget(target));
  t.ok(isPayoutTarget('/v1/payout-origination/pacs008'));
  t.notOk(isPayoutTarget('/v1/payouts/json'));
  const headers = signedHeaders({ key, method: 'POST', target, body: 'eyJhIjoxfQ==', nowMs: NOW });
  t.equal(headers['X-Service-Timestamp'], '2026-03-01T12:00:00.000Z');
  t.equal(headers['X-Service-Signature'], `sha256=${hex(`pk_sandbox_single2026-03-01T12:00:00.000ZPOST${target}eyJhIjoxfQ==`)}`);
});

t.test('a fetch Request: /v1 signed, payout as text/plain, the control plane given the admin token, placeholders replaced', async (t) => {
  const signed = await signFetchRequest(new Request('http://127.0.0.1:4010/v1/accounts?pageSize=1'), key);
  t.match(signed.headers.get('x-service-signature'), /^[0-9a-f]{64}$/);
  const payout = await signFetchRequest(
    new Request('http://127.0.0.1:4010/_sessions/ses_0123456789abcdef/v1/payout-origination/json', { method: 'POST', body: 'eyJhIjoxfQ==', headers: { 'Content-Type': 'application/json' } }),
    key,
  );
  t.match(payout.headers.get('x-service-signature'), /^sha256=[0-9a-f]{64}$/);
  t.match(payout.headers.get('x-service-timestamp'), /^\d{4}-\d{2}-\d{2}T/);
  t.equal(payout.headers.get('content-type'), 'text/plain');
  t.equal(await payout.text(), 'eyJhIjoxfQ==', 'the body is still there to send');
  const control = await signFetchRequest(new Request('http://127.0.0.1:4010/_emulator/settle', { method: 'POST' }), key, { adminToken: 'tok' });
  t.equal(control.headers.get('authorization'), 'Bearer tok');
  t.equal(control.headers.get('x-service-signature'), null, 'the control plane takes no HMAC');
  const placeholders = await signFetchRequest(
    new Request('http://127.0.0.1:4010/v1/payout-origination/json', { method: 'POST', body: 'eyJhIjoxfQ==', headers: { 'X-Service-Signature': '-', 'X-Service-Timestamp': '-' } }),
    key,
  );
  t.match(placeholders.headers.get('x-service-signature'), /^sha256=[0-9a-f]{64}$/, 'the typed call\'s placeholder headers are replaced');
  t.not(placeholders.headers.get('x-service-timestamp'), '-');
});

import t from 'tap';
import { signWebhook, startWebhookReceiver } from '../../src/client/index.js';

// The client's webhook receiver (src/client/receiver.ts, docs/clients.md#typescript) fed by hand: what it keeps,
// sets aside and refuses, and why (docs/webhooks.md). test/client-kit/scenarios.test.ts shows it with the emulator.

const KEY = { apiKey: 'wk_sandbox', secret: 'whsec_sandbox_secret' };
const event = (eventId: string) =>
  JSON.stringify({ transaction: { id: 'txn_1', status: 'COMPLETED' }, metadata: { eventId, eventType: 'transaction_status_updated', programId: 'prg_sandbox' } });

/** POST a delivery to the receiver, signed with `secret` at `timestamp` (default: now) unless `signature` is given. */
async function deliver(url: string, body: string, options: { apiKey?: string; secret?: string; timestamp?: number; signature?: string; method?: string } = {}) {
  const apiKey = options.apiKey ?? KEY.apiKey;
  const timestamp = String(options.timestamp ?? Date.now());
  const signature = options.signature ?? signWebhook({ apiKey, secret: options.secret ?? KEY.secret, timestamp, path: new URL(url).pathname, rawBody: body });
  const method = options.method ?? 'POST';
  const answer = await fetch(url, {
    method,
    headers: { 'X-Service-Api-Key': apiKey, 'X-Service-Timestamp': timestamp, 'X-Service-Signature': signature, 'Content-Type': 'application/json' },
    ...(method === 'POST' ? { body } : {}),
  });
  return answer.status;
}

t.test('keeps each event once, acknowledges duplicates, refuses what is not genuine', async (t) => {
  const receiver = await startWebhookReceiver({ path: '/hooks' });
  t.teardown(() => receiver.close());
  t.match(receiver.url, /^http:\/\/127\.0\.0\.1:\d+\/hooks$/);

  t.equal(await deliver(receiver.url, event('evt_0')), 401, 'no key given yet: refused');
  receiver.expect(KEY);
  t.equal(await deliver(receiver.url, event('evt_1')), 200, 'genuine');
  t.equal(await deliver(receiver.url, event('evt_1')), 200, 'the same event again: acknowledged (200, as every kit)');
  t.equal(await deliver(receiver.url, event('evt_2'), { secret: 'not-the-secret' }), 401, 'signed with another secret');
  t.equal(await deliver(receiver.url, event('evt_2'), { timestamp: Date.now() - 600_000 }), 401, 'ten minutes old');
  t.equal(await deliver(receiver.url, event('evt_2'), { apiKey: 'wk_other' }), 401, 'another key');
  t.equal(await deliver(receiver.url, 'not json'), 401, 'a body that is no event');
  t.equal(await deliver(receiver.url, event('evt_2'), { method: 'PUT' }), 401, 'not a POST');
  t.equal(await deliver(receiver.url, event('evt_2')), 200);

  t.same(
    receiver.events.map((kept) => kept.metadata.eventId),
    ['evt_1', 'evt_2'],
    'each event once, in arrival order',
  );
  t.same(receiver.duplicates.map((kept) => kept.metadata.eventId), ['evt_1']);
  t.same(
    receiver.rejected.map((rejected) => rejected.reason),
    ['UNKNOWN_KEY', 'SIGNATURE_MISMATCH', 'TIMESTAMP_OUT_OF_TOLERANCE', 'UNKNOWN_KEY', 'NOT_JSON', 'METHOD PUT'],
  );
  t.equal(receiver.rejected[1]?.rawBody.toString('utf8'), event('evt_2'), 'the refused body as received');
  t.same(receiver.forTransaction('txn_1').length, 2);
  t.same(receiver.forTransaction('txn_2'), []);
});

t.test('a tolerance of its own', async (t) => {
  const receiver = await startWebhookReceiver({ key: KEY, toleranceMs: Infinity });
  t.teardown(() => receiver.close());
  t.match(receiver.url, /\/webhooks$/, 'the default path');
  t.equal(await deliver(receiver.url, event('evt_old'), { timestamp: Date.parse('2026-03-01T12:00:00.000Z') }), 200, 'any age accepted');
});

import t from 'tap';
import { startSandbox } from '../../../src/index.js';
import { checkWebhookSignatureForTest } from '../../helpers/testkit.js';

// POST /_emulator/webhooks/trigger (docs/test-kit.md#triggering-a-webhook): re-sends a transaction's current state as
// an event.
t.test('trigger re-sends the current state as a new signed event', async (t) => {
  const sandbox = await startSandbox({ clock: '2026-03-02T09:00:00.000Z' });
  t.teardown(() => sandbox.close());

  const deposit = await sandbox.signedFetch('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', {
    depositInstructionId: 'di_acme_usd_ach',
    amount: '10.00',
    reference: 'TRIGGER-1',
  });
  t.equal(deposit.status, 202);
  const created = await sandbox.webhooks.waitFor((w) => w.body.transaction.debitReference === 'TRIGGER-1');
  const transactionId = created.body.transaction.id as string;
  await sandbox.advanceClock(1000);
  await sandbox.webhooks.waitFor((w) => w.body.transaction.id === transactionId && w.body.transaction.status === 'COMPLETED');

  const post = (body: unknown) =>
    fetch(`${sandbox.url}/_emulator/webhooks/trigger`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  const triggered = await post({ transactionId, eventType: 'transaction_created' });
  t.equal(triggered.status, 202);
  const delivery = (await triggered.json()) as { eventId: string; eventType: string };
  t.equal(delivery.eventType, 'transaction_created');
  t.not(delivery.eventId, created.body.metadata.eventId, 'a new event id');

  const resent = await sandbox.webhooks.waitFor((w) => w.body.metadata.eventId === delivery.eventId);
  t.equal(resent.headers['x-service-event-type'], 'transaction_created');
  t.equal(resent.body.transaction.status, 'COMPLETED', 'carries the current state, not the state at creation');
  t.ok(checkWebhookSignatureForTest(resent, sandbox.credentials.webhook), 'signed like any delivery');

  const unknown = await post({ transactionId: 'txn_nope', eventType: 'transaction_created' });
  t.equal(unknown.status, 404);
  t.equal(((await unknown.json()) as { errorCode: string }).errorCode, 'NOT_FOUND');

  const badType = await post({ transactionId, eventType: 'transaction_deleted' });
  t.equal(badType.status, 400);
  const badBody = (await badType.json()) as { validationErrors: Array<{ fieldRef: string }> };
  t.equal(badBody.validationErrors[0]!.fieldRef, 'eventType');

  const missing = await post({ eventType: 'transaction_created' });
  t.equal(missing.status, 400);
});

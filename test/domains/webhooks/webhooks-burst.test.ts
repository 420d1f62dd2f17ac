import t from 'tap';
import { buildTestApp, json } from '../../helper.js';
import { createTestDeposit, startReceiver } from '../../helpers/receiver.js';
import { startWebhookDispatcher } from '../../../src/domains/webhooks/webhooks.dispatcher.js';
import { RETRY_DELAYS_MS } from '../../../src/domains/webhooks/webhooks.queue.js';
import { advanceClock } from '../../../src/scheduler/scheduler.js';
import { prepared } from '../../../src/db/connection.js';
import { webhookSandbox } from '../../helpers/webhook-sandbox.js';

// Webhooks (docs/decisions.md#webhook-ordering): a burst of 1,000 events delivered exactly once each, and
// per-transaction ordering while other transactions' events flow.

t.test('1,000 events in a burst are all delivered exactly once to a healthy receiver', async (t) => {
  const { receiver, sandbox, dispatcher } = await webhookSandbox(t);

  const writeStarted = performance.now();
  const ids = sandbox.ctx.db.transaction(() => Array.from({ length: 1000 }, (_, i) => createTestDeposit(sandbox.ctx, BigInt(100 + i)).id))();
  const writeMs = performance.now() - writeStarted;
  const started = performance.now();
  await dispatcher.drain({ timeoutMs: 180_000 }); // generous: a loaded 2-core machine delivers far slower
  const deliverMs = performance.now() - started;
  t.comment(`1,000 events: written in ${writeMs.toFixed(0)} ms, delivered in ${deliverMs.toFixed(0)} ms (${(1000 / (deliverMs / 1000)).toFixed(0)}/s)`);

  t.equal(receiver.requests.length, 1000, 'exactly 1,000 requests');
  const eventIds = new Set(receiver.requests.map((r) => r.body.metadata.eventId));
  t.equal(eventIds.size, 1000, 'each event once');
  t.same(new Set(receiver.requests.map((r) => r.body.transaction.id)), new Set(ids), 'one per transaction');
  const counts = prepared<{ status: string; n: number; attempts: number }>(
    sandbox.ctx.db,
    'SELECT status, COUNT(*) AS n, SUM(attempt_count) AS attempts FROM webhook_deliveries GROUP BY status',
  ).all();
  t.same(counts, [{ status: 'DELIVERED', n: 1000, attempts: 1000 }], 'all DELIVERED with one attempt each');
  t.equal(prepared<{ n: number }>(sandbox.ctx.db, 'SELECT COUNT(*) AS n FROM webhook_attempts').get()!.n, 1000, 'one logged attempt each');
  t.equal(prepared<{ n: number }>(sandbox.ctx.db, "SELECT COUNT(*) AS n FROM outbox JOIN webhook_deliveries ON webhook_deliveries.event_seq = outbox.seq WHERE webhook_deliveries.status = 'DELIVERED'").get()!.n, 1000, 'every outbox event has its DELIVERED delivery');

  // and nothing more arrives later
  await new Promise((resolve) => setTimeout(resolve, 200));
  await dispatcher.drain();
  t.equal(receiver.requests.length, 1000);
});

t.test('events of one transaction are delivered in order; other transactions are not held up', async (t) => {
  const receiver = await startReceiver();
  const sandbox = await buildTestApp({ config: { webhookUrl: receiver.url } });
  const dispatcher = startWebhookDispatcher(sandbox.ctx, { concurrency: 16 });
  t.teardown(async () => {
    await dispatcher.stop();
    await receiver.close();
    await sandbox.close();
  });

  const a = createTestDeposit(sandbox.ctx, 100n);
  const b = createTestDeposit(sandbox.ctx, 200n);
  const c = createTestDeposit(sandbox.ctx, 300n);
  // A's first event fails once; C's first event always fails; everything else succeeds
  let aFailures = 0;
  receiver.answer = (request) => {
    const { id } = request.body.transaction;
    const created = request.body.metadata.eventType === 'transaction_created';
    if (id === a.id && created && aFailures === 0) {
      aFailures += 1;
      return 500;
    }
    if (id === c.id && created) return 503;
    return 200;
  };
  advanceClock(sandbox.ctx, 1000); // all three complete: a status event each, written while their first is owed
  await dispatcher.drain();

  const seen = (id: string) => receiver.requests.filter((r) => r.body.transaction.id === id).map((r) => `${r.body.metadata.eventType}:${r.answeredStatus}`);
  t.same(seen(b.id), ['transaction_created:200', 'transaction_status_updated:200'], 'B flows');
  t.same(seen(a.id), ['transaction_created:500'], "A's status event waits while its created event is retrying");
  t.same(seen(c.id), ['transaction_created:503']);
  const pendingA = json(await sandbox.app.inject({ method: 'GET', url: `/_emulator/webhooks/deliveries?transactionId=${a.id}&sortDirection=ASC` })).data;
  t.same(pendingA.map((d: { status: string }) => d.status), ['RETRYING', 'PENDING']);

  advanceClock(sandbox.ctx, 5000);
  await dispatcher.drain();
  t.same(seen(a.id), ['transaction_created:500', 'transaction_created:200', 'transaction_status_updated:200'], 'A in order once its first is acknowledged');
  t.same(seen(c.id), ['transaction_created:503', 'transaction_created:503']);

  // C's created event exhausts its schedule; a FAILED event no longer holds back the next one
  for (const delay of RETRY_DELAYS_MS.slice(1)) {
    advanceClock(sandbox.ctx, delay);
    await dispatcher.drain();
  }
  const cDeliveries = json(await sandbox.app.inject({ method: 'GET', url: `/_emulator/webhooks/deliveries?transactionId=${c.id}&sortDirection=ASC` })).data;
  t.same(cDeliveries.map((d: { status: string; attemptCount: number }) => [d.status, d.attemptCount]), [
    ['FAILED', 10],
    ['DELIVERED', 1],
  ]);
  t.same(seen(c.id).slice(-2), ['transaction_created:503', 'transaction_status_updated:200'], "C's status event went out after the created one failed for good");
});

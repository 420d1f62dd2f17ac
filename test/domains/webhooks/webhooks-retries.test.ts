import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { buildTestApp, CREDENTIALS, json, START, type TestApp } from '../../helper.js';
import { createTestDeposit, freePort, startReceiver } from '../../helpers/receiver.js';
import { startWebhookDispatcher } from '../../../src/domains/webhooks/webhooks.dispatcher.js';
import { RETRY_DELAYS_MS } from '../../../src/domains/webhooks/webhooks.queue.js';
import { verifyWebhookSignature } from '../../../src/webhook-verify.js';
import { advanceClock } from '../../../src/scheduler/scheduler.js';
import { webhookSandbox } from '../../helpers/webhook-sandbox.js';

// Retries on the emulated clock (docs/decisions.md#webhook-retries: 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h,
// 8 h, then FAILED), timeouts, replay, and delivery after a restart on a database file.

const at = (offsetMs: number) => new Date(Date.parse(START) + offsetMs).toISOString();

async function deliveriesOf(sandbox: TestApp, transactionId: string, eventType = 'transaction_created') {
  const response = await sandbox.app.inject({
    method: 'GET',
    url: `/_emulator/webhooks/deliveries?transactionId=${transactionId}&eventType=${eventType}`,
  });
  return json(response).data;
}

function verified(request: { headers: Record<string, unknown>; url: string; rawBody: Buffer }): boolean {
  return verifyWebhookSignature({
    apiKey: String(request.headers['x-service-api-key']),
    secret: CREDENTIALS.webhook.secret,
    timestamp: String(request.headers['x-service-timestamp']),
    signature: String(request.headers['x-service-signature']),
    path: request.url,
    rawBody: request.rawBody,
  });
}

t.test('500, 500, then 200: three attempts at the scheduled emulated times, one success', async (t) => {
  const { receiver, sandbox, dispatcher } = await webhookSandbox(t, { answer: (_request, index) => (index < 2 ? 500 : 200) });

  const deposit = createTestDeposit(sandbox.ctx);
  await dispatcher.drain();
  t.equal(receiver.requests.length, 1);
  let [delivery] = await deliveriesOf(sandbox, deposit.id);
  t.match(delivery, { status: 'RETRYING', attemptCount: 1, nextAttemptAt: at(5000), lastResponseStatus: 500 });
  t.match(delivery.attempts[0], { outcome: 'FAILED', responseStatus: 500, attemptedAt: START, error: /answered 500/ });

  advanceClock(sandbox.ctx, 4999);
  await dispatcher.drain();
  t.equal(receiver.requests.length, 1, 'no retry before 5 s');
  advanceClock(sandbox.ctx, 1);
  await dispatcher.drain();
  t.equal(receiver.requests.length, 2, 'retry at 5 s');
  [delivery] = await deliveriesOf(sandbox, deposit.id);
  t.match(delivery, { status: 'RETRYING', attemptCount: 2, nextAttemptAt: at(35_000) });

  advanceClock(sandbox.ctx, 29_999);
  await dispatcher.drain();
  t.equal(receiver.requests.length, 2, 'no retry before 30 s more (the completion event of 12:00:01 waits behind it)');
  advanceClock(sandbox.ctx, 1);
  await dispatcher.drain();
  const created = receiver.requests.filter((r) => r.body.metadata.eventType === 'transaction_created');
  t.equal(created.length, 3, 'retry 30 s after the second attempt');
  t.same(
    receiver.requests.map((r) => [r.body.metadata.eventType, r.answeredStatus]),
    [
      ['transaction_created', 500],
      ['transaction_created', 500],
      ['transaction_created', 200],
      ['transaction_status_updated', 200],
    ],
    'the status event of the same transaction went out only after the created event was acknowledged',
  );

  [delivery] = await deliveriesOf(sandbox, deposit.id);
  t.match(delivery, { status: 'DELIVERED', attemptCount: 3, nextAttemptAt: null, deliveredAt: at(35_000), lastResponseStatus: 200 });
  t.same(
    delivery.attempts.map((a: { number: number; attemptedAt: string; outcome: string; responseStatus: number }) => [a.number, a.attemptedAt, a.outcome, a.responseStatus]),
    [
      [1, START, 'FAILED', 500],
      [2, at(5000), 'FAILED', 500],
      [3, at(35_000), 'SUCCEEDED', 200],
    ],
  );
  const eventIds = new Set(created.map((r) => r.body.metadata.eventId));
  t.equal(eventIds.size, 1, 'every attempt carries the same eventId');
  t.ok(created.every(verified), 'every attempt is validly signed');
  t.same(new Set(created.map((r) => r.rawBody.toString())).size, 1, 'the body is the same bytes every time');
  const timestamps = created.map((r) => Number(r.headers['x-service-timestamp']));
  t.same(timestamps, [...timestamps].sort((a, b) => a - b), 'each attempt is signed with its own (fresh) timestamp');
  t.same(delivery.attempts.map((a: { requestHeaders: Record<string, string> }) => Number(a.requestHeaders['x-service-timestamp'])), timestamps);

  advanceClock(sandbox.ctx, 24 * 3600_000);
  await dispatcher.drain();
  const createdRequests = receiver.requests.filter((r) => r.body.metadata.eventType === 'transaction_created');
  t.equal(createdRequests.length, 3, 'nothing more after success');
});

t.test('receiver down: ten attempts on the schedule, then FAILED; replay succeeds once it is back', async (t) => {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/webhooks`;
  const sandbox = await buildTestApp({ config: { webhookUrl: url } });
  // a long-held deposit so only one event exists: complete it never (no rail job run before the end)
  const dispatcher = startWebhookDispatcher(sandbox.ctx);
  t.teardown(async () => {
    await dispatcher.stop();
    await sandbox.close();
  });

  const deposit = createTestDeposit(sandbox.ctx);
  await dispatcher.drain();
  let elapsed = 0;
  const expectedTimes = [START];
  for (const delay of RETRY_DELAYS_MS) {
    const [before] = await deliveriesOf(sandbox, deposit.id);
    t.equal(before.status, 'RETRYING');
    t.equal(before.nextAttemptAt, at(elapsed + delay), `next attempt ${delay / 1000} s after the last`);
    advanceClock(sandbox.ctx, delay);
    elapsed += delay;
    expectedTimes.push(at(elapsed));
    await dispatcher.drain();
  }
  t.same(RETRY_DELAYS_MS, [5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000], 'the documented schedule');

  let [delivery] = await deliveriesOf(sandbox, deposit.id);
  t.match(delivery, { status: 'FAILED', attemptCount: 10, nextAttemptAt: null, lastResponseStatus: null, deliveredAt: null });
  t.same(delivery.attempts.map((a: { attemptedAt: string }) => a.attemptedAt), expectedTimes, 'attempts at 0, 5 s, 35 s, 2 min 35 s ...');
  t.ok(delivery.attempts.every((a: { outcome: string; responseStatus: null; error: string }) => a.outcome === 'FAILED' && a.responseStatus === null && /ECONNREFUSED/.test(a.error)), 'network errors logged');
  t.equal((await sandbox.app.inject({ method: 'GET', url: '/_emulator/webhooks/deliveries?status=FAILED' })).statusCode, 200);
  t.equal(json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/webhooks/deliveries?status=FAILED' })).totalRecords, 1);

  advanceClock(sandbox.ctx, 48 * 3600_000);
  await dispatcher.drain();
  [delivery] = await deliveriesOf(sandbox, deposit.id);
  t.equal(delivery.attempts.length, 10, 'no eleventh scheduled attempt');
  t.equal(delivery.status, 'FAILED');

  // a failed replay while still down changes nothing
  const stillDown = await sandbox.app.inject({ method: 'POST', url: `/_emulator/webhooks/deliveries/${delivery.id}/replay` });
  t.equal(stillDown.statusCode, 200);
  t.match(json(stillDown), { status: 'FAILED', attemptCount: 10 });
  t.match(json(stillDown).attempts[10], { number: 11, kind: 'REPLAY', outcome: 'FAILED' });

  // the receiver comes back on the same port
  const receiver = await startReceiver({ port });
  t.teardown(() => receiver.close());
  const replay = await sandbox.app.inject({ method: 'POST', url: `/_emulator/webhooks/deliveries/${delivery.id}/replay` });
  t.equal(replay.statusCode, 200);
  const replayed = json(replay);
  t.match(replayed, { status: 'DELIVERED', attemptCount: 10, lastResponseStatus: 200 });
  t.match(replayed.attempts[11], { number: 12, kind: 'REPLAY', outcome: 'SUCCEEDED', responseStatus: 200 });
  const createdRequests = receiver.requests.filter((r) => r.body.metadata.eventType === 'transaction_created');
  t.equal(createdRequests.length, 1);
  t.ok(verified(createdRequests[0]!), 'the replay is signed afresh and verifies');
  t.equal(createdRequests[0]!.body.metadata.eventId, delivery.eventId);
  t.ok(Math.abs(Number(createdRequests[0]!.headers['x-service-timestamp']) - Date.now()) < 60_000, 'fresh timestamp (the wall clock, months from the emulated one)');
});

t.test('a receiver hanging past the timeout counts as a failure', async (t) => {
  const receiver = await startReceiver({ answer: () => 'hang' });
  const sandbox = await buildTestApp({ config: { webhookUrl: receiver.url, webhookTimeoutMs: 300 } });
  let dispatcher = startWebhookDispatcher(sandbox.ctx);
  t.teardown(async () => {
    await dispatcher.stop();
    await receiver.close();
    await sandbox.close();
  });

  const deposit = createTestDeposit(sandbox.ctx);
  await dispatcher.drain();
  let [delivery] = await deliveriesOf(sandbox, deposit.id);
  t.match(delivery, { status: 'RETRYING', attemptCount: 1, nextAttemptAt: at(5000) });
  t.match(delivery.attempts[0], { outcome: 'FAILED', responseStatus: null, error: /within 300 ms \(timeout\)/ });
  t.ok(delivery.attempts[0].latencyMs >= 290, `latency ${delivery.attempts[0].latencyMs} ms`);

  // a slow but in-time answer is fine: 100 ms under a timeout a loaded machine cannot reach (300 ms could be)
  await dispatcher.stop();
  dispatcher = startWebhookDispatcher(sandbox.ctx, { timeoutMs: 60_000 });
  receiver.answer = () => ({ status: 200, delayMs: 100 });
  advanceClock(sandbox.ctx, 5000);
  await dispatcher.drain();
  [delivery] = await deliveriesOf(sandbox, deposit.id);
  t.match(delivery, { status: 'DELIVERED', attemptCount: 2 });
});

t.test('restart with a database file: owed events are still delivered, with their eventIds', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sandbox-webhooks-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const db = path.join(dir, 'sandbox.db');
  const receiver = await startReceiver({ answer: () => 500 });
  t.teardown(() => receiver.close());

  // first process: one event fails and waits for its retry; a second is written but never attempted
  const first = await buildTestApp({ db, config: { webhookUrl: receiver.url } });
  const dispatcher1 = startWebhookDispatcher(first.ctx);
  const retrying = createTestDeposit(first.ctx);
  await dispatcher1.drain();
  const [retryingDelivery] = await deliveriesOf(first, retrying.id);
  t.match(retryingDelivery, { status: 'RETRYING', attemptCount: 1, nextAttemptAt: at(5000) });
  await dispatcher1.stop(); // the process "crashes": no dispatcher from here on
  const unsent = createTestDeposit(first.ctx);
  const [unsentDelivery] = await deliveriesOf(first, unsent.id);
  t.match(unsentDelivery, { status: 'PENDING', attemptCount: 0 });
  await first.close();
  t.equal(receiver.requests.length, 1);

  // second process on the same file, receiver healthy now
  receiver.answer = () => 200;
  const second = await buildTestApp({ db });
  const dispatcher2 = startWebhookDispatcher(second.ctx);
  t.teardown(async () => {
    await dispatcher2.stop();
    await second.close();
  });
  await dispatcher2.drain();
  const afterStart = receiver.requests.slice(1).map((r) => r.body.metadata.eventId);
  t.same(afterStart, [unsentDelivery.eventId], 'the never-attempted event is sent at start');
  t.match((await deliveriesOf(second, retrying.id))[0], { status: 'RETRYING', nextAttemptAt: at(5000) }, 'the retry still waits for its time');

  advanceClock(second.ctx, 5000);
  await dispatcher2.drain();
  const [delivered] = await deliveriesOf(second, retrying.id);
  t.match(delivered, { id: retryingDelivery.id, eventId: retryingDelivery.eventId, status: 'DELIVERED', attemptCount: 2 });
  t.same(
    delivered.attempts.map((a: { attemptedAt: string; responseStatus: number }) => [a.attemptedAt, a.responseStatus]),
    [
      [START, 500],
      [at(5000), 200],
    ],
    'the attempt log survived the restart',
  );
  const successes = receiver.requests.filter((r) => r.body.metadata.eventType === 'transaction_created' && r !== receiver.requests[0]);
  t.same(
    successes.map((r) => r.body.metadata.eventId).sort(),
    [retryingDelivery.eventId, unsentDelivery.eventId].sort(),
    'each event delivered once after the restart, with its original eventId',
  );
});

t.test('stopping mid-send leaves the event owed: it is sent again (at-least-once, same eventId)', async (t) => {
  const receiver = await startReceiver({ answer: () => 'hang' });
  const sandbox = await buildTestApp({ config: { webhookUrl: receiver.url } });
  t.teardown(async () => {
    await receiver.close();
    await sandbox.close();
  });
  const dispatcher1 = startWebhookDispatcher(sandbox.ctx);
  const deposit = createTestDeposit(sandbox.ctx);
  while (receiver.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
  // stop does not wait for the 10 s timeout: the attempt is aborted, so none is recorded (a timed-out one would be)
  await dispatcher1.stop();
  let [delivery] = await deliveriesOf(sandbox, deposit.id);
  t.match(delivery, { status: 'PENDING', attemptCount: 0, attempts: [] }, 'the aborted attempt is not recorded');

  receiver.answer = () => 200;
  const dispatcher2 = startWebhookDispatcher(sandbox.ctx);
  t.teardown(() => dispatcher2.stop());
  await dispatcher2.drain();
  [delivery] = await deliveriesOf(sandbox, deposit.id);
  t.match(delivery, { status: 'DELIVERED', attemptCount: 1 });
  t.same(
    receiver.requests.map((r) => r.body.metadata.eventId),
    [delivery.eventId, delivery.eventId],
    'received twice with the same eventId',
  );
});

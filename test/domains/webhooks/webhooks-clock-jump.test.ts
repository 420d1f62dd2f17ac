import t from 'tap';
import { buildTestApp, CREDENTIALS, json, START, type TestApp } from '../../helper.js';
import { createTestDeposit, freePort } from '../../helpers/receiver.js';
import { startWebhookDispatcher } from '../../../src/domains/webhooks/webhooks.dispatcher.js';
import { verifyWebhookSignature } from '../../../src/webhook-verify.js';
import { webhookSandbox } from '../../helpers/webhook-sandbox.js';

// Webhook attempts made after a clock jump are stamped with their own due time in emulated time, as every
// other job (docs/decisions.md#webhook-attempt-times): a jump past several retries makes each of them, in order, each
// stamped when it was due and each reckoned from the one before; each is signed again with a fresh
// X-Service-Timestamp of the real wall clock, which is what a receiver's skew check compares.

const at = (offsetMs: number) => new Date(Date.parse(START) + offsetMs).toISOString();

async function control(sandbox: TestApp, method: 'GET' | 'POST', url: string, payload?: unknown) {
  const response = await sandbox.app.inject({ method, url, payload: payload as never });
  if (response.statusCode !== 200) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
  return json(response);
}

async function deliveryOf(sandbox: TestApp, transactionId: string, eventType = 'transaction_created') {
  return (await control(sandbox, 'GET', `/_emulator/webhooks/deliveries?transactionId=${transactionId}&eventType=${eventType}`)).data[0];
}

const stamps = (delivery: { attempts: Array<{ attemptedAt: string }> }) => delivery.attempts.map((a) => a.attemptedAt);

t.test('a jump past three retries: each attempt stamped with its own due time, reckoned from the previous one', async (t) => {
  const { receiver, sandbox, dispatcher } = await webhookSandbox(t, { answer: (_request, index) => (index < 3 ? 500 : 200) });

  const deposit = createTestDeposit(sandbox.ctx);
  await dispatcher.drain();
  t.match(await deliveryOf(sandbox, deposit.id), { status: 'RETRYING', attemptCount: 1, nextAttemptAt: at(5000) });

  const jumped = await control(sandbox, 'POST', '/_emulator/clock', { advanceMs: 24 * 3600_000 });
  t.equal(jumped.now, at(24 * 3600_000));
  const realBefore = Date.now();
  await dispatcher.drain();
  const delivery = await deliveryOf(sandbox, deposit.id);
  t.match(delivery, { status: 'DELIVERED', attemptCount: 4, nextAttemptAt: null, deliveredAt: at(155_000), lastAttemptAt: at(155_000) });
  t.same(stamps(delivery), [START, at(5000), at(35_000), at(155_000)], '0, 5 s, 35 s, 2 min 35 s: not all at the jump\'s end');
  t.same(
    delivery.attempts.map((a: { outcome: string; responseStatus: number }) => [a.outcome, a.responseStatus]),
    [
      ['FAILED', 500],
      ['FAILED', 500],
      ['FAILED', 500],
      ['SUCCEEDED', 200],
    ],
  );

  // the completion event (due at 12:00:01) waited behind the created event: it is stamped when it was released
  const completion = await deliveryOf(sandbox, deposit.id, 'transaction_status_updated');
  t.match(completion, { status: 'DELIVERED', attemptCount: 1, deliveredAt: at(155_000) });
  t.same(stamps(completion), [at(155_000)]);

  // signing: the body's occurredAt is the event's emulated instant; each attempt carries a fresh real timestamp
  const created = receiver.requests.filter((r) => r.body.metadata.eventType === 'transaction_created');
  t.equal(created.length, 4);
  t.ok(created.every((r) => r.body.metadata.occurredAt === START), 'occurredAt: when the event happened (emulated), the same bytes every attempt');
  const timestamps = created.map((r) => Number(r.headers['x-service-timestamp']));
  t.same(timestamps, [...timestamps].sort((a, b) => a - b), 'signed again for every attempt');
  t.ok(timestamps.slice(1).every((ms) => Math.abs(ms - realBefore) < 60_000), 'X-Service-Timestamp is the real wall clock, not the emulated due time');
  t.ok(
    created.every((r) =>
      verifyWebhookSignature({
        apiKey: String(r.headers['x-service-api-key']),
        secret: CREDENTIALS.webhook.secret,
        timestamp: String(r.headers['x-service-timestamp']),
        signature: String(r.headers['x-service-signature']),
        path: r.url,
        rawBody: r.rawBody,
      }),
    ),
    'every attempt verifies',
  );
});

t.test('receiver down: a 1 h jump makes the attempts due within it, the rest wait on their schedule; 24 h more ends FAILED', async (t) => {
  const port = await freePort();
  const sandbox = await buildTestApp({ config: { webhookUrl: `http://127.0.0.1:${port}/webhooks` } });
  const dispatcher = startWebhookDispatcher(sandbox.ctx);
  t.teardown(async () => {
    await dispatcher.stop();
    await sandbox.close();
  });
  const deposit = createTestDeposit(sandbox.ctx);
  await dispatcher.drain();

  await control(sandbox, 'POST', '/_emulator/clock', { advanceMs: 3600_000 });
  await dispatcher.drain();
  let delivery = await deliveryOf(sandbox, deposit.id);
  // 0, 5 s, 35 s, 2 min 35 s, 12 min 35 s, 42 min 35 s; the next (1 h after the last) is past the jump
  t.same(stamps(delivery), [START, at(5_000), at(35_000), at(155_000), at(755_000), at(2_555_000)]);
  t.match(delivery, { status: 'RETRYING', attemptCount: 6, nextAttemptAt: at(6_155_000) });

  await control(sandbox, 'POST', '/_emulator/clock', { advanceMs: 2_555_000 - 1 });
  await dispatcher.drain();
  t.equal((await deliveryOf(sandbox, deposit.id)).attempts.length, 6, 'not before its due time');

  await control(sandbox, 'POST', '/_emulator/clock', { advanceMs: 24 * 3600_000 });
  await dispatcher.drain();
  delivery = await deliveryOf(sandbox, deposit.id);
  t.match(delivery, { status: 'FAILED', attemptCount: 10, nextAttemptAt: null });
  t.same(stamps(delivery).slice(6), [at(6_155_000), at(13_355_000), at(27_755_000), at(56_555_000)], '1 h, 2 h, 4 h, 8 h after each failure');

  // a replay is made now, on request, and stamped now
  const replay = await sandbox.app.inject({ method: 'POST', url: `/_emulator/webhooks/deliveries/${delivery.id}/replay` });
  t.equal(replay.statusCode, 200);
  const clock = await control(sandbox, 'GET', '/_emulator/clock');
  t.equal(stamps(await deliveryOf(sandbox, deposit.id))[10], clock.now);
});

t.test('no jump: attempts are stamped when they are made, as before', async (t) => {
  const { sandbox, dispatcher } = await webhookSandbox(t, { answer: (_request, index) => (index < 1 ? 503 : 200) });
  const deposit = createTestDeposit(sandbox.ctx);
  await dispatcher.drain();
  await control(sandbox, 'POST', '/_emulator/clock', { advanceMs: 5000 });
  await dispatcher.drain();
  t.same(stamps(await deliveryOf(sandbox, deposit.id)), [START, at(5000)]);
});

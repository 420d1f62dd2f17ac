import { createHmac } from 'node:crypto';
import t, { type Test } from 'tap';
import Fastify from 'fastify';
import type { AddressInfo } from 'node:net';
import { buildTestApp, CREDENTIALS, json, START, type TestApp } from '../../helper.js';
import { createTestDeposit, forceStatus, serviceHeaders, startReceiver, type Receiver } from '../../helpers/receiver.js';
import { waitUntil } from '../../helpers/wait.js';
import { startWebhookDispatcher, type WebhookDispatcher } from '../../../src/domains/webhooks/webhooks.dispatcher.js';
import { checkWebhookSignature, signWebhook, verifyWebhookSignature } from '../../../src/webhook-verify.js';
import * as packageApi from '../../../src/index.js';
import { advanceClock } from '../../../src/scheduler/scheduler.js';
import { getTransactionRow, precisionLookup } from '../../../src/domains/transactions/transactions.stored.js';
import { toWebhookTransaction, toTransaction } from '../../../src/domains/transactions/transactions.schema.js';

// Signed transaction webhooks (docs/webhooks.md, interface 6.1) against a real HTTP receiver.

const WEBHOOK = CREDENTIALS.webhook;
const at = (offsetMs: number) => new Date(Date.parse(START) + offsetMs).toISOString();

interface Setup {
  sandbox: TestApp;
  receiver: Receiver;
  dispatcher: WebhookDispatcher;
}

async function setup(t: Test, options: { path?: string; webhookUrl?: (receiver: Receiver) => string } = {}): Promise<Setup> {
  const receiver = await startReceiver({ path: options.path });
  const sandbox = await buildTestApp({ config: { webhookUrl: options.webhookUrl?.(receiver) ?? receiver.url } });
  const dispatcher = startWebhookDispatcher(sandbox.ctx);
  t.teardown(async () => {
    await dispatcher.stop();
    await receiver.close();
    await sandbox.close();
  });
  return { sandbox, receiver, dispatcher };
}

function hmacHex(secret: string, text: string): string {
  return createHmac('sha256', secret).update(text, 'utf8').digest('hex');
}

t.test("a deposit's lifecycle: two signed events, in order, with exact headers and the REST shape minus nulls", async (t) => {
  const { sandbox, receiver, dispatcher } = await setup(t);
  // The first answer is slow: if the second event did not wait for it, it would arrive before that answer.
  receiver.answer = (_request, index) => (index === 0 ? { status: 200, delayMs: 150 } : 204);

  const deposit = createTestDeposit(sandbox.ctx);
  const createdView = toWebhookTransaction(toTransaction(deposit, precisionLookup(sandbox.ctx)));
  advanceClock(sandbox.ctx, 1000); // the deposit completes (docs/decisions.md#rail-timeline): a status event
  const completedView = toWebhookTransaction(toTransaction(getTransactionRow(sandbox.ctx, deposit.id)!, precisionLookup(sandbox.ctx)));
  await dispatcher.drain();

  t.equal(receiver.requests.length, 2, 'two deliveries');
  const [created, completed] = receiver.requests;
  t.same(
    receiver.requests.map((r) => r.headers['x-service-event-type']),
    ['transaction_created', 'transaction_status_updated'],
    'created first, then status updated',
  );
  t.ok(completed!.receivedAtMs >= created!.answeredAtMs!, 'the second event was sent only after the first was acknowledged');

  for (const request of receiver.requests) {
    t.equal(request.method, 'POST');
    t.equal(request.url, '/webhooks');
    t.same(Object.keys(serviceHeaders(request.headers)).sort(), [
      'x-service-api-key',
      'x-service-event-type',
      'x-service-resource-type',
      'x-service-signature',
      'x-service-timestamp',
    ], 'exactly the five headers of interface 6.1');
    t.equal(request.headers['content-type'], 'application/json');
    t.equal(request.headers['x-service-resource-type'], 'transaction');
    t.equal(request.headers['x-service-api-key'], WEBHOOK.apiKey);
    const timestamp = String(request.headers['x-service-timestamp']);
    t.match(timestamp, /^[0-9]+$/);
    t.ok(Math.abs(Number(timestamp) - Date.now()) < 60_000, 'timestamp is real wall-clock ms, not the emulated 2026 clock');
    const signature = String(request.headers['x-service-signature']);
    t.match(signature, /^[0-9a-f]{64}$/, 'lowercase hex');
    // recomputed independently of the package's helper
    t.equal(signature, hmacHex(WEBHOOK.secret, `${WEBHOOK.apiKey}${timestamp}POST/webhooks${request.rawBody.toString('utf8')}`));
    const input = { apiKey: WEBHOOK.apiKey, secret: WEBHOOK.secret, timestamp, path: request.url, rawBody: request.rawBody, signature };
    t.equal(verifyWebhookSignature(input), true, 'the receiver helper accepts it');
    const tampered = Buffer.from(request.rawBody);
    tampered[tampered.length - 3] = tampered[tampered.length - 3]! ^ 1;
    t.equal(verifyWebhookSignature({ ...input, rawBody: tampered }), false, 'a tampered body fails');
    t.equal(verifyWebhookSignature({ ...input, rawBody: request.rawBody.toString('utf8').replace('"10', '"90') }), false, 'a changed amount fails');
    t.equal(verifyWebhookSignature({ ...input, secret: 'whsec_wrong_secret' }), false, 'another secret fails');
    t.equal(verifyWebhookSignature({ ...input, path: '/other' }), false, 'another path fails');
  }

  t.same(created!.body.transaction, createdView, 'transaction_created carries the transaction as it was, in webhook form');
  t.same(completed!.body.transaction, completedView, 'transaction_status_updated carries the completed transaction');
  t.equal(created!.body.transaction.status, 'PENDING');
  t.equal(completed!.body.transaction.status, 'COMPLETED');
  t.equal(completed!.body.transaction.completedAt, at(1000));
  t.notOk('completedAt' in created!.body.transaction, 'no-value fields are omitted');
  for (const request of receiver.requests) {
    t.notOk(Object.values(request.body.transaction).includes(null), 'no null values in a webhook transaction');
    t.same(Object.keys(request.body).sort(), ['metadata', 'transaction']);
  }
  t.match(created!.body.metadata, { eventId: /^evt_/, eventType: 'transaction_created', programId: 'prg_sandbox', userId: 'usr_acme', occurredAt: START });
  t.match(completed!.body.metadata, { eventId: /^evt_/, eventType: 'transaction_status_updated', programId: 'prg_sandbox', userId: 'usr_acme', occurredAt: at(1000) });
  t.not(created!.body.metadata.eventId, completed!.body.metadata.eventId);

  // the delivery log shows them, with what was sent and received
  const log = await sandbox.app.inject({ method: 'GET', url: `/_emulator/webhooks/deliveries?transactionId=${deposit.id}&sortDirection=ASC` });
  t.equal(log.statusCode, 200);
  const deliveries = json(log).data;
  t.equal(deliveries.length, 2);
  for (const [i, delivery] of deliveries.entries()) {
    const request = receiver.requests[i]!;
    t.match(delivery, { id: /^dlv_/, status: 'DELIVERED', attemptCount: 1, eventId: request.body.metadata.eventId, transactionId: deposit.id });
    t.equal(delivery.attempts.length, 1);
    const attempt = delivery.attempts[0];
    t.match(attempt, { number: 1, kind: 'SCHEDULED', outcome: 'SUCCEEDED', url: receiver.url, error: null });
    t.equal(attempt.responseStatus, i === 0 ? 200 : 204);
    t.equal(attempt.responseBody, i === 0 ? 'ok' : null, 'the answer body is logged (a 204 has none)');
    t.equal(attempt.requestBody, request.rawBody.toString('utf8'), 'request body logged byte for byte');
    t.same(serviceHeaders(attempt.requestHeaders), serviceHeaders(request.headers), 'request headers logged');
    t.same(delivery.body, request.body);
  }
  t.ok(deliveries[0].attempts[0].latencyMs >= 140, `latency of the slow answer recorded (${deliveries[0].attempts[0].latencyMs} ms)`);
  // both were first attempted after the synchronous advance, and each is stamped with the emulated time it
  // was due (docs/decisions.md#webhook-attempt-times): the created event at 12:00:00, the completion at 12:00:01
  t.equal(deliveries[0].attempts[0].attemptedAt, at(0), 'attempt time is the emulated due time');
  t.equal(deliveries[1].attempts[0].attemptedAt, at(1000), 'attempt time is the emulated due time');
});

t.test('the signature covers the URL path without its query string', async (t) => {
  const { sandbox, receiver, dispatcher } = await setup(t, { path: '/hooks/in', webhookUrl: (r) => `${r.url}?token=abc&x=1` });
  createTestDeposit(sandbox.ctx);
  await dispatcher.drain();
  t.equal(receiver.requests.length, 1);
  const request = receiver.requests[0]!;
  t.equal(request.url, '/hooks/in?token=abc&x=1', 'posted to the full URL');
  const timestamp = String(request.headers['x-service-timestamp']);
  const body = request.rawBody.toString('utf8');
  t.equal(request.headers['x-service-signature'], hmacHex(WEBHOOK.secret, `${WEBHOOK.apiKey}${timestamp}POST/hooks/in${body}`));
  t.not(request.headers['x-service-signature'], hmacHex(WEBHOOK.secret, `${WEBHOOK.apiKey}${timestamp}POST/hooks/in?token=abc&x=1${body}`));
  const verify = { apiKey: WEBHOOK.apiKey, secret: WEBHOOK.secret, timestamp, rawBody: request.rawBody, signature: String(request.headers['x-service-signature']) };
  t.ok(verifyWebhookSignature({ ...verify, path: request.url }), 'the helper drops the query of request.url');
  t.ok(verifyWebhookSignature({ ...verify, path: '/hooks/in' }));
});

t.test('delivering never blocks the request that caused the event', async (t) => {
  const receiver = await startReceiver({ answer: () => 'hang' });
  // the attempt hangs until the dispatcher stops (a timeout no test run reaches): an answer proves nothing waited
  const sandbox = await buildTestApp({ config: { webhookUrl: receiver.url, webhookTimeoutMs: 600_000 } });
  const dispatcher = startWebhookDispatcher(sandbox.ctx);
  t.teardown(async () => {
    await dispatcher.stop();
    await receiver.close();
    await sandbox.close();
  });
  const deposit = createTestDeposit(sandbox.ctx);
  await waitUntil(() => receiver.requests.length === 1, 'the first delivery, hanging');
  // advancing completes the deposit (an event) while the receiver hangs; the call must not wait for it
  const response = await sandbox.app.inject({ method: 'POST', url: '/_emulator/clock', payload: { advanceMs: 1000 } });
  t.equal(response.statusCode, 200);
  const attempts = sandbox.ctx.db.prepare('SELECT attempt_count FROM webhook_deliveries WHERE resource_id = ?').pluck().all(deposit.id);
  t.ok(attempts.every((count) => count === 0), 'answered while the first attempt was still open (no attempt recorded yet)');
});

t.test('no endpoint: events are SKIPPED, replayable once an endpoint is set; PUT/GET endpoint', async (t) => {
  const receiver = await startReceiver();
  const sandbox = await buildTestApp(); // fixtures: no webhook URL (docs/decisions.md#webhook-no-url)
  const dispatcher = startWebhookDispatcher(sandbox.ctx);
  t.teardown(async () => {
    await dispatcher.stop();
    await receiver.close();
    await sandbox.close();
  });
  const inject = (method: 'GET' | 'PUT' | 'POST', url: string, payload?: unknown) => sandbox.app.inject({ method, url, payload: payload as object });

  const first = createTestDeposit(sandbox.ctx);
  await dispatcher.drain();
  t.equal(receiver.requests.length, 0, 'nothing sent without a URL');
  let log = json(await inject('GET', `/_emulator/webhooks/deliveries?transactionId=${first.id}`));
  t.equal(log.data[0].status, 'SKIPPED');
  t.match(log.data[0].lastError, /No webhook URL/);
  const skippedId = log.data[0].id;

  const noUrl = await inject('POST', `/_emulator/webhooks/deliveries/${skippedId}/replay`);
  t.equal(noUrl.statusCode, 409, 'replay without an endpoint');
  t.equal(json(noUrl).errorCode, 'INVALID_REQUEST');
  const unknown = await inject('POST', '/_emulator/webhooks/deliveries/dlv_nope/replay');
  t.equal(unknown.statusCode, 404);
  t.equal(json(unknown).errorCode, 'NOT_FOUND');

  // endpoint validation
  t.equal((await inject('PUT', '/_emulator/webhooks/endpoint', { url: 'ftp://x' })).statusCode, 400);
  t.equal(json(await inject('PUT', '/_emulator/webhooks/endpoint', { url: 'not a url' })).validationErrors[0].fieldRef, 'url');
  t.equal((await inject('PUT', '/_emulator/webhooks/endpoint', { url: receiver.url, programId: 'prg_nope' })).statusCode, 404);
  t.equal((await inject('PUT', '/_emulator/webhooks/endpoint', { url: receiver.url, extra: 1 })).statusCode, 400);

  // one programme only
  const set = await inject('PUT', '/_emulator/webhooks/endpoint', { url: receiver.url, programId: 'prg_sandbox' });
  t.equal(set.statusCode, 200);
  t.same(json(set), { endpoints: [{ programId: 'prg_sandbox', url: receiver.url, apiKey: WEBHOOK.apiKey }] });
  const all = json(await inject('GET', '/_emulator/webhooks/endpoint'));
  t.same(
    all.endpoints.map((e: { programId: string; url: string | null }) => [e.programId, e.url]),
    [
      ['prg_other', null],
      ['prg_sandbox', receiver.url],
    ],
  );
  await dispatcher.drain();
  t.equal(receiver.requests.length, 0, 'setting an endpoint does not flood it with skipped events');

  // replay by event id works too; success marks the delivery DELIVERED
  const eventId = log.data[0].eventId;
  const replay = await inject('POST', `/_emulator/webhooks/deliveries/${eventId}/replay`);
  t.equal(replay.statusCode, 200);
  t.match(json(replay), { id: skippedId, status: 'DELIVERED', attemptCount: 0 });
  t.match(json(replay).attempts, [{ number: 1, kind: 'REPLAY', outcome: 'SUCCEEDED', responseStatus: 200 }]);
  t.equal(receiver.requests.length, 1);
  t.equal(receiver.requests[0]!.body.metadata.eventId, eventId, 'the replay keeps the eventId');
  t.equal(receiver.requests[0]!.body.metadata.occurredAt, START);

  // new events now flow
  const second = createTestDeposit(sandbox.ctx);
  await dispatcher.drain();
  t.equal(receiver.requests.length, 2);
  t.equal(receiver.requests[1]!.body.transaction.id, second.id);

  // clearing every programme's URL (url absent) skips again
  t.same(json(await inject('PUT', '/_emulator/webhooks/endpoint', {})).endpoints.map((e: { url: null }) => e.url), [null, null]);
  const third = createTestDeposit(sandbox.ctx);
  await dispatcher.drain();
  t.equal(receiver.requests.length, 2);
  log = json(await inject('GET', `/_emulator/webhooks/deliveries?transactionId=${third.id}`));
  t.equal(log.data[0].status, 'SKIPPED');

  // events of a transaction move on when forced to a status: the status event is skipped too
  forceStatus(sandbox.ctx, third.id, 'FAILED');
  log = json(await inject('GET', `/_emulator/webhooks/deliveries?transactionId=${third.id}&eventType=transaction_status_updated`));
  t.equal(log.data.length, 1);
  t.equal(log.data[0].status, 'SKIPPED');
});

t.test('delivery log: filters, paging, order, validation', async (t) => {
  const { sandbox, dispatcher } = await setup(t);
  const deposits = [createTestDeposit(sandbox.ctx), createTestDeposit(sandbox.ctx), createTestDeposit(sandbox.ctx)];
  advanceClock(sandbox.ctx, 1000);
  await dispatcher.drain();
  const get = async (query: string) => sandbox.app.inject({ method: 'GET', url: `/_emulator/webhooks/deliveries${query}` });

  const all = json(await get(''));
  t.equal(all.totalRecords, 6);
  t.equal(all.pageSize, 25);
  t.ok(all.data.every((d: { status: string }) => d.status === 'DELIVERED'));
  const seqOrder = all.data.map((d: { occurredAt: string }) => d.occurredAt);
  t.same(seqOrder, [...seqOrder].sort().reverse(), 'newest first by default');
  t.equal(all.data[0].eventType, 'transaction_status_updated');

  const asc = json(await get('?sortDirection=ASC'));
  t.same(asc.data.map((d: { id: string }) => d.id), [...all.data.map((d: { id: string }) => d.id)].reverse());

  t.equal(json(await get('?eventType=transaction_created')).totalRecords, 3);
  t.equal(json(await get('?status=DELIVERED&eventType=transaction_status_updated')).totalRecords, 3);
  t.equal(json(await get('?status=FAILED')).totalRecords, 0);
  const one = json(await get(`?transactionId=${deposits[1]!.id}`));
  t.equal(one.totalRecords, 2);
  t.ok(one.data.every((d: { transactionId: string }) => d.transactionId === deposits[1]!.id));
  t.equal(json(await get('?programId=prg_other')).totalRecords, 0);

  const page0 = json(await get('?pageSize=4'));
  const page1 = json(await get('?pageSize=4&pageIndex=1'));
  t.equal(page0.data.length, 4);
  t.equal(page1.data.length, 2);
  t.equal(page1.totalRecords, 6);
  t.same([...page0.data, ...page1.data].map((d: { id: string }) => d.id), all.data.map((d: { id: string }) => d.id));

  for (const [query, fieldRef] of [
    ['?status=LOST', 'status'],
    ['?eventType=account_created', 'eventType'],
    ['?pageSize=0', 'pageSize'],
    ['?pageSize=201', 'pageSize'],
    ['?sortDirection=UP', 'sortDirection'],
  ] as const) {
    const response = await get(query);
    t.equal(response.statusCode, 400, query);
    t.notOk('errorCode' in json(response), `${query}: no errorCode (interface 7.1)`);
    t.equal(json(response).validationErrors[0].fieldRef, fieldRef, query);
  }

  const single = await sandbox.app.inject({ method: 'GET', url: `/_emulator/webhooks/deliveries/${all.data[0].id}` });
  t.equal(single.statusCode, 200);
  t.same(json(single), all.data[0]);
  t.equal((await sandbox.app.inject({ method: 'GET', url: '/_emulator/webhooks/deliveries/dlv_missing' })).statusCode, 404);
});

t.test('verifyWebhookSignature: the receiver-side helper, exported from the package', async (t) => {
  t.equal(packageApi.verifyWebhookSignature, verifyWebhookSignature, 'exported from src/index.ts');
  const nowMs = 1_767_225_600_000;
  const timestamp = String(nowMs);
  const rawBody = '{"transaction":{"id":"txn_1"},"metadata":{"eventId":"evt_1"}}';
  const signature = hmacHex('whsec_test_secret', `wk_test${timestamp}POST/webhooks${rawBody}`);
  const base = { apiKey: 'wk_test', secret: 'whsec_test_secret', timestamp, path: '/webhooks', rawBody, signature, nowMs };
  t.equal(signWebhook(base), signature, 'signWebhook is the documented recipe');
  t.equal(verifyWebhookSignature(base), true);
  t.equal(verifyWebhookSignature({ ...base, rawBody: Buffer.from(rawBody) }), true, 'Buffer bodies');
  t.equal(verifyWebhookSignature({ ...base, rawBody: new Uint8Array(Buffer.from(rawBody)) }), true, 'Uint8Array bodies');
  t.equal(verifyWebhookSignature({ ...base, signature: signature.toUpperCase() }), true, 'hex case does not matter');
  t.same(checkWebhookSignature({ ...base, rawBody: rawBody.replace('txn_1', 'txn_2') }), { valid: false, reason: 'SIGNATURE_MISMATCH' });
  t.same(checkWebhookSignature({ ...base, apiKey: 'wk_other' }), { valid: false, reason: 'SIGNATURE_MISMATCH' });
  t.same(checkWebhookSignature({ ...base, signature: undefined }), { valid: false, reason: 'MISSING_HEADER' });
  t.same(checkWebhookSignature({ ...base, timestamp: '12:00' }), { valid: false, reason: 'MALFORMED_TIMESTAMP' });
  t.same(checkWebhookSignature({ ...base, signature: 'sha256=' + signature }), { valid: false, reason: 'MALFORMED_SIGNATURE' });
  t.same(checkWebhookSignature({ ...base, signature: signature.slice(0, 63) }), { valid: false, reason: 'MALFORMED_SIGNATURE' });
  t.same(checkWebhookSignature({ ...base, nowMs: nowMs + 5 * 60_000 + 1 }), { valid: false, reason: 'TIMESTAMP_OUT_OF_TOLERANCE' }, 'default tolerance 5 min');
  t.equal(verifyWebhookSignature({ ...base, nowMs: nowMs - 5 * 60_000 }), true, 'at the edge of the tolerance');
  t.equal(verifyWebhookSignature({ ...base, nowMs: nowMs + 61_000, toleranceMs: 60_000 }), false, 'custom tolerance');
  t.equal(verifyWebhookSignature({ ...base, nowMs: nowMs + 10 * 365 * 86_400_000, toleranceMs: Infinity }), true, 'tolerance disabled');
  t.equal(verifyWebhookSignature({ ...base, nowMs: undefined }), false, "default clock is the receiver's real clock");
});

t.test("the README's Fastify receiver accepts real deliveries and rejects a forged one", async (t) => {
  // docs/webhooks.md, typed for TypeScript; keep the two in step
  const received: Array<{ eventType: string; transactionId: string }> = [];
  const receiverApp = Fastify();
  receiverApp.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  receiverApp.post('/webhooks', async (req, reply) => {
    const h = req.headers as Record<string, string | undefined>;
    const ok = verifyWebhookSignature({ apiKey: h['x-service-api-key'], secret: WEBHOOK.secret, timestamp: h['x-service-timestamp'],
      signature: h['x-service-signature'], path: req.url, rawBody: req.body as Buffer });
    if (!ok) return reply.code(401).send();
    const { transaction, metadata } = JSON.parse((req.body as Buffer).toString('utf8'));
    received.push({ eventType: metadata.eventType, transactionId: transaction.id });
    return reply.code(204).send();
  });
  await receiverApp.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(receiverApp.server.address() as AddressInfo).port}/webhooks`;
  const sandbox = await buildTestApp({ config: { webhookUrl: url } });
  const dispatcher = startWebhookDispatcher(sandbox.ctx);
  t.teardown(async () => {
    await dispatcher.stop();
    await receiverApp.close();
    await sandbox.close();
  });

  const deposit = createTestDeposit(sandbox.ctx);
  advanceClock(sandbox.ctx, 1000);
  await dispatcher.drain();
  t.same(received, [
    { eventType: 'transaction_created', transactionId: deposit.id },
    { eventType: 'transaction_status_updated', transactionId: deposit.id },
  ]);
  const log = json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/webhooks/deliveries' }));
  t.ok(log.data.every((d: { status: string; lastResponseStatus: number }) => d.status === 'DELIVERED' && d.lastResponseStatus === 204));

  // replaying a logged request with a changed body is refused
  const attempt = log.data[0].attempts[0];
  const forged = await fetch(url, {
    method: 'POST',
    headers: attempt.requestHeaders,
    body: attempt.requestBody.replace('"COMPLETED"', '"FAILED"'),
  });
  t.equal(forged.status, 401);
  const genuine = await fetch(url, { method: 'POST', headers: attempt.requestHeaders, body: attempt.requestBody });
  t.equal(genuine.status, 204, 'the logged request itself still verifies (within the tolerance)');
});

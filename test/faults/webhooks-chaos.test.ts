import t, { type Test } from 'tap';
import { buildTestApp, json, START, type TestApp } from '../helper.js';
import { createTestDeposit, startReceiver, type Receiver, type ReceivedRequest } from '../helpers/receiver.js';
import { waitUntil } from '../helpers/wait.js';
import { startWebhookDispatcher, type WebhookDispatcher } from '../../src/domains/webhooks/webhooks.dispatcher.js';
import { advanceClock } from '../../src/scheduler/scheduler.js';
import { checkWebhookSignature } from '../../src/webhook-verify.js';
import { startServer, type RunningServer } from '../../src/server.js';
import type { Config } from '../../src/config.js';

// Webhook chaos (docs/faults.md#webhook-chaos) seen by real HTTP receivers through the real dispatcher: duplicates,
// reordering, delays, stale and future timestamps, bad signatures, bursts; times and seeded probabilities; the
// delivery log; validation; DELETE, reset, and a session's own settings. Holds are real time, so the delays here
// are small and only lower bounds are asserted (a loaded machine may be slower, never faster).

const SECRET = 'whsec_sandbox_secret';
const CHAOS = '/_emulator/webhooks/chaos';

interface Chaotic {
  sandbox: TestApp;
  receiver: Receiver;
  dispatcher: WebhookDispatcher;
}

/** A sandbox delivering to a real receiver; `verify` makes the receiver answer 401 to what verifyWebhookSignature refuses. */
async function chaotic(t: Test, options: { verify?: boolean; config?: Partial<Config> } = {}): Promise<Chaotic> {
  const receiver = await startReceiver();
  if (options.verify) receiver.answer = (request) => (verdict(request).valid ? 200 : 401);
  const sandbox = await buildTestApp({ config: { webhookUrl: receiver.url, ...options.config } });
  const dispatcher = startWebhookDispatcher(sandbox.ctx);
  t.teardown(async () => {
    await dispatcher.stop();
    await receiver.close();
    await sandbox.close();
  });
  return { sandbox, receiver, dispatcher };
}

function verdict(request: ReceivedRequest, toleranceMs?: number) {
  return checkWebhookSignature({
    apiKey: String(request.headers['x-service-api-key']),
    secret: SECRET,
    timestamp: String(request.headers['x-service-timestamp']),
    signature: String(request.headers['x-service-signature']),
    path: request.url,
    rawBody: request.rawBody,
    toleranceMs,
  });
}

async function putChaos(sandbox: TestApp, body: unknown, prefix = '') {
  return sandbox.app.inject({ method: 'PUT', url: `${prefix}${CHAOS}`, payload: body as object });
}

async function setChaos(sandbox: TestApp, body: unknown) {
  const answer = await putChaos(sandbox, body);
  if (answer.statusCode !== 200) throw new Error(`chaos not set: ${answer.statusCode} ${answer.body}`);
  return json(answer);
}

async function getChaos(sandbox: TestApp) {
  return json(await sandbox.app.inject({ method: 'GET', url: CHAOS }));
}

async function deliveries(sandbox: TestApp, query = '') {
  return json(await sandbox.app.inject({ method: 'GET', url: `/_emulator/webhooks/deliveries?sortDirection=ASC&pageSize=200${query}` })).data as any[];
}

const eventIdOf = (request: ReceivedRequest): string => request.body.metadata.eventId;
const typeOf = (request: ReceivedRequest): string => request.body.metadata.eventType;

// ---------------------------------------------------------------------------------------------------------
// The settings

t.test('PUT answers the view with defaults, GET adds fired and remaining, DELETE clears', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());

  const off = await getChaos(sandbox);
  t.same(off, {
    seed: 'service-sandbox/webhook-chaos',
    heldNow: 0,
    duplicate: null,
    reorder: null,
    delay: null,
    staleTimestamp: null,
    futureTimestamp: null,
    badSignature: null,
    burst: null,
  }, 'off by default; the default seed is the sandbox seed + "/webhook-chaos"');

  const view = await setChaos(sandbox, {
    duplicate: { probability: 0.25 },
    reorder: { times: 2 },
    delay: { ms: 50 },
    staleTimestamp: {},
    futureTimestamp: { skewSeconds: 120, probability: 0.5, times: 3 },
    badSignature: { times: 1 },
    burst: {},
  });
  t.same(view, {
    seed: 'service-sandbox/webhook-chaos',
    heldNow: 0,
    duplicate: { probability: 0.25, times: null, fired: 0, remaining: null },
    reorder: { probability: null, times: 2, fired: 0, remaining: 2, holdMs: 2000 },
    delay: { probability: null, times: null, fired: 0, remaining: null, ms: 50, minMs: 50, maxMs: 50 },
    staleTimestamp: { probability: null, times: null, fired: 0, remaining: null, skewSeconds: 600 },
    futureTimestamp: { probability: 0.5, times: 3, fired: 0, remaining: 3, skewSeconds: 120 },
    badSignature: { probability: null, times: 1, fired: 0, remaining: 1 },
    burst: { probability: null, times: null, fired: 0, remaining: null, size: 10, windowMs: 2000 },
  });
  t.same(await getChaos(sandbox), view, 'GET shows the same');

  const replaced = await setChaos(sandbox, { seed: 'mine', delay: { minMs: 5, maxMs: 10 } });
  t.equal(replaced.seed, 'mine');
  t.same(replaced.delay, { probability: null, times: null, fired: 0, remaining: null, ms: null, minMs: 5, maxMs: 10 });
  t.equal(replaced.duplicate, null, 'PUT replaces: a kind left out is off');

  const deleted = await sandbox.app.inject({ method: 'DELETE', url: CHAOS });
  t.equal(deleted.statusCode, 204);
  t.equal(deleted.body, '');
  t.same(await getChaos(sandbox), off, 'cleared, the seed back to the default');
  t.equal((await sandbox.app.inject({ method: 'DELETE', url: CHAOS })).statusCode, 204, 'DELETE when off is fine');
});

t.test('bad bodies are a 400 naming the field, and change nothing', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const before = await setChaos(sandbox, { badSignature: { times: 1 } });

  const cases: Array<[string, unknown, string]> = [
    ['unknown top-level field', { duplicates: {} }, 'duplicates'],
    ['unknown field of a kind', { duplicate: { probability: 0.5, ms: 5 } }, 'duplicate.ms'],
    ['probability above 1', { duplicate: { probability: 1.5 } }, 'duplicate.probability'],
    ['probability below 0', { badSignature: { probability: -0.1 } }, 'badSignature.probability'],
    ['probability not a number', { badSignature: { probability: '0.5' } }, 'badSignature.probability'],
    ['times 0', { reorder: { times: 0 } }, 'reorder.times'],
    ['times not an integer', { reorder: { times: 1.5 } }, 'reorder.times'],
    ['delay without ms', { delay: { probability: 0.5 } }, 'delay.ms'],
    ['delay ms and a range', { delay: { ms: 5, minMs: 1, maxMs: 9 } }, 'delay.ms'],
    ['delay minMs above maxMs', { delay: { minMs: 50, maxMs: 10 } }, 'delay.minMs'],
    ['delay minMs alone', { delay: { minMs: 50 } }, 'delay.maxMs'],
    ['delay over a minute', { delay: { ms: 60_001 } }, 'delay.ms'],
    ['negative delay', { delay: { ms: -1 } }, 'delay.ms'],
    ['holdMs 0', { reorder: { holdMs: 0 } }, 'reorder.holdMs'],
    ['skewSeconds 0', { staleTimestamp: { skewSeconds: 0 } }, 'staleTimestamp.skewSeconds'],
    ['skewSeconds over a year', { futureTimestamp: { skewSeconds: 366 * 86_400 } }, 'futureTimestamp.skewSeconds'],
    ['burst of one', { burst: { size: 1 } }, 'burst.size'],
    ['burst window over a minute', { burst: { windowMs: 60_001 } }, 'burst.windowMs'],
    ['empty seed', { seed: '' }, 'seed'],
    ['a kind that is not an object', { duplicate: true }, 'duplicate'],
  ];
  for (const [name, body, fieldRef] of cases) {
    const answer = await putChaos(sandbox, body);
    t.equal(answer.statusCode, 400, name);
    const error = json(answer);
    t.ok(
      error.validationErrors?.some((item: { fieldRef?: string }) => item.fieldRef === fieldRef),
      `${name}: names ${fieldRef} (${JSON.stringify(error.validationErrors)})`,
    );
  }
  const notJson = await sandbox.app.inject({ method: 'PUT', url: CHAOS, payload: '[1]', headers: { 'content-type': 'application/json' } });
  t.equal(notJson.statusCode, 400, 'an array body');
  t.same(await getChaos(sandbox), before, 'no refused PUT changed the settings');
});

// ---------------------------------------------------------------------------------------------------------
// Each effect, seen by a receiver

t.test('duplicate: the same eventId twice, signed afresh; logged as a DUPLICATE attempt; times spent exactly', async (t) => {
  const { sandbox, receiver, dispatcher } = await chaotic(t, { verify: true });
  await setChaos(sandbox, { duplicate: { times: 1 } });
  const first = createTestDeposit(sandbox.ctx, 100n);
  const second = createTestDeposit(sandbox.ctx, 200n);
  await dispatcher.drain();

  const ids = receiver.requests.map(eventIdOf);
  t.equal(receiver.requests.length, 3, 'two events, one of them twice');
  t.equal(new Set(ids).size, 2);
  const twice = ids.find((id) => ids.filter((other) => other === id).length === 2)!;
  t.ok(twice, 'one eventId arrived twice');
  const copies = receiver.requests.filter((request) => eventIdOf(request) === twice);
  t.same(copies[0]!.body, copies[1]!.body, 'the same body');
  t.ok(copies.every((request) => request.answeredStatus === 200), 'both signed correctly (the verifying receiver took both)');

  const chaos = await getChaos(sandbox);
  t.match(chaos.duplicate, { fired: 1, remaining: 0 });
  const delivery = (await deliveries(sandbox)).find((d) => d.eventId === twice);
  t.ok([first.id, second.id].includes(delivery.transactionId), 'one of the two (whichever was acknowledged first spent times)');
  t.equal(delivery.status, 'DELIVERED');
  t.equal(delivery.attemptCount, 1, 'a duplicate is not a scheduled attempt');
  t.same(delivery.attempts.map((a: any) => [a.number, a.kind, a.outcome, a.chaos.map((c: any) => c.type)]), [
    [1, 'SCHEDULED', 'SUCCEEDED', []],
    [2, 'DUPLICATE', 'SUCCEEDED', ['duplicate']],
  ]);
  t.match(delivery.attempts[1].chaos[0].detail, /attempt 1 succeeded/);
  const other = (await deliveries(sandbox)).find((d) => d.eventId !== twice);
  t.same(other.attempts.map((a: any) => a.chaos), [[]], 'the other delivery: no chaos, an empty list');
});

for (const kind of ['staleTimestamp', 'futureTimestamp', 'badSignature'] as const) {
  t.test(`${kind}: a verifying receiver refuses the attempt; the retry is clean and delivered`, async (t) => {
    const { sandbox, receiver, dispatcher } = await chaotic(t, { verify: true });
    await setChaos(sandbox, { [kind]: { times: 1 } });
    createTestDeposit(sandbox.ctx);
    await dispatcher.drain();

    t.equal(receiver.requests.length, 1);
    const refused = receiver.requests[0]!;
    t.equal(refused.answeredStatus, 401, 'refused');
    const sentAt = Number(refused.headers['x-service-timestamp']);
    if (kind === 'badSignature') {
      t.same(verdict(refused), { valid: false, reason: 'SIGNATURE_MISMATCH' });
      t.ok(Math.abs(sentAt - refused.receivedAtMs) < 60_000, 'the timestamp itself is fine');
    } else {
      t.same(verdict(refused), { valid: false, reason: 'TIMESTAMP_OUT_OF_TOLERANCE' });
      t.same(verdict(refused, Infinity), { valid: true }, 'signed over the moved timestamp: only the tolerance check catches it');
      const skew = sentAt - refused.receivedAtMs;
      if (kind === 'staleTimestamp') t.ok(skew <= -599_000 && skew > -660_000, `600 s in the past (${skew} ms)`);
      else t.ok(skew >= 580_000 && skew <= 600_000, `600 s in the future (${skew} ms)`);
    }
    let [delivery] = await deliveries(sandbox);
    t.equal(delivery.status, 'RETRYING', 'the normal retry schedule');

    advanceClock(sandbox.ctx, 5000); // the retry is due (the deposit completes too: a second event, delivered cleanly)
    await dispatcher.drain();
    const sends = receiver.requests.filter((request) => eventIdOf(request) === delivery.eventId);
    t.equal(sends.length, 2);
    t.equal(sends[1]!.answeredStatus, 200, 'the retry is clean');
    t.ok(receiver.requests.every((request) => request === refused || request.answeredStatus === 200), 'nothing else refused');
    [delivery] = await deliveries(sandbox);
    t.equal(delivery.status, 'DELIVERED');
    t.same(delivery.attempts.map((a: any) => a.chaos.map((c: any) => c.type)), [[kind], []], 'the log says what chaos did, per attempt');
    t.equal(delivery.attempts[0].requestHeaders['x-service-timestamp'], String(Date.parse(delivery.attempts[0].signedAt)), 'signedAt is the timestamp sent');
    t.match((await getChaos(sandbox))[kind], { fired: 1, remaining: 0 });
  });
}

t.test('delay: the attempt is held at least ms of real time; a range gives a seeded value in it', async (t) => {
  const { sandbox, receiver, dispatcher } = await chaotic(t);
  await setChaos(sandbox, { delay: { ms: 150, times: 1 } });
  const startedAt = Date.now();
  createTestDeposit(sandbox.ctx);
  await waitUntil(async () => (await getChaos(sandbox)).heldNow === 1, 'the held attempt');
  t.equal(receiver.requests.length, 0, 'nothing arrived while held');
  await dispatcher.drain();
  t.equal(receiver.requests.length, 1);
  // the log's detail is the proof; the arrival time only shows a hold happened (5 ms: libuv times the hold from its
  // cached loop time, which can be older than Date.now() was here)
  t.ok(receiver.requests[0]!.receivedAtMs - startedAt >= 145, `arrived after ${receiver.requests[0]!.receivedAtMs - startedAt} ms`);
  const [delivery] = await deliveries(sandbox);
  t.same(delivery.attempts[0].chaos, [{ type: 'delay', detail: 'held 150 ms before it was sent' }]);

  await setChaos(sandbox, { delay: { minMs: 20, maxMs: 80 } });
  for (let i = 0; i < 4; i++) createTestDeposit(sandbox.ctx, BigInt(300 + i));
  await dispatcher.drain();
  const held = (await deliveries(sandbox)).slice(1).map((d) => Number(/held (\d+) ms/.exec(d.attempts[0].chaos[0].detail)![1]));
  t.equal(held.length, 4);
  t.ok(held.every((ms) => ms >= 20 && ms <= 80), `each in [20, 80]: ${held.join(', ')}`);

  await setChaos(sandbox, { delay: { ms: 0, times: 1 } });
  createTestDeposit(sandbox.ctx, 900n);
  await dispatcher.drain();
  t.same((await deliveries(sandbox)).at(-1).attempts[0].chaos, [{ type: 'delay', detail: 'held 0 ms before it was sent' }], 'a delay of 0 ms fired is still logged');
  t.match((await getChaos(sandbox)).delay, { fired: 1, remaining: 0 });
});

t.test('reorder: the created event is held until the status event of its transaction has been sent', async (t) => {
  const { sandbox, receiver, dispatcher } = await chaotic(t);
  await setChaos(sandbox, { reorder: { times: 1, holdMs: 20_000 } });
  const deposit = createTestDeposit(sandbox.ctx);
  await waitUntil(async () => (await getChaos(sandbox)).heldNow === 1, 'the held created event');
  advanceClock(sandbox.ctx, 1000); // the deposit completes: transaction_status_updated
  await dispatcher.drain();

  t.same(receiver.requests.map(typeOf), ['transaction_status_updated', 'transaction_created'], 'the receiver sees them out of order');
  t.same(receiver.requests.map((r) => r.body.transaction.id), [deposit.id, deposit.id]);
  const [created, updated] = await deliveries(sandbox, `&transactionId=${deposit.id}`);
  t.same(created.attempts[0].chaos, [{ type: 'reorder', detail: `held until ${updated.eventId}, a later event of the same transaction, had been sent` }]);
  t.same(updated.attempts[0].chaos, [], 'the event sent first had nothing done to it');
  t.same([created.status, updated.status], ['DELIVERED', 'DELIVERED']);
  t.match((await getChaos(sandbox)).reorder, { fired: 1, remaining: 0, holdMs: 20_000 });
});

t.test('reorder: with no later event, the hold ends after holdMs and the event is sent anyway', async (t) => {
  const { sandbox, receiver, dispatcher } = await chaotic(t);
  await setChaos(sandbox, { reorder: { holdMs: 100 } });
  const startedAt = Date.now();
  const deposit = createTestDeposit(sandbox.ctx);
  await dispatcher.drain();
  t.equal(receiver.requests.length, 1);
  t.ok(receiver.requests[0]!.receivedAtMs - startedAt >= 95, 'held at least holdMs (less libuv\'s loop-time margin)');
  const [delivery] = await deliveries(sandbox);
  t.same(delivery.attempts[0].chaos, [{ type: 'reorder', detail: `held 100 ms; no later event of transaction ${deposit.id} was sent meanwhile` }]);
});

t.test('burst: deliveries are held until size wait, then sent at once; a window releases a short burst', async (t) => {
  const { sandbox, receiver, dispatcher } = await chaotic(t);
  await setChaos(sandbox, { burst: { size: 3, windowMs: 20_000, times: 3 } });
  createTestDeposit(sandbox.ctx, 100n);
  createTestDeposit(sandbox.ctx, 200n);
  await waitUntil(async () => (await getChaos(sandbox)).heldNow === 2, 'two held');
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(receiver.requests.length, 0, 'nothing sent while fewer than size wait');
  createTestDeposit(sandbox.ctx, 300n);
  await dispatcher.drain();
  t.equal(receiver.requests.length, 3, 'all three once the third joined');
  for (const delivery of await deliveries(sandbox)) {
    t.same(delivery.attempts[0].chaos, [{ type: 'burst', detail: 'sent at once with 2 other held deliveries (burst: 3 were waiting)' }]);
  }

  // the window: one transaction's two events, both held, released together (order not kept)
  await setChaos(sandbox, { burst: { size: 10, windowMs: 100 } });
  const deposit = createTestDeposit(sandbox.ctx, 400n);
  await waitUntil(async () => (await getChaos(sandbox)).heldNow === 1, 'the created event held');
  advanceClock(sandbox.ctx, 1000);
  await dispatcher.drain();
  const last = await deliveries(sandbox, `&transactionId=${deposit.id}`);
  t.equal(last.length, 2);
  t.ok(
    // (the three earlier deposits completed too: their status events are in the same burst)
    last.every((d) => d.status === 'DELIVERED' && /^sent at once with 4 other held deliveries \(burst: the 100 ms window ended\)$/.test(d.attempts[0].chaos[0].detail)),
    'the later event joined the burst while the earlier one was held: ordering is bypassed',
  );
});

t.test('burst larger than the dispatcher concurrency still fills', async (t) => {
  const { sandbox, receiver, dispatcher } = await chaotic(t);
  await setChaos(sandbox, { burst: { size: 12, windowMs: 30_000 } });
  sandbox.ctx.db.transaction(() => {
    for (let i = 0; i < 12; i++) createTestDeposit(sandbox.ctx, BigInt(100 + i));
  })();
  await dispatcher.drain();
  t.equal(receiver.requests.length, 12);
  t.ok(
    (await deliveries(sandbox)).every((d) => /with 11 other held deliveries \(burst: 12 were waiting\)/.test(d.attempts[0].chaos[0].detail)),
    'all twelve in one burst, past the concurrency of 8',
  );
});

// ---------------------------------------------------------------------------------------------------------
// Counting and seeds

t.test('times is spent exactly; probability with times draws until N fired', async (t) => {
  const { sandbox, receiver, dispatcher } = await chaotic(t);
  await setChaos(sandbox, { badSignature: { times: 2 } });
  for (let i = 0; i < 5; i++) createTestDeposit(sandbox.ctx, BigInt(100 + i));
  await dispatcher.drain();
  t.equal(receiver.requests.length, 5, 'an accepting receiver: no retries');
  const bad = receiver.requests.filter((request) => !verdict(request).valid).length;
  t.equal(bad, 2, 'exactly two badly signed');
  t.match((await getChaos(sandbox)).badSignature, { fired: 2, remaining: 0 });

  await setChaos(sandbox, { seed: 'count', badSignature: { probability: 0.5, times: 3 } });
  for (let i = 0; i < 20; i++) createTestDeposit(sandbox.ctx, BigInt(200 + i));
  await dispatcher.drain();
  const later = receiver.requests.slice(5).filter((request) => !verdict(request).valid).length;
  t.equal(later, 3, 'three fired over 20 attempts, no more');
  t.match((await getChaos(sandbox)).badSignature, { fired: 3, remaining: 0 });
});

async function patternOf(t: Test, seed: string | undefined): Promise<string> {
  const { sandbox, dispatcher } = await chaotic(t);
  await setChaos(sandbox, seed === undefined ? { badSignature: { probability: 0.5 }, duplicate: { probability: 0.3 } } : { seed, badSignature: { probability: 0.5 }, duplicate: { probability: 0.3 } });
  for (let i = 0; i < 16; i++) createTestDeposit(sandbox.ctx, BigInt(100 + i));
  await dispatcher.drain();
  return (await deliveries(sandbox)).map((d) => `${d.eventId}:${d.attempts.map((a: any) => a.chaos.map((c: any) => c.type).join('+') || '-').join(',')}`).join(' ');
}

t.test('a seed gives the same chaos on two fresh sandboxes; another seed another', async (t) => {
  const a = await patternOf(t, 'seed-one');
  const b = await patternOf(t, 'seed-one');
  const c = await patternOf(t, 'seed-two');
  const d = await patternOf(t, undefined);
  const e = await patternOf(t, undefined);
  t.equal(a, b, 'same seed, same requests: same chaos');
  t.not(a, c, 'another seed: another pattern');
  t.equal(d, e, 'the default seed is deterministic too');
  t.match(a, /badSignature/, 'some fired');
  t.match(a, /:-/, 'some did not');
  t.comment(a);
});

// ---------------------------------------------------------------------------------------------------------
// Reset, replays, sessions

t.test('reset clears the chaos and drops held attempts; replays are never touched', async (t) => {
  const { sandbox, receiver, dispatcher } = await chaotic(t);
  await setChaos(sandbox, { badSignature: {} });
  createTestDeposit(sandbox.ctx);
  await dispatcher.drain();
  const [delivery] = await deliveries(sandbox);
  const replay = json(await sandbox.app.inject({ method: 'POST', url: `/_emulator/webhooks/deliveries/${delivery.id}/replay` }));
  t.same(replay.attempts.map((a: any) => [a.kind, a.chaos]), [['SCHEDULED', [{ type: 'badSignature', detail: "X-Service-Signature made with a secret that is not the programme's webhook secret" }]], ['REPLAY', []]]);
  t.same(verdict(receiver.requests[1]!), { valid: true }, 'the replay is signed correctly');

  await setChaos(sandbox, { delay: { ms: 20_000 } });
  createTestDeposit(sandbox.ctx, 500n);
  await waitUntil(async () => (await getChaos(sandbox)).heldNow === 1, 'a held attempt');
  t.equal((await sandbox.app.inject({ method: 'POST', url: '/_emulator/reset' })).statusCode, 200);
  const after = await getChaos(sandbox);
  t.equal(after.delay, null, 'the settings are gone');
  t.equal(after.heldNow, 0, 'the held attempt was dropped');
  await dispatcher.drain({ timeoutMs: 5000 });
  t.equal(receiver.requests.length, 2, 'the dropped attempt was never sent');
});

t.test('DELETE sends held attempts at once', async (t) => {
  const { sandbox, receiver, dispatcher } = await chaotic(t);
  await setChaos(sandbox, { delay: { ms: 30_000 } });
  createTestDeposit(sandbox.ctx);
  await waitUntil(async () => (await getChaos(sandbox)).heldNow === 1, 'a held attempt');
  t.equal((await sandbox.app.inject({ method: 'DELETE', url: CHAOS })).statusCode, 204);
  await dispatcher.drain({ timeoutMs: 10_000 });
  t.equal(receiver.requests.length, 1);
  const [delivery] = await deliveries(sandbox);
  t.same(delivery.attempts[0].chaos, [{ type: 'delay', detail: 'released early: the chaos settings were cleared' }]);
});

async function call(url: string, method = 'GET', body?: unknown) {
  const response = await fetch(url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

t.test('a session has its own chaos; the root is untouched; ending the session ends it', async (t) => {
  const rootReceiver = await startReceiver();
  const sessionReceiver = await startReceiver();
  const server: RunningServer = await startServer({
    config: { port: 0, host: '127.0.0.1', logLevel: 'silent', clock: START, webhookUrl: rootReceiver.url } as never,
  });
  t.teardown(async () => {
    await server.close();
    await rootReceiver.close();
    await sessionReceiver.close();
  });
  const created = await call(`${server.url}/_emulator/sessions`, 'POST', { webhookUrl: sessionReceiver.url });
  t.equal(created.status, 201);
  const session = created.body.baseUrl as string;

  const put = await call(`${session}${CHAOS}`, 'PUT', { seed: 'session', duplicate: { times: 1 } });
  t.equal(put.status, 200);
  t.equal(put.body.seed, 'session');
  t.equal((await call(`${server.url}${CHAOS}`)).body.duplicate, null, "the root's chaos is off");

  const trigger = { transactionId: 'txn_hist_acme_usd_001', eventType: 'transaction_created' };
  t.equal((await call(`${session}/_emulator/webhooks/trigger`, 'POST', trigger)).status, 202);
  t.equal((await call(`${server.url}/_emulator/webhooks/trigger`, 'POST', trigger)).status, 202);
  await waitUntil(() => sessionReceiver.requests.length === 2 && rootReceiver.requests.length === 1, 'the deliveries');
  t.equal(eventIdOf(sessionReceiver.requests[0]!), eventIdOf(sessionReceiver.requests[1]!), 'the session receiver got a duplicate');
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.equal(rootReceiver.requests.length, 1, 'the root receiver got its event once');
  t.match((await call(`${session}${CHAOS}`)).body.duplicate, { fired: 1, remaining: 0 });

  t.equal((await call(`${server.url}/_emulator/sessions/${created.body.id}`, 'DELETE')).status, 204);
  t.equal((await call(`${session}${CHAOS}`)).status, 404, 'an ended session has no chaos to read');
});

t.test('migration 011 keeps the attempts of a database written before it, with an empty chaos list', async (t) => {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const path = await import('node:path');
  const { default: Database } = await import('better-sqlite3');
  const { migration004Webhooks } = await import('../../src/db/migrations/004-webhooks.js');
  const dir = mkdtempSync(path.join(tmpdir(), 'chaos-migration-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'old.db');

  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const first = await buildTestApp({ db: file, config: { webhookUrl: receiver.url } });
  const dispatcher = startWebhookDispatcher(first.ctx);
  createTestDeposit(first.ctx);
  await dispatcher.drain();
  await dispatcher.stop();
  const before = (await deliveries(first))[0];
  await first.close();

  // back to the table of migration 004 (no chaos column, no DUPLICATE kind), at version 10
  const old = new Database(file);
  const table = /CREATE TABLE webhook_attempts \([\s\S]*?\n\);/.exec(migration004Webhooks.sql as string)![0];
  old.exec(`ALTER TABLE webhook_attempts RENAME TO webhook_attempts_now; ${table}
    INSERT INTO webhook_attempts SELECT id, delivery_id, number, kind, url, attempted_at, attempted_at_ms, signed_at_ms, request_headers,
      request_body, outcome, response_status, response_body, error, latency_ms FROM webhook_attempts_now;
    DROP TABLE webhook_attempts_now;`);
  old.pragma('user_version = 10');
  old.close();

  const reopened = await buildTestApp({ db: file });
  t.teardown(() => reopened.close());
  const after = (await deliveries(reopened))[0];
  t.same(after, { ...before, attempts: before.attempts.map((attempt: any) => ({ ...attempt, chaos: [] })) }, 'the same delivery and attempts, chaos []');
  const columns = reopened.ctx.db.prepare("SELECT name FROM pragma_table_info('webhook_attempts')").all().map((row: any) => row.name);
  t.ok(columns.includes('chaos'));
});

import tap from 'tap';
import { startServer, type RunningServer } from '../../src/server.js';
import type { Config } from '../../src/config.js';
import { START } from '../helper.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { call, signed } from '../helpers/http-client.js';
import { waitUntil } from '../helpers/wait.js';

// POST /_emulator/settle (docs/control-plane.md#settle) over real HTTP, per session and on the root: it answers once
// every job due now has run and every delivery that may be attempted now was attempted and answered, webhook chaos's
// holds included; what waits for the clock or behind an earlier event is reported. No test here sleeps for webhooks.

async function serve(config: Partial<Config> = {}): Promise<RunningServer> {
  return startServer({ config: { port: 0, host: '127.0.0.1', logLevel: 'silent', clock: START, ...config } as never });
}

async function session(server: RunningServer, receiver: Receiver): Promise<string> {
  const created = await call(`${server.url}/_emulator/sessions`, 'POST', { webhookUrl: receiver.url, label: 'settle-test' });
  if (created.status !== 201) throw new Error(created.text);
  return created.body.baseUrl as string;
}

async function deposit(baseUrl: string, amount = '25.00'): Promise<string> {
  const answer = await signed(baseUrl, 'POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount });
  if (answer.status !== 202) throw new Error(answer.text);
  return answer.headers.get('location')!.split('/').pop()!;
}

tap.test('settle: the deposit\'s webhooks are delivered when it answers', async (t) => {
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const server = await serve();
  t.teardown(() => server.close());
  const base = await session(server, receiver);

  const id = await deposit(base);
  t.equal((await call(`${base}/_emulator/clock`, 'POST', { advanceMs: 1000 })).status, 200);
  const settled = await call(`${base}/_emulator/settle`, 'POST', {});
  t.equal(settled.status, 200, settled.text);
  t.equal(settled.body.settled, true);
  t.equal(settled.body.now, new Date(Date.parse(START) + 1000).toISOString(), 'the clock did not move');
  t.same(settled.body.waiting, { jobs: 0, deliveries: 0, items: [] }, 'nothing waits');
  t.equal(settled.body.nextDueAt, null);
  const statuses = receiver.requests.map((request) => `${request.body.transaction.id} ${request.body.transaction.status}`);
  t.same(statuses, [`${id} PENDING`, `${id} COMPLETED`], 'both events reached the receiver, in order, before the answer');
  const log = await call(`${base}/_emulator/webhooks/deliveries`);
  t.ok(log.body.data.every((delivery: { status: string }) => delivery.status === 'DELIVERED'), 'every delivery is DELIVERED');

  const again = await call(`${base}/_emulator/settle`, 'POST');
  t.equal(again.status, 200, 'without a body');
  t.equal(again.body.settled, true);
  t.equal(again.body.jobsRun, 0);
});

tap.test('settle: a retrying delivery and the event behind it are reported with when they are next due', async (t) => {
  const receiver = await startReceiver({ answer: () => 500 });
  t.teardown(() => receiver.close());
  const server = await serve();
  t.teardown(() => server.close());
  const base = await session(server, receiver);

  const id = await deposit(base);
  const first = await call(`${base}/_emulator/settle`, 'POST', { timeoutMs: 5000 });
  t.equal(first.body.settled, true, 'the failed attempt was made and answered: nothing more can happen now');
  t.equal(receiver.requests.length, 1);
  t.equal((await call(`${base}/_emulator/clock`, 'POST', { advanceMs: 1000 })).status, 200); // the deposit completes
  const report = (await call(`${base}/_emulator/settle`, 'POST', {})).body;
  t.equal(report.settled, true);
  t.equal(report.waiting.deliveries, 2);
  const [retrying, behind] = report.waiting.items;
  t.match(retrying, { transactionId: id, status: 'RETRYING', attempts: 1, behind: null, onTheWire: false });
  t.equal(retrying.nextAttemptAt, new Date(Date.parse(START) + 5000).toISOString(), 'the first retry, 5 s after the failed attempt');
  t.match(behind, { transactionId: id, status: 'PENDING', attempts: 0, behind: retrying.id, nextAttemptAt: null }, 'the COMPLETED event waits behind it');
  t.equal(report.nextDueAt, retrying.nextAttemptAt, 'the next job due is the retry');
  t.equal(receiver.requests.length, 1, 'the event behind was not sent');

  // The receiver recovers; moving the clock to the retry and settling delivers both, in order.
  receiver.answer = () => 200;
  t.equal((await call(`${base}/_emulator/clock`, 'POST', { advanceMs: 4000 })).status, 200);
  const done = (await call(`${base}/_emulator/settle`, 'POST', {})).body;
  t.equal(done.settled, true);
  t.same(done.waiting, { jobs: 0, deliveries: 0, items: [] });
  t.same(
    receiver.requests.map((request) => request.body.transaction.status),
    ['PENDING', 'PENDING', 'COMPLETED'],
    'the retry, then the event that waited behind it',
  );
});

tap.test('settle: webhook chaos\'s holds are waited for; a hung receiver ends in the timeout', async (t) => {
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const server = await serve();
  t.teardown(() => server.close());
  const base = await session(server, receiver);

  t.equal((await call(`${base}/_emulator/webhooks/chaos`, 'PUT', { delay: { ms: 400 } })).status, 200);
  await deposit(base);
  const held = await call(`${base}/_emulator/settle`, 'POST', {});
  t.equal(held.body.settled, true);
  t.ok(held.body.waitedMs >= 300, `it waited for the held attempt (${held.body.waitedMs} ms)`);
  t.equal(receiver.requests.length, 1, 'which was sent before the answer');
  t.equal((await call(`${base}/_emulator/webhooks/chaos`, 'DELETE')).status, 204);

  receiver.answer = () => 'hang';
  await deposit(base, '26.00');
  const timedOut = await call(`${base}/_emulator/settle`, 'POST', { timeoutMs: 300 });
  t.equal(timedOut.status, 200);
  t.equal(timedOut.body.settled, false, 'the attempt is still on the wire');
  t.ok(timedOut.body.waitedMs >= 300 && timedOut.body.waitedMs < 5000, `it gave up after timeoutMs (${timedOut.body.waitedMs} ms)`);
  t.match(timedOut.body.waiting.items[0], { status: 'PENDING', onTheWire: true });
  const zero = await call(`${base}/_emulator/settle`, 'POST', { timeoutMs: 0 });
  t.equal(zero.body.settled, false, 'timeoutMs 0 looks once and answers');
});

tap.test('settle: a session ended while its settle waits answers 404, not settled', async (t) => {
  const receiver = await startReceiver({ answer: () => 'hang' });
  t.teardown(() => receiver.close());
  const server = await serve();
  t.teardown(() => server.close());
  const base = await session(server, receiver);
  const id = base.split('/').pop()!;
  await deposit(base);
  const waiting = call(`${base}/_emulator/settle`, 'POST', { timeoutMs: 30_000 });
  // the attempt is on the wire (the receiver never answers), so settle is still waiting when the session ends
  await waitUntil(() => receiver.requests.length === 1, 'the attempt on the wire');
  t.equal((await call(`${server.url}/_emulator/sessions/${id}`, 'DELETE')).status, 204);
  const answer = await waiting;
  t.equal(answer.status, 404, answer.text);
  t.match(answer.body, { errorCode: 'NOT_FOUND', message: 'The sandbox ended while settle waited: its session was ended or expired, or the server is stopping' });
});

tap.test('settle: bad bodies are a 400 naming timeoutMs; the root sandbox settles too', async (t) => {
  const server = await serve();
  t.teardown(() => server.close());
  for (const body of [{ timeoutMs: -1 }, { timeoutMs: 60_001 }, { timeoutMs: 1.5 }, { timeoutMs: '10' }, { wait: true }]) {
    const refused = await call(`${server.url}/_emulator/settle`, 'POST', body);
    t.equal(refused.status, 400, JSON.stringify(body));
    t.match(JSON.stringify(refused.body.validationErrors), /timeoutMs|wait/);
  }
  const root = await call(`${server.url}/_emulator/settle`, 'POST', { timeoutMs: 1000 });
  t.equal(root.status, 200);
  t.equal(root.body.settled, true);
  t.equal(root.body.now, START);
});

import t from 'tap';
import { buildTestApp, CREDENTIALS, json, START, type TestApp } from '../helper.js';
import { readFileSync } from 'node:fs';
import { demoRoute, recordDemo, scenarioRoute, type DemoRecord } from '../helpers/demo-transactions.js';

// The guided demo over HTTP (docs/dashboard.md#run-a-demo): GET /_emulator/demo and POST /_emulator/demo/steps/{n},
// the shipped scenario scenarios/demo.yaml played by the engine (docs/decisions.md#scenario-play): every step runs in
// order to the end with the transactions the TypeScript demo made (test/fixtures/demo-transactions.json); out of
// order, unknown, bad and repeated steps are refused and change nothing; two fresh sandboxes run the same demo with
// the same ids.

/** The demo's steps: 17, as the TypeScript demo had. */
const DEMO_STEPS: readonly unknown[] = Array.from({ length: 17 });
const DEMO_BUSINESS = { externalId: 'demo-northwind-traders' };

/** A session started from the demo (docs/sessions.md#scenarios): the demo's routes play there. */
interface DemoSandbox extends TestApp {
  prefix: string;
}

async function demoSession(options: Parameters<typeof buildTestApp>[0] = {}): Promise<DemoSandbox> {
  const sandbox = await buildTestApp(options);
  const headers = options.config?.adminToken ? { 'x-admin-token': options.config.adminToken } : {};
  const created = await sandbox.app.inject({ method: 'POST', url: '/_emulator/sessions', payload: { scenario: 'demo' }, headers });
  if (created.statusCode !== 201) throw new Error(`session: ${created.statusCode} ${created.body}`);
  return Object.assign(sandbox, { prefix: `/_sessions/${json(created).id as string}` });
}

async function step(sandbox: DemoSandbox, number: number | string) {
  const response = await sandbox.app.inject({ method: 'POST', url: `${sandbox.prefix}/_emulator/demo/steps/${number}` });
  return { status: response.statusCode, body: json(response) };
}

const get = async (sandbox: DemoSandbox, path: string) => json(await sandbox.app.inject({ method: 'GET', url: `${sandbox.prefix}${path}` }));

async function runAll(sandbox: DemoSandbox) {
  const results = [];
  for (let number = 1; number <= DEMO_STEPS.length; number += 1) {
    const result = await step(sandbox, number);
    if (result.status !== 200) throw new Error(`step ${number}: ${result.status} ${JSON.stringify(result.body)}`);
    results.push(result.body);
  }
  return results;
}

t.test('the demo runs to its end: onboarding, deposit, pacs.008 payout, a failed payout, a refund', async (t) => {
  const sandbox = await demoSession();
  t.teardown(sandbox.close);
  const before = await get(sandbox, '/_emulator/demo');
  t.match(before, { completed: 0, next: 1, finished: false, running: false, userId: null, accountId: null });
  t.equal(before.steps.length, DEMO_STEPS.length);
  t.ok(before.steps.every((item: { caption: string; done: boolean }) => item.caption.length > 10 && !item.done), 'every step has a caption, none done');

  const results = await runAll(sandbox);
  t.same(results.map((result) => result.step.number), DEMO_STEPS.map((_, index) => index + 1), 'each step in order');
  const state = await get(sandbox, '/_emulator/demo');
  t.match(state, { completed: DEMO_STEPS.length, next: null, finished: true, userId: /^usr_/, accountId: /^acct_/ });
  t.ok(state.steps.every((item: { done: boolean; summary: string }) => item.done && item.summary), 'every step done with its summary');
  t.comment(state.steps.map((item: { number: number; summary: string }) => `${item.number}. ${item.summary}`).join('\n'));

  const list = (await get(sandbox, `/_emulator/transactions?limit=20&userId=${state.userId}`)).data as Array<{ type: string; status: string; statusCode: string | null; debitAmount: string; creditAmount: string; relatedTransactionId: string | null; id: string }>;
  const summary = list.map((txn) => [txn.type, txn.status, txn.statusCode, txn.type === 'DEPOSIT' ? txn.creditAmount : txn.debitAmount]).reverse();
  t.same(
    summary,
    [
      ['DEPOSIT', 'COMPLETED', null, '5000.00'],
      ['WITHDRAWAL', 'COMPLETED', null, '1250.50'],
      ['WITHDRAWAL', 'FAILED', 'RAIL_REJECTED', '301.41'],
      ['DEPOSIT', 'COMPLETED', null, '250.00'],
      ['REFUND', 'COMPLETED', null, '250.00'],
    ],
    'the deposit, the pacs.008 payout, the failed payout, the second deposit and its refund',
  );
  const refund = list.find((txn) => txn.type === 'REFUND')!;
  t.equal(refund.relatedTransactionId, list.find((txn) => txn.type === 'DEPOSIT' && txn.creditAmount === '250.00')!.id, 'the refund names the deposit it refunds');
  const overview = await get(sandbox, '/_emulator/overview');
  const user = overview.programmes.flatMap((programme: { users: unknown[] }) => programme.users).find((item: { id: string }) => item.id === state.userId);
  t.match(user, { name: 'Northwind Traders Inc', type: 'BUSINESS', enrollmentStatus: 'ACTIVE' });
  t.same(user.accounts.find((account: { id: string }) => account.id === state.accountId).balances, { current: '3749.50', available: '3749.50' }, '5,000 + 250 - 1,250.50 - 250');
  const clock = await get(sandbox, '/_emulator/clock');
  t.equal(clock.mode, 'frozen', 'the demo froze the clock');
  t.equal(clock.now, new Date(Date.parse(START) + 22_000).toISOString(), 'and moved it 22 s in all, step by step (from the scenario\'s clock)');

  const again = await step(sandbox, DEMO_STEPS.length);
  t.equal(again.status, 409, 'a finished demo refuses more steps');
  t.match(again.body.message, /finished/);
});

t.test('the 17 steps give the transactions recorded from the TypeScript demo (test/fixtures/demo-transactions.json)', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const expected = JSON.parse(readFileSync(new URL('../fixtures/demo-transactions.json', import.meta.url), 'utf8')) as DemoRecord;
  const played = await recordDemo(sandbox, expected.steps.length, scenarioRoute(sandbox), { scenario: 'demo' });
  t.same(played, expected, 'a session from the scenario demo, played with /_emulator/scenario/steps/{n}: each step makes and moves the same transactions (ids, types, amounts, statuses), and the clock ends at the same instant');
  const record = await recordDemo(sandbox, expected.steps.length, demoRoute(sandbox), { scenario: 'demo' });
  t.same(record, expected, 'through /_emulator/demo/steps/{n}: the same');
});

t.test('refusals: out of order, repeated, unknown, bad numbers, a step still running; each changes nothing', async (t) => {
  const sandbox = await demoSession();
  t.teardown(sandbox.close);
  const session = sandbox.sessions.get(sandbox.prefix.split('/').pop()!)!.sandbox.ctx;
  const users = () => (session.db.prepare('SELECT COUNT(*) AS n FROM users').get() as { n: number }).n;
  const count = users();

  const early = await step(sandbox, 2);
  t.equal(early.status, 409, 'step 2 before step 1');
  t.match(early.body, { message: 'Step 2 cannot run before step 1; a scenario plays its steps in order', errorCode: 'INVALID_REQUEST' });
  const unknown = await step(sandbox, DEMO_STEPS.length + 1);
  t.equal(unknown.status, 404);
  t.match(unknown.body, { message: `The demo has ${DEMO_STEPS.length} steps; there is no step ${DEMO_STEPS.length + 1}`, errorCode: 'NOT_FOUND' });
  for (const bad of ['0', '-1', '1.5', 'abc', '1001', '%20']) {
    const refused = await step(sandbox, bad);
    t.equal(refused.status, 400, `step ${JSON.stringify(bad)}: 400`);
    t.match(refused.body, { message: /number/ }, 'naming the parameter');
  }
  const withBody = await sandbox.app.inject({ method: 'POST', url: `${sandbox.prefix}/_emulator/demo/steps/1`, payload: { go: true } });
  t.equal(withBody.statusCode, 200, 'a body is ignored (the step takes none)');
  t.equal(users(), count + 1, 'step 1 created the business');
  const repeated = await step(sandbox, 1);
  t.equal(repeated.status, 409, 'step 1 again');
  t.match(repeated.body.message, 'Step 1 of the scenario demo has run already; the next step is 2');
  t.equal(users(), count + 1, 'and created nothing more');
  t.equal((await get(sandbox, '/_emulator/demo')).completed, 1);

  // two requests for the next step at once: one runs it, the other is refused
  const [first, second] = await Promise.all([step(sandbox, 2), step(sandbox, 2)]);
  t.same([first.status, second.status].sort(), [200, 409], 'one runs, one is refused');
  t.match((first.status === 409 ? first : second).body.message, /(is running|has run already)/);
  t.equal((await get(sandbox, '/_emulator/demo')).completed, 2);

  t.equal((await sandbox.app.inject({ method: 'GET', url: `${sandbox.prefix}/_emulator/demo?x=1` })).statusCode, 400, 'GET takes no query');
  t.equal((await sandbox.app.inject({ method: 'DELETE', url: `${sandbox.prefix}/_emulator/demo/steps/3` })).statusCode, 405);
  const inPlace = await sandbox.app.inject({ method: 'POST', url: '/_emulator/demo/steps/1' });
  t.equal(inPlace.statusCode, 409, 'a sandbox that plays no scenario does not run the demo in place');
  t.match(json(inPlace).message, /plays in a session started from it \(POST \/_emulator\/sessions \{ "scenario": "demo" \}/);
  t.match(json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/demo' })), { completed: 0, next: 1 }, 'its GET lists the steps, none run');
});

t.test('a step that cannot run answers 409 with the failed call and ends the demo; a reset starts it over', async (t) => {
  const sandbox = await demoSession();
  t.teardown(sandbox.close);
  // the demo's business already signed up as a PERSON: the sign-up answers 409 (fault rules no longer reach the demo)
  const target = `${sandbox.prefix}/v1/auth/users`;
  const taken = await sandbox.request('POST', target, { externalId: DEMO_BUSINESS.externalId, type: 'PERSON', name: 'Someone Else', email: 'someone@example.com' }, { apiKey: CREDENTIALS.multi.apiKey, secret: CREDENTIALS.multi.secret });
  t.equal(taken.statusCode, 201, taken.body);
  const failed = await step(sandbox, 1);
  t.equal(failed.status, 409);
  t.match(failed.body.message, /^Step 1 of the demo could not run: POST \/v1\/auth\/users -> 409/);
  const state = await get(sandbox, '/_emulator/demo');
  t.match(state, { completed: 1, finished: true, next: null }, 'a failed check ends the demo, as it ends a run');
  t.equal((await step(sandbox, 2)).status, 409, 'no later step runs');
  t.equal((await sandbox.app.inject({ method: 'POST', url: `${sandbox.prefix}/_emulator/reset` })).statusCode, 200);
  t.match(await get(sandbox, '/_emulator/demo'), { completed: 0, next: 1, userId: null }, 'a reset starts the demo over (the session\'s start: the scenario, no step played)');
  t.equal((await step(sandbox, 1)).status, 200, 'once the conflict is gone, the step runs');
  t.equal((await step(sandbox, 2)).status, 200);
});

t.test('deterministic: two fresh sandboxes run the same demo with the same ids and amounts', async (t) => {
  const runs = [];
  for (let index = 0; index < 2; index += 1) {
    const sandbox = await demoSession();
    await runAll(sandbox);
    const state = await get(sandbox, '/_emulator/demo');
    const transactions = (await get(sandbox, `/_emulator/transactions?limit=20&userId=${state.userId}`)).data.map((txn: { id: string; type: string; status: string; debitAmount: string; createdAt: string }) => [txn.id, txn.type, txn.status, txn.debitAmount]);
    runs.push({ steps: state.steps, transactions });
    await sandbox.close();
  }
  t.same(runs[1], runs[0], 'the same summaries (with their ids) and transactions');
});

t.test('with an admin token the demo routes need it', async (t) => {
  const sandbox = await demoSession({ config: { adminToken: 'let-me-in' } });
  t.teardown(sandbox.close);
  t.equal((await sandbox.app.inject({ method: 'GET', url: `${sandbox.prefix}/_emulator/demo` })).statusCode, 401);
  t.equal((await sandbox.app.inject({ method: 'POST', url: `${sandbox.prefix}/_emulator/demo/steps/1` })).statusCode, 401);
  t.equal((await sandbox.app.inject({ method: 'POST', url: `${sandbox.prefix}/_emulator/demo/steps/1`, headers: { 'x-admin-token': 'let-me-in' } })).statusCode, 200);
});

// docs/faults.md#what-rules-never-touch: the demo's own calls to the API are not subject to the sandbox's fault rules
// (an ambiguous rule made step 1 answer 500, a drop rule left it unanswered); a client's request still is.
for (const effect of [{ type: 'ambiguous' }, { type: 'ambiguous', status: 502 }, { type: 'drop' }, { type: 'status', status: 503 }, { type: 'latency', ms: 5000 }] as const) {
  t.test(`the demo runs to its end under a ${JSON.stringify(effect)} rule on every path; the rule fires only for a client`, async (t) => {
    const sandbox = await demoSession();
    t.teardown(sandbox.close);
    const added = await sandbox.app.inject({ method: 'POST', url: `${sandbox.prefix}/_emulator/faults`, payload: { effect } });
    t.equal(added.statusCode, 201);
    const ruleId = json(added).id as string;
    const results = await runAll(sandbox);
    t.equal(results.length, DEMO_STEPS.length, 'every step answered 200');
    const rule = await get(sandbox, `/_emulator/faults/${ruleId}`);
    t.match(rule, { fired: 0, matched: 0 }, "the demo's calls were never matched");
    if (effect.type === 'status') {
      t.equal((await sandbox.request('GET', `${sandbox.prefix}/v1/accounts`)).statusCode, 503, "a client's request is still faulted");
    }
  });
}

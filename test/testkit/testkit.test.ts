import t from 'tap';
import { startSandbox, startSession, startServer } from '../../src/index.js';
import { checkWebhookSignatureForTest } from '../helpers/testkit.js';

// The in-process test kit used exactly as the README shows it (docs/test-kit.md#in-process-test-kit).
t.test('startSandbox: signed calls, deposits, clock, webhooks, reset', async (t) => {
  const started = process.hrtime.bigint();
  const sandbox = await startSandbox({ clock: '2026-03-02T09:00:00.000Z' });
  const startupMs = Number(process.hrtime.bigint() - started) / 1e6;
  t.teardown(() => sandbox.close());
  t.comment(`startSandbox() took ${startupMs.toFixed(1)} ms`);

  t.match(sandbox.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  t.equal(sandbox.credentials.single.apiKey, 'pk_sandbox_single');

  const accounts = await sandbox.signedFetch('GET', '/v1/accounts');
  t.equal(accounts.status, 200);
  const body = (await accounts.json()) as { data: Array<{ id: string }> };
  t.ok(body.data.some((account) => account.id === 'acct_acme_usd'));

  const asJane = await sandbox.signedFetch('GET', '/v1/accounts', undefined, { user: 'usr_jane' });
  t.same(((await asJane.json()) as { data: Array<{ id: string }> }).data.map((a) => a.id), ['acct_jane_usd']);

  const deposit = await sandbox.signedFetch('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', {
    depositInstructionId: 'di_acme_usd_wire',
    amount: '125.00',
    reference: 'TESTKIT-1',
    counterpartyName: 'Initech',
  });
  t.equal(deposit.status, 202);

  const created = await sandbox.webhooks.waitFor((w) => w.body.metadata.eventType === 'transaction_created' && w.body.transaction.debitReference === 'TESTKIT-1');
  t.equal(created.headers['x-service-event-type'], 'transaction_created');
  t.ok(checkWebhookSignatureForTest(created, sandbox.credentials.webhook), 'delivery signature verifies');

  await sandbox.advanceClock(1000);
  const completed = await sandbox.webhooks.waitFor(
    (w) => w.body.metadata.eventType === 'transaction_status_updated' && w.body.transaction.id === created.body.transaction.id,
  );
  t.equal(completed.body.transaction.status, 'COMPLETED');

  await t.rejects(sandbox.webhooks.waitFor(() => false, 50), /no matching webhook/);

  await sandbox.reset();
  t.equal(sandbox.webhooks.received().length, 0, 'reset forgets received webhooks');
  const list = await sandbox.signedFetch('GET', '/v1/transactions?pageSize=200');
  const transactions = (await list.json()) as { data: Array<{ debitReference?: string }> };
  t.notOk(transactions.data.some((tx) => tx.debitReference === 'TESTKIT-1'), 'reset removed the simulated deposit');
});

t.test('startSandbox with a fixtures object and node:test style usage', async (t) => {
  const sandbox = await startSandbox({ clock: '2026-03-02T09:00:00.000Z' });
  t.teardown(() => sandbox.close());
  const health = await fetch(`${sandbox.url}/_emulator/health`);
  t.equal(health.status, 200);
  const clock = (await (await fetch(`${sandbox.url}/_emulator/clock`)).json()) as { now: string; mode: string };
  t.equal(clock.mode, 'frozen');
  t.equal(clock.now, '2026-03-02T09:00:00.000Z');
});

// docs/test-kit.md#sessions-from-node: one running server, a fresh session per test, tests in parallel.
t.test('startSession: parallel tests each in their own session of one running server', async (t) => {
  const server = await startServer({ config: { port: 0, host: '127.0.0.1', logLevel: 'silent', clock: '2026-03-02T09:00:00.000Z' } as never });
  t.teardown(() => server.close());
  process.env.SANDBOX_URL = server.url;
  t.teardown(() => {
    delete process.env.SANDBOX_URL;
  });

  const references = ['PAR-1', 'PAR-2', 'PAR-3', 'PAR-4'];
  const seen = await Promise.all(
    references.map(async (reference) => {
      const sandbox = await startSession(); // SANDBOX_URL
      try {
        t.match(sandbox.url, new RegExp(`^${server.url}/_sessions/ses_[0-9a-f]{16}$`));
        const deposit = await sandbox.signedFetch('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', {
          depositInstructionId: 'di_acme_usd_wire',
          amount: '10.00',
          reference,
        });
        t.equal(deposit.status, 202, `${reference}: deposit accepted`);
        await sandbox.advanceClock(1000);
        const completed = await sandbox.webhooks.waitFor((w) => w.body.transaction.status === 'COMPLETED');
        t.ok(checkWebhookSignatureForTest(completed, sandbox.credentials.webhook), `${reference}: the session's webhook verifies`);
        t.same(
          sandbox.webhooks.received().map((w) => w.body.transaction.debitReference),
          sandbox.webhooks.received().map(() => reference),
          `${reference}: only its own webhooks`,
        );
        await sandbox.snapshot('after-deposit');
        await sandbox.reset();
        const afterReset = (await (await sandbox.signedFetch('GET', '/v1/transactions?pageSize=200')).json()) as { data: Array<{ debitReference?: string }> };
        t.notOk(afterReset.data.some((tx) => tx.debitReference === reference), `${reference}: reset forgets it`);
        await sandbox.restore('after-deposit');
        const restored = (await (await sandbox.signedFetch('GET', '/v1/transactions?pageSize=200')).json()) as { data: Array<{ debitReference?: string }> };
        return restored.data.filter((tx) => references.includes(tx.debitReference ?? '')).map((tx) => tx.debitReference);
      } finally {
        await sandbox.close();
      }
    }),
  );
  t.same(seen, references.map((reference) => [reference]), 'each session saw its own deposit and no other');
  const live = (await (await fetch(`${server.url}/_emulator/sessions`)).json()) as { data: unknown[] };
  t.same(live.data, [], 'close() ended every session');

  const guarded = await startServer({ config: { port: 0, host: '127.0.0.1', logLevel: 'silent', adminToken: 'kit-token' } as never });
  t.teardown(() => guarded.close());
  await t.rejects(startSession({ url: guarded.url, webhooks: false }), /401/, 'a refusal says what the server answered');
  const withToken = await startSession({ url: guarded.url, adminToken: 'kit-token', webhooks: false });
  t.equal((await withToken.signedFetch('GET', '/v1/accounts')).status, 200);
  await withToken.close();
  await withToken.close(); // twice is harmless
});

t.test('addFault and clearFaults, in process and in a session', async (t) => {
  const local = await startSandbox();
  t.teardown(() => local.close());
  const rule = await local.addFault({ match: { method: 'get', path: '/v1/accounts' }, effect: { type: 'status', status: 503 }, times: 1 });
  t.match(rule, { id: 'flt_1', match: { method: 'GET' }, remaining: 1, active: true });
  t.equal((await local.signedFetch('GET', '/v1/accounts')).status, 503, 'in process: the next call fails');
  t.equal((await local.signedFetch('GET', '/v1/accounts')).status, 200, 'then it is spent');
  await t.rejects(local.addFault({ effect: { type: 'status', status: 418 } } as never), /Invalid fault rule: effect.status/, 'a bad rule says what is wrong');
  await local.addFault({ effect: { type: 'status', status: 429 } });
  t.equal((await local.signedFetch('GET', '/v1/accounts')).status, 429);
  await local.clearFaults();
  t.equal((await local.signedFetch('GET', '/v1/accounts')).status, 200, 'cleared');

  const server = await startServer({ config: { port: 0, host: '127.0.0.1', logLevel: 'silent' } as never });
  t.teardown(() => server.close());
  const session = await startSession({ url: server.url, webhooks: false });
  t.teardown(() => session.close());
  const remote = await session.addFault({ match: { path: '/v1/accounts' }, effect: { type: 'ambiguous', status: 502 } });
  t.match(remote, { id: 'flt_1', effect: { type: 'ambiguous', status: 502 } });
  t.equal((await session.signedFetch('GET', '/v1/accounts')).status, 502, 'in a session: the rule acts');
  await t.rejects(session.addFault({ effect: { type: 'latency' } }), { name: 'Error', status: 400 }, 'a refused rule carries the status');
  await session.clearFaults();
  t.equal((await session.signedFetch('GET', '/v1/accounts')).status, 200);
});

t.test('setWebhookChaos: a duplicate delivery reaches the kit\'s receiver; clearWebhookChaos turns it off', async (t) => {
  const sandbox = await startSandbox({ clock: '2026-03-02T09:00:00.000Z' });
  t.teardown(() => sandbox.close());
  const view = await sandbox.setWebhookChaos({ duplicate: { times: 1 } });
  t.match(view, { duplicate: { times: 1, remaining: 1 } });
  await t.rejects(sandbox.setWebhookChaos({ delay: {} } as never), /Invalid webhook chaos: delay.ms/);
  const deposit = await sandbox.signedFetch('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_wire', amount: '12.00', reference: 'KIT-CHAOS' });
  t.equal(deposit.status, 202);
  const first = await sandbox.webhooks.waitFor((w) => w.body.transaction.debitReference === 'KIT-CHAOS');
  await sandbox.webhooks.waitFor((w) => w !== first && w.body.metadata.eventId === first.body.metadata.eventId);
  t.pass('the same event id arrived twice');
  await sandbox.clearWebhookChaos();
  await sandbox.advanceClock(1000);
  const completed = await sandbox.webhooks.waitFor((w) => w.body.transaction.status === 'COMPLETED');
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.equal(sandbox.webhooks.received().filter((w) => w.body.metadata.eventId === completed.body.metadata.eventId).length, 1, 'after clearing: once');
});

// docs/test-kit.md#sessions-from-node, docs/sessions.md#scenarios: a session from a scenario by name, from a file,
// and its given's ids; the kit's default clock does not override the scenario's.
t.test('startSession with a scenario: by name, from a file, what its given made', async (t) => {
  const { mkdtempSync, rmSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const path = await import('node:path');
  const server = await startServer({ config: { port: 0, host: '127.0.0.1', logLevel: 'silent' } });
  t.teardown(() => server.close());
  const demo = await startSession({ url: server.url, scenario: 'demo', webhooks: false });
  t.teardown(() => demo.close());
  t.match(demo.scenario, { name: 'demo', source: 'shipped', steps: 17, given: {} });
  const clock = (await (await fetch(`${demo.url}/_emulator/clock`)).json()) as { now: string };
  t.equal(clock.now, '2026-03-01T12:00:00.000Z', 'the scenario\'s clock');

  const dir = mkdtempSync(path.join(tmpdir(), 'kit-scenario-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'funded.yaml');
  writeFileSync(file, 'name: funded\nclock: 2026-07-01T08:00:00Z\ngiven:\n  users:\n    - as: acme\n      type: BUSINESS\n      name: Acme Widgets\n      accounts: [{ as: usd, currency: USD, balance: "500.00" }]\nsteps:\n  - settle: true\n');
  const funded = await startSession({ url: server.url, scenarioFile: file, webhooks: false });
  t.teardown(() => funded.close());
  t.match(funded.scenario, { name: 'funded', source: 'given', given: { acme: /^usr_/, usd: /^acct_/ } });
  const account = await funded.signedFetch('GET', `/v1/accounts/${funded.scenario!.given.usd}`, undefined, { user: funded.scenario!.given.acme });
  t.equal(account.status, 200);
  t.match(await account.json(), { balances: { available: '500.00' } }, 'funded by the given');
  await t.rejects(startSession({ url: server.url, scenario: 'name: bad\nsteps: []\n', webhooks: false }), /400/, 'a bad scenario is the server\'s 400');
});

// docs/test-kit.md#in-process-test-kit: the attached receiver verifies as every kit's receiver does
// (docs/clients.md#receivers-one-rule-set). Under chaos badSignature the forged attempt is refused (401, so the emulator
// records a failed attempt and retries it) and never matched by waitFor; the genuine retry is. Both kinds of sandbox.
t.test('the attached receiver refuses a forged delivery (chaos badSignature) and takes the genuine retry', async (t) => {
  const server = await startServer({ config: { port: 0, host: '127.0.0.1', logLevel: 'silent' } as never });
  t.teardown(() => server.close());
  const inProcess = await startSandbox({ clock: '2026-03-02T09:00:00.000Z' });
  t.teardown(() => inProcess.close());
  const session = await startSession({ url: server.url, label: 'kit-forged' });
  t.teardown(() => session.close());

  for (const [name, sandbox] of [['startSandbox', inProcess], ['startSession', session]] as const) {
    await sandbox.setWebhookChaos({ badSignature: { times: 1 } });
    const reference = `KIT-FORGED-${name}`;
    const deposit = await sandbox.signedFetch('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_wire', amount: '3.00', reference });
    t.equal(deposit.status, 202);
    // settle answers once the first attempt was answered (docs/control-plane.md#settle): the forged one
    t.equal((await fetch(`${sandbox.url}/_emulator/settle`, { method: 'POST' })).status, 200);
    t.same(sandbox.webhooks.received(), [], `${name}: the forged delivery is not received`);
    t.same(
      sandbox.webhooks.rejected().map((rejected) => [rejected.reason, rejected.path]),
      [['SIGNATURE_MISMATCH', '/webhooks']],
      `${name}: it is refused, with the reason`,
    );
    t.ok(Buffer.isBuffer(sandbox.webhooks.rejected()[0]?.rawBody), 'the refused body as bytes');
    const log = (await (await fetch(`${sandbox.url}/_emulator/webhooks/deliveries`)).json()) as {
      data: Array<{ status: string; attempts: Array<{ responseStatus: number | null; chaos: Array<{ type: string }> }> }>;
    };
    t.match(log.data, [{ status: 'RETRYING', attempts: [{ responseStatus: 401, chaos: [{ type: 'badSignature' }] }] }], `${name}: a failed attempt, to be retried`);

    await sandbox.advanceClock(5_000); // the first retry is due 5 s later (docs/webhooks.md#delivery-rules)
    const genuine = await sandbox.webhooks.waitFor((w) => w.body.transaction.debitReference === reference);
    t.ok(checkWebhookSignatureForTest(genuine, sandbox.credentials.webhook), `${name}: what waitFor matched is genuine`);
    t.ok(Buffer.isBuffer(genuine.rawBody), 'rawBody is the bytes as they came');
    t.equal(genuine.rawBody.toString('utf8'), JSON.stringify(genuine.body), 'the body parsed from those bytes');
    t.equal(sandbox.webhooks.rejected().length, 1, `${name}: nothing else refused`);
    await sandbox.reset();
    t.same([sandbox.webhooks.received(), sandbox.webhooks.rejected()], [[], []], `${name}: reset forgets both lists`);
  }
});

t.test("the attached receiver passes the emulator's receiver check (docs/faults.md#receiver-check)", async (t) => {
  const sandbox = await startSandbox();
  t.teardown(() => sandbox.close());
  const answer = await fetch(`${sandbox.url}/_emulator/webhooks/check`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  t.equal(answer.status, 200);
  const report = (await answer.json()) as { summary: string; cases: Array<{ passed: boolean }> };
  t.equal(report.cases.length, 8);
  t.ok(report.cases.every((item) => item.passed), report.summary);
  t.same(
    sandbox.webhooks.rejected().map((rejected) => rejected.reason),
    ['SIGNATURE_MISMATCH', 'SIGNATURE_MISMATCH', 'TIMESTAMP_OUT_OF_TOLERANCE', 'TIMESTAMP_OUT_OF_TOLERANCE', 'UNKNOWN_KEY'],
    'bad signature, tampered body, stale and future timestamps, another key',
  );
});

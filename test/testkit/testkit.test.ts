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

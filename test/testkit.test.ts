import t from 'tap';
import { startSandbox } from '../src/index.js';
import { checkWebhookSignatureForTest } from './helpers/testkit.js';

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

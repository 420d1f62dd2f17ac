import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import Database from 'better-sqlite3';
import { migrations } from '../../../src/db/migrations/index.js';
import { advance, buildTestApp, json, AS_JANE, type TestApp } from '../../helper.js';
import { balances, expectStatus } from '../../helpers/money-in.js';
import { checkLedger, wrongInFlightFlags } from '../../helpers/ledger.js';
/** The guided demo's steps (scenarios/demo.yaml, played by the demo routes). */
const DEMO_STEPS: readonly unknown[] = Array.from({ length: 17 });

// The in-flight flag of ledger entries (docs/decisions.md#ledger): `in_flight` is 1 exactly while the entry's
// transaction is PENDING or PROCESSING, whatever flow posted the entry and whatever moved the transaction on, so
// `current` and the credit bound (docs/decisions.md#amount-bounds) can be read from partial indexes. Checked after
// every kind of flow over HTTP, across snapshots, reset, and on a database file written before the flag existed.

const TO_GLOBEX = { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_globex', instrumentId: 'bi_globex_usd' };

/** Entries flagged in flight, and entries whose transaction is in flight (equal when the flag is right). */
function inFlightCounts(sandbox: TestApp): { flagged: number; byStatus: number } {
  const db = sandbox.ctx.db;
  const flagged = (db.prepare('SELECT COUNT(*) AS n FROM ledger_entries WHERE in_flight = 1').get() as { n: number }).n;
  const byStatus = (
    db.prepare("SELECT COUNT(*) AS n FROM ledger_entries e JOIN transactions x ON x.id = e.transaction_id WHERE x.status IN ('PENDING', 'PROCESSING')").get() as { n: number }
  ).n;
  return { flagged, byStatus };
}

/** The flag matches its definition on every entry, and every balance and reachable balance its plain sum. */
function check(t: Test, sandbox: TestApp, label: string): number {
  t.same(wrongInFlightFlags(sandbox.ctx), [], `${label}: every in_flight flag is its transaction's status`);
  t.ok(checkLedger(t, sandbox.ctx, label), `${label}: balances and reachable balances equal their plain sums`);
  const counts = inFlightCounts(sandbox);
  t.equal(counts.flagged, counts.byStatus, `${label}: ${counts.flagged} entries in flight`);
  return counts.flagged;
}

async function payout(sandbox: TestApp, key: string, amount: string): Promise<string> {
  const intent = expectStatus(await sandbox.request('POST', '/v1/transaction-intents', { idempotencyKey: key, debitAccountId: 'acct_acme_usd', credit: TO_GLOBEX, creditAmount: amount, creditRail: 'ACH' }), 201);
  return expectStatus(await sandbox.request('POST', `/v1/transaction-intents/${intent.id}/commit`, { idempotencyKey: key }), 200).relatedTransactionId as string;
}

async function intentAndCommit(sandbox: TestApp, body: Record<string, unknown>, as?: typeof AS_JANE): Promise<string> {
  const intent = expectStatus(await sandbox.request('POST', '/v1/transaction-intents', body, as), 201);
  return expectStatus(await sandbox.request('POST', `/v1/transaction-intents/${intent.id}/commit`, { idempotencyKey: body.idempotencyKey }, as), 200).relatedTransactionId as string;
}

async function deposit(sandbox: TestApp, accountId: string, instruction: string, amount: string, as?: typeof AS_JANE): Promise<string> {
  const answer = expectStatus(await sandbox.request('POST', `/v1/sandbox/accounts/${accountId}/deposits`, { depositInstructionId: instruction, amount, reference: 'in flight' }, as), 202);
  return /Deposit (txn_[a-z0-9]+)/.exec(answer.message)![1]!;
}

const control = (sandbox: TestApp, method: 'POST' | 'GET', url: string, payload?: object) => sandbox.app.inject({ method, url, payload });

t.test('every flow that posts entries or moves a transaction keeps in_flight equal to its definition', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  t.equal(check(t, sandbox, 'fixtures'), 0, 'fixture history is settled: nothing in flight');

  // incoming credits post nothing until they complete; outgoing holds are in flight from creation
  const deposited = await deposit(sandbox, 'acct_acme_usd', 'di_acme_usd_ach', '400.00');
  t.equal(check(t, sandbox, 'a deposit in flight'), 0, 'an incoming deposit has no entries while in flight');
  const paid = await payout(sandbox, 'pay-1', '100.00');
  const held = check(t, sandbox, 'a payout held');
  t.ok(held >= 1, 'the payout hold is in flight');
  const ownTransfer = await intentAndCommit(sandbox, { idempotencyKey: 'own-1', debitAccountId: 'acct_acme_usd', credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_eur' }, debitAmount: '50.00' });
  const p2p = await intentAndCommit(sandbox, { idempotencyKey: 'p2p-1', debitAccountId: 'acct_acme_usd', credit: { instrumentType: 'ACCOUNT', accountId: 'acct_jane_usd' }, creditAmount: '25.00' });
  t.ok(check(t, sandbox, 'an own transfer (FX) and a P2P transfer held') >= held + 2, 'their holds are in flight too');
  const doomed = await payout(sandbox, 'pay-2', '10.00');
  const failed = await control(sandbox, 'POST', `/_emulator/transactions/${doomed}/status`, { status: 'FAILED' });
  t.equal(failed.statusCode, 200, failed.body);
  check(t, sandbox, 'a payout forced FAILED (hold and its reversal settled)');
  const processing = await payout(sandbox, 'pay-3', '20.00');
  t.equal((await control(sandbox, 'POST', `/_emulator/transactions/${processing}/status`, { status: 'PROCESSING' })).statusCode, 200);
  check(t, sandbox, 'a payout forced PROCESSING (still in flight)');

  // control-plane injections held at a status, then forced on
  const heldIn = expectStatus(await control(sandbox, 'POST', '/_emulator/accounts/acct_acme_usd/transactions', { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '30.00', status: 'PENDING' }), 201);
  const heldOut = expectStatus(await control(sandbox, 'POST', '/_emulator/accounts/acct_acme_usd/transactions', { type: 'WITHDRAWAL', direction: 'OUTGOING', debitAmount: '15.00', status: 'PROCESSING' }), 201);
  check(t, sandbox, 'injected transactions held PENDING and PROCESSING');
  t.equal((await control(sandbox, 'POST', `/_emulator/transactions/${heldIn.id}/status`, { status: 'COMPLETED' })).statusCode, 200);
  t.equal((await control(sandbox, 'POST', `/_emulator/transactions/${heldOut.id}/status`, { status: 'COMPLETED' })).statusCode, 200);
  check(t, sandbox, 'injected transactions forced COMPLETED');
  expectStatus(await control(sandbox, 'POST', '/_emulator/accounts/acct_acme_usd/transactions', { type: 'WITHDRAWAL', direction: 'OUTGOING', debitAmount: '5.00', status: 'FAILED', statusCode: 'R01' }), 201);
  check(t, sandbox, 'an injection walked to FAILED');

  // a snapshot with holds in flight, the clock settling everything, then the snapshot back
  const saved = inFlightCounts(sandbox).flagged;
  t.ok(saved > 0, 'holds in flight when the snapshot is saved');
  t.equal((await control(sandbox, 'POST', '/_emulator/snapshots', { name: 'in-flight' })).statusCode, 201);
  await advance(sandbox, 120_000);
  t.equal(check(t, sandbox, 'the clock settled every rail step'), 0, 'nothing left in flight');
  for (const id of [deposited, paid, ownTransfer, p2p]) t.equal(json(await sandbox.request('GET', `/v1/transactions/${id}`)).status, 'COMPLETED', `${id} completed`);
  t.equal((await control(sandbox, 'POST', '/_emulator/snapshots/in-flight/restore')).statusCode, 200);
  t.equal(check(t, sandbox, 'the snapshot restored'), saved, 'the holds are in flight again, as saved');
  await advance(sandbox, 120_000);
  check(t, sandbox, 'settled again after the restore');

  // returns and refunds of settled transactions
  const returned = await control(sandbox, 'POST', `/_emulator/transactions/${paid}/return`, { reasonCode: 'R01' });
  t.equal(returned.statusCode, 201, returned.body);
  check(t, sandbox, 'a payout returned');
  await advance(sandbox, 120_000);
  check(t, sandbox, 'the return settled');
  const refund = await intentAndCommit(sandbox, { idempotencyKey: 'refund-1', debitAccountId: 'acct_acme_usd', refundOf: deposited });
  t.ok(check(t, sandbox, 'a refund held') > 0, 'the refund hold is in flight');
  await advance(sandbox, 120_000);
  t.equal(json(await sandbox.request('GET', `/v1/transactions/${refund}`)).status, 'COMPLETED');
  t.equal(check(t, sandbox, 'the refund settled'), 0);

  // a payout that the rail rejects (magic cents: docs/decisions.md#magic-amounts) releases its hold on FAILED
  // and one that stays PROCESSING until forced (.92) keeps its hold in flight
  const rejected = await payout(sandbox, 'pay-4', '3.91');
  const stuck = await payout(sandbox, 'pay-6', '4.92');
  check(t, sandbox, 'a payout the rail will reject, one that will stay PROCESSING');
  await advance(sandbox, 120_000);
  t.equal(json(await sandbox.request('GET', `/v1/transactions/${rejected}`)).status, 'FAILED');
  t.equal(json(await sandbox.request('GET', `/v1/transactions/${stuck}`)).status, 'PROCESSING');
  t.ok(check(t, sandbox, 'the rail rejected one, the other stays PROCESSING') > 0, 'the PROCESSING hold is still in flight');

  // reset with a hold in flight
  await payout(sandbox, 'pay-5', '7.00');
  t.ok(check(t, sandbox, 'more holds') > 0);
  t.equal((await control(sandbox, 'POST', '/_emulator/reset')).statusCode, 200);
  t.equal(check(t, sandbox, 'reset'), 0, 'reset leaves the fixtures, nothing in flight');
});

t.test('the guided demo (deposit, pacs.008 payout, failed payout, refund): the flag is right after every step', async (t) => {
  const root = await buildTestApp();
  t.teardown(root.close);
  // the demo plays in a session started from it (docs/sessions.md#scenarios)
  const created = await root.app.inject({ method: 'POST', url: '/_emulator/sessions', payload: { scenario: 'demo' } });
  t.equal(created.statusCode, 201, created.body);
  const id = JSON.parse(created.body).id as string;
  const sandbox: TestApp = { ...root, ctx: root.sessions.get(id)!.sandbox.ctx };
  let seen = 0;
  for (let number = 1; number <= DEMO_STEPS.length; number += 1) {
    const response = await root.app.inject({ method: 'POST', url: `/_sessions/${id}/_emulator/demo/steps/${number}` });
    t.equal(response.statusCode, 200, `demo step ${number}`);
    seen = Math.max(seen, check(t, sandbox, `demo step ${number}`));
  }
  t.ok(seen > 0, 'some step left a hold in flight');
});

t.test('a database file from before the flag: reopening adds it, right for the entries already there', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sandbox-in-flight-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'state.db');

  const first = await buildTestApp({ db: file });
  await payout(first, 'old-1', '100.00');
  await payout(first, 'old-2', '200.00');
  await intentAndCommit(first, { idempotencyKey: 'old-p2p', debitAccountId: 'acct_acme_usd', credit: { instrumentType: 'ACCOUNT', accountId: 'acct_jane_usd' }, creditAmount: '25.00' });
  await deposit(first, 'acct_acme_usd', 'di_acme_usd_ach', '40.00');
  await advance(first, 100); // nothing settles yet
  const inFlight = check(t, first, 'written with the flag');
  t.ok(inFlight >= 3, 'three holds in flight');
  const before = { acme: await balances(first, 'acct_acme_usd'), jane: await balances(first, 'acct_jane_usd', AS_JANE) };
  t.not(before.acme.current, before.acme.available, 'the holds lower available, not current');
  await first.close();

  // Take the file back to schema version 11: no flag, no index, no counter table, no trigger (what a server of the
  // previous version left).
  const raw = new Database(file);
  raw.exec(`
    DROP TRIGGER ledger_entries_in_flight;
    DROP INDEX ledger_in_flight_by_account;
    DROP TRIGGER in_flight_credits_insert;
    DROP TRIGGER in_flight_credits_update;
    DROP TRIGGER in_flight_credits_delete;
    DROP TABLE in_flight_credits;
    ALTER TABLE ledger_entries DROP COLUMN in_flight;
  `);
  raw.pragma('user_version = 11');
  t.notOk((raw.prepare('SELECT name FROM pragma_table_info(?)').all('ledger_entries') as Array<{ name: string }>).some((column) => column.name === 'in_flight'), 'the old file has no flag');
  raw.close();

  const reopened = await buildTestApp({ db: file });
  t.teardown(reopened.close);
  t.equal(reopened.ctx.db.pragma('user_version', { simple: true }), migrations.at(-1)!.version, 'the migrations ran on the existing file');
  t.equal(check(t, reopened, 'reopened'), inFlight, 'the backfill flagged exactly the entries of in-flight transactions');
  t.same(
    reopened.ctx.db.prepare('SELECT account_id, amount_minor FROM in_flight_credits ORDER BY account_id').all(),
    [{ account_id: 'acct_acme_usd', amount_minor: 4_000 }, { account_id: 'acct_jane_usd', amount_minor: 2_500 }],
    'the backfill counted the deposit towards acme and the P2P transfer towards jane',
  );
  t.same(await balances(reopened, 'acct_acme_usd'), before.acme, 'acme balances unchanged by the migration');
  t.same(await balances(reopened, 'acct_jane_usd', AS_JANE), before.jane, 'jane balances unchanged by the migration');
  await advance(reopened, 120_000);
  t.equal(check(t, reopened, 'settled after reopening'), 0, 'the trigger clears the backfilled flags as the transactions settle');
  t.not((await balances(reopened, 'acct_acme_usd')).current, before.acme.current, 'current moved as they settled');
});

t.test('in_flight_credits follows a transaction row written or deleted by other means than a status change', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const db = sandbox.ctx.db;
  const credits = (accountId: string) => (db.prepare('SELECT amount_minor FROM in_flight_credits WHERE account_id = ?').get(accountId) as { amount_minor: number } | undefined)?.amount_minor ?? 0;
  const first = await deposit(sandbox, 'acct_acme_usd', 'di_acme_usd_ach', '40.00');
  await deposit(sandbox, 'acct_acme_usd', 'di_acme_usd_ach', '2.00');
  const p2p = await intentAndCommit(sandbox, { idempotencyKey: 'p2p-row', debitAccountId: 'acct_acme_usd', credit: { instrumentType: 'ACCOUNT', accountId: 'acct_jane_usd' }, creditAmount: '7.00' });
  t.equal(credits('acct_acme_usd'), 4_200, 'two deposits in flight towards acme');
  t.equal(credits('acct_jane_usd'), 700, 'the P2P transfer in flight towards jane');
  db.pragma('foreign_keys = OFF');
  try {
    db.transaction(() => {
      db.prepare('UPDATE transactions SET credit_amount_minor = 5000 WHERE id = ?').run(first);
      t.equal(credits('acct_acme_usd'), 5_200, 'an in-flight amount rewritten is counted anew');
      db.prepare('DELETE FROM ledger_entries WHERE transaction_id = ?').run(p2p);
      db.prepare('DELETE FROM transactions WHERE id IN (?, ?)').run(first, p2p);
      t.equal(credits('acct_acme_usd'), 200, 'a deleted transaction (as a snapshot restore deletes rows) is taken out');
      t.equal(credits('acct_jane_usd'), 0, 'and the deleted P2P transfer too');
      throw new Error('roll back');
    })();
  } catch (error) {
    t.equal((error as Error).message, 'roll back');
  } finally {
    db.pragma('foreign_keys = ON');
  }
  t.equal(credits('acct_acme_usd'), 4_200, 'rolled back with the rows');
  await advance(sandbox, 120_000);
  t.equal(credits('acct_acme_usd'), 0, 'nothing in flight once settled');
  t.equal(credits('acct_jane_usd'), 0);
  check(t, sandbox, 'settled');
});

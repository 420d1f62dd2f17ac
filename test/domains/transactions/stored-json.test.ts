import t from 'tap';
import { advance, AS_JANE, buildTestApp } from '../../helper.js';
import { fund } from '../../helpers/funding.js';
import { expectStatus } from '../../helpers/money-in.js';
import { toTransaction, type TransactionRow } from '../../../src/domains/transactions/transactions.schema.js';
import { precisionLookup } from '../../../src/domains/transactions/transactions.stored.js';

// A status change stores the transaction's REST JSON in the same UPDATE as the status, built from the row as that
// UPDATE leaves it (docs/architecture.md#row-to-json). Whatever path a transaction took (settled deposit, payout
// through PROCESSING, a rail rejection, the stablecoin sweep that writes the deposit again, the receiver's side of a
// P2P transfer, a forced status), its stored text must be exactly what the row rebuilds to, and what GET answers.

t.test('the stored REST JSON of every transaction equals its row rebuilt, after every kind of status change', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const { ctx } = sandbox;
  fund(ctx, 'acct_acme_usd', '1000.00');

  const deposit = async (account: string, instruction: string, amount: string) =>
    expectStatus(await sandbox.request('POST', `/v1/sandbox/accounts/${account}/deposits`, { depositInstructionId: instruction, amount, counterpartyName: 'Stored JSON' }), 202);
  await deposit('acct_acme_usd', 'di_acme_usd_ach', '10.00'); // PENDING -> COMPLETED
  await deposit('acct_acme_usdc', 'di_acme_usdc_eth', '25.5'); // COMPLETED, then the sweep writes it again
  const commit = async (key: string, credit: Record<string, unknown>, creditAmount: string) => {
    const created = await sandbox.request('POST', '/v1/transaction-intents', { idempotencyKey: key, debitAccountId: 'acct_acme_usd', credit, creditAmount });
    t.equal(created.statusCode, 201, `intent ${key} created`);
    const committed = await sandbox.request('POST', `/v1/transaction-intents/${created.json().id}/commit`, { idempotencyKey: key });
    t.equal(committed.statusCode, 200, `intent ${key} committed`);
    return committed.json().relatedTransactionId as string;
  };
  const bank = { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_globex', instrumentId: 'bi_globex_usd' };
  await commit('stored-payout', bank, '3.00'); // PENDING -> PROCESSING -> COMPLETED
  await commit('stored-rejected', bank, '3.91'); // the .91 magic amount: rejected by the rail, hold reversed
  await commit('stored-p2p', { instrumentType: 'ACCOUNT', accountId: 'acct_jane_usd' }, '4.00'); // the receiver's side
  const forced = await commit('stored-forced', bank, '5.00');
  const force = await sandbox.request('POST', `/_emulator/transactions/${forced}/status`, { status: 'FAILED', statusCode: 'RAIL_REJECTED' });
  t.ok(force.statusCode < 300, `forced status answered ${force.statusCode}`);
  await advance(sandbox, 60_000);

  const rows = ctx.db.prepare('SELECT * FROM transactions ORDER BY id').all() as Array<TransactionRow & { rest_json: string | null }>;
  const statuses = new Set(rows.map((row) => row.status));
  t.same([...statuses].sort(), ['COMPLETED', 'FAILED'], 'every transaction reached a final status');
  t.ok(rows.some((row) => row.category === 'INTERNAL_SWEEP'), 'a sweep ran');
  t.ok(rows.some((row) => row.category === 'P2P' && row.direction === 'INCOMING'), "the receiver's side of the P2P transfer exists");
  for (const row of rows) {
    const rebuilt = JSON.stringify(toTransaction(row, precisionLookup(ctx)));
    t.equal(row.rest_json, rebuilt, `${row.id} (${row.type} ${row.category ?? ''} ${row.status}): stored JSON equals its row rebuilt`);
  }
  for (const row of rows.filter((candidate) => candidate.user_id === 'usr_acme')) {
    const got = await sandbox.request('GET', `/v1/transactions/${row.id}`);
    t.equal(got.body, row.rest_json, `GET /v1/transactions/${row.id} answers the stored text`);
  }
  const janes = rows.filter((row) => row.user_id === 'usr_jane');
  t.ok(janes.length > 0, 'Jane has transactions');
  for (const row of janes) {
    const got = await sandbox.request('GET', `/v1/transactions/${row.id}`, undefined, AS_JANE);
    t.equal(got.body, row.rest_json, `GET /v1/transactions/${row.id} (Jane) answers the stored text`);
  }
});

// docs/architecture.md#row-to-json: a new transaction's row is written once, its REST JSON in the INSERT (no second
// UPDATE of the row and no read back); each later status change is one UPDATE of the row. Counted by a temporary
// trigger on the real table.
t.test('creating a transaction writes its row once; a status change updates it once', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const { ctx } = sandbox;
  fund(ctx, 'acct_acme_usd', '100.00');
  ctx.db.exec(`CREATE TEMP TABLE row_writes (id TEXT, kind TEXT);
    CREATE TEMP TRIGGER count_transaction_inserts AFTER INSERT ON main.transactions BEGIN INSERT INTO row_writes VALUES (NEW.id, 'insert'); END;
    CREATE TEMP TRIGGER count_transaction_updates AFTER UPDATE ON main.transactions BEGIN INSERT INTO row_writes VALUES (NEW.id, 'update'); END;`);
  const writes = () => ctx.db.prepare('SELECT kind, COUNT(*) AS n FROM row_writes GROUP BY kind ORDER BY kind').all();
  const reset = () => ctx.db.exec('DELETE FROM row_writes');

  reset();
  expectStatus(await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: '10.00' }), 202);
  t.same(writes(), [{ kind: 'insert', n: 1 }], 'a deposit: one INSERT, no UPDATE');

  const bank = { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_globex', instrumentId: 'bi_globex_usd' };
  const created = await sandbox.request('POST', '/v1/transaction-intents', { idempotencyKey: 'once', debitAccountId: 'acct_acme_usd', credit: bank, creditAmount: '2.00' });
  reset();
  const committed = await sandbox.request('POST', `/v1/transaction-intents/${created.json().id}/commit`, { idempotencyKey: 'once' });
  t.equal(committed.statusCode, 200);
  t.same(writes(), [{ kind: 'insert', n: 1 }], 'a commit: one INSERT, no UPDATE');

  reset();
  await advance(sandbox, 60_000);
  // the deposit settles (one step), the payout goes PROCESSING then COMPLETED (two steps)
  t.same(writes(), [{ kind: 'update', n: 3 }], 'three status changes: one UPDATE each');
  const rows = ctx.db.prepare('SELECT * FROM transactions WHERE rest_json IS NOT NULL').all() as TransactionRow[];
  for (const row of rows) t.equal((row as TransactionRow & { rest_json: string }).rest_json, JSON.stringify(toTransaction(row, precisionLookup(ctx))), `${row.id}: stored JSON equals its row rebuilt`);
});

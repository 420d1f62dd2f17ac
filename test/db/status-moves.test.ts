import t from 'tap';
import { advance, buildTestApp } from '../helper.js';
import { fund } from '../helpers/funding.js';
import { expectStatus } from '../helpers/money-in.js';

// Migration 014 (docs/architecture.md#the-read-cache, its table of triggers): a status move copies only status and updated_at_ms to the row's
// transaction_accounts rows (two index entries there, not four); a change of type or created_at_ms still copies all
// four keys. Either way the copies equal the transaction's own keys, and the counters equal COUNT(*).
t.test('a status move writes only the keys it changes to transaction_accounts, and the copies stay equal', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const { ctx } = sandbox;
  fund(ctx, 'acct_acme_usd', '100.00');
  ctx.db.exec(`CREATE TEMP TABLE key_writes (column_name TEXT);
    CREATE TEMP TRIGGER count_type_writes AFTER UPDATE OF type ON main.transaction_accounts BEGIN INSERT INTO key_writes VALUES ('type'); END;
    CREATE TEMP TRIGGER count_created_writes AFTER UPDATE OF created_at_ms ON main.transaction_accounts BEGIN INSERT INTO key_writes VALUES ('created_at_ms'); END;
    CREATE TEMP TRIGGER count_status_writes AFTER UPDATE OF status ON main.transaction_accounts BEGIN INSERT INTO key_writes VALUES ('status'); END;`);
  const writes = () => (ctx.db.prepare('SELECT column_name AS c, COUNT(*) AS n FROM key_writes GROUP BY c ORDER BY c').all() as Array<{ c: string; n: number }>).map((row) => `${row.c}:${row.n}`);
  const copiesDiffer = () =>
    ctx.db
      .prepare(
        `SELECT COUNT(*) AS n FROM transaction_accounts a JOIN transactions t ON t.id = a.transaction_id
          WHERE a.type IS NOT t.type OR a.status IS NOT t.status OR a.created_at_ms IS NOT t.created_at_ms OR a.updated_at_ms IS NOT t.updated_at_ms`,
      )
      .get() as { n: number };

  expectStatus(await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: '10.00' }), 202);
  const bank = { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_globex', instrumentId: 'bi_globex_usd' };
  const created = await sandbox.request('POST', '/v1/transaction-intents', { idempotencyKey: 'moves', debitAccountId: 'acct_acme_usd', credit: bank, creditAmount: '2.00' });
  t.equal((await sandbox.request('POST', `/v1/transaction-intents/${created.json().id}/commit`, { idempotencyKey: 'moves' })).statusCode, 200);
  ctx.db.exec('DELETE FROM key_writes');
  await advance(sandbox, 60_000);
  t.same(writes(), ['status:3'], 'three status moves set status on transaction_accounts, never type or created_at_ms');
  t.equal(copiesDiffer().n, 0, 'the copies equal the transactions after the status moves');

  ctx.db.exec('DELETE FROM key_writes');
  const id = (ctx.db.prepare("SELECT id FROM transactions WHERE type = 'WITHDRAWAL' LIMIT 1").get() as { id: string }).id;
  ctx.db.prepare("UPDATE transactions SET type = 'TRANSFER', created_at_ms = created_at_ms - 1 WHERE id = ?").run(id);
  t.same(writes(), ['created_at_ms:1', 'status:1', 'type:1'], 'a change of type or created_at_ms still copies all four keys');
  t.equal(copiesDiffer().n, 0, 'the copies equal the transactions after a change of type');

  const counted = ctx.db
    .prepare(
      `SELECT COUNT(*) AS n FROM transaction_counts c WHERE c.n != (
         SELECT COUNT(*) FROM transactions t WHERE t.type = c.type AND t.status = c.status AND
           (c.scope = 'user:' || t.user_id OR c.scope = 'programme:' || t.programme_id
            OR c.scope IN (SELECT 'account:' || a.account_id FROM transaction_accounts a WHERE a.transaction_id = t.id)))`,
    )
    .get() as { n: number };
  t.equal(counted.n, 0, 'every (scope, type, status) counter equals COUNT(*) of its rows');
});

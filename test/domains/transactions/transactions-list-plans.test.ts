import t from 'tap';
import type { Statement } from 'better-sqlite3';
import { AS_ACME_MULTI, buildTestApp, CREDENTIALS, type Identity } from '../../helper.js';
import { simulateDeposit } from '../../../src/domains/sandbox/sandbox.service.js';
import { refundedMinor } from '../../../src/domains/intents/intent-flows.js';
import { returnTransaction } from '../../../src/emulator/transactions.service.js';
import { createWithdrawal } from '../../helpers/money-in.js';

// Every shape of the transactions list (3 scopes x 4 sorts x 4 filters x 4 time bounds) answers what a plain scan
// of the table answers (the same SQL with NOT INDEXED: ids in order and totalRecords), and no statement the list or
// the refund and return sums run plans a full scan or a temporary sort (docs/decisions.md#list-counters).

const PROGRAMME: Identity = { apiKey: CREDENTIALS.multi.apiKey, secret: CREDENTIALS.multi.secret };
const SCOPES = [
  { name: 'user', as: AS_ACME_MULTI, query: '', table: 'transactions', where: "user_id = 'usr_acme'" },
  { name: 'programme', as: PROGRAMME, query: '', table: 'transactions', where: "programme_id = 'prg_sandbox'" },
  { name: 'account', as: AS_ACME_MULTI, query: 'accountId=acct_acme_usd&', table: 'transaction_accounts', where: "account_id = 'acct_acme_usd'" },
] as const;
const SORTS = { CREATED_AT: 'created_at_ms', UPDATED_AT: 'updated_at_ms', STATUS: 'status', TYPE: 'type' } as const;
const FILTERS = [
  { query: '', where: [] },
  { query: 'type=DEPOSIT&', where: ["type = 'DEPOSIT'"] },
  { query: 'status=COMPLETED&', where: ["status = 'COMPLETED'"] },
  { query: 'type=DEPOSIT&status=PENDING&', where: ["type = 'DEPOSIT'", "status = 'PENDING'"] },
];
const AT = '2026-03-01T12:00:01.000Z';
const AT_MS = Date.parse(AT);
const BOUNDS = [
  { query: '', where: [] },
  { query: `minCreatedAt=${AT}&`, where: [`created_at_ms >= ${AT_MS}`] },
  { query: `minUpdatedAt=${AT}&`, where: [`updated_at_ms >= ${AT_MS}`] },
  { query: `minUpdatedAt=2026-01-01T00:00:00Z&maxUpdatedAt=${AT}&`, where: [`updated_at_ms >= ${Date.parse('2026-01-01T00:00:00Z')}`, `updated_at_ms <= ${AT_MS}`] },
];

t.test('every list shape: the same ids and totals as a plain scan; no full scan or temporary sort in any plan', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const db = sandbox.ctx.db;
  // Some live rows beside the fixture history: completed deposits at 12:00:01 and pending ones after.
  for (let i = 0; i < 30; i += 1) {
    simulateDeposit(sandbox.ctx, { programmeId: 'prg_sandbox', userId: 'usr_acme' }, 'acct_acme_usd', { depositInstructionId: 'di_acme_usd_ach', amount: `${i + 1}.00` });
  }
  const clock = await sandbox.app.inject({ method: 'POST', url: '/_emulator/clock', payload: { advanceMs: 1000 } });
  t.equal(clock.statusCode, 200);
  for (let i = 0; i < 5; i += 1) {
    simulateDeposit(sandbox.ctx, { programmeId: 'prg_sandbox', userId: 'usr_acme' }, 'acct_acme_usd', { depositInstructionId: 'di_acme_usd_ach', amount: '2.00' });
  }

  // Every statement prepared from here on is recorded, to be planned below.
  const seen = new Set<string>();
  const prepare = db.prepare.bind(db);
  db.prepare = ((source: string) => {
    seen.add(source);
    return prepare(source);
  }) as typeof db.prepare;
  t.teardown(() => {
    db.prepare = prepare;
  });

  let shapes = 0;
  for (const scope of SCOPES) {
    for (const [sortBy, column] of Object.entries(SORTS)) {
      for (const filter of FILTERS) {
        for (const bound of BOUNDS) {
          for (const direction of ['ASC', 'DESC']) {
            const url = `/v1/transactions?${scope.query}${filter.query}${bound.query}sortBy=${sortBy}&sortDirection=${direction}&pageSize=7&pageIndex=1`;
            const answer = await sandbox.request('GET', url, undefined, scope.as);
            t.equal(answer.statusCode, 200, url);
            const body = answer.json() as { data: Array<{ id: string }>; totalRecords: number };
            const where = [scope.where, ...filter.where, ...bound.where].join(' AND ');
            const idColumn = scope.table === 'transactions' ? 'id' : 'transaction_id';
            const plain = prepare(`SELECT ${idColumn} AS id FROM ${scope.table} NOT INDEXED WHERE ${where} ORDER BY ${column} ${direction}, ${idColumn} ${direction} LIMIT 7 OFFSET 7`)
              .pluck()
              .all() as string[];
            const total = prepare(`SELECT COUNT(*) FROM ${scope.table} NOT INDEXED WHERE ${where}`).pluck().get() as number;
            t.same({ ids: body.data.map((item) => item.id), total: body.totalRecords }, { ids: plain, total }, url);
            shapes += 1;
          }
        }
      }
    }
  }
  t.equal(shapes, 3 * 4 * 4 * 4 * 2, 'every shape, both directions');

  // The refund and return sums (by related_transaction_id).
  const deposit = prepare("SELECT id FROM transactions WHERE type = 'DEPOSIT' AND status = 'COMPLETED' LIMIT 1").pluck().get() as string;
  t.equal(refundedMinor(sandbox.ctx, deposit), 0n);
  const sent = createWithdrawal(sandbox.ctx, { accountId: 'acct_acme_usd', userId: 'usr_acme', amountMinor: 500n }).id;
  t.equal((await sandbox.app.inject({ method: 'POST', url: '/_emulator/clock', payload: { advanceMs: 60_000 } })).statusCode, 200);
  t.equal(db.prepare('SELECT status FROM transactions WHERE id = ?').pluck().get(sent), 'COMPLETED', 'the withdrawal completed on the rail');
  returnTransaction(sandbox.ctx, sent, { reasonCode: 'R01' });

  const relevant = [...seen].filter((source) => /\bFROM\s+(transactions|transaction_accounts)\b/i.test(source) && !/NOT INDEXED/.test(source) && /^\s*SELECT/i.test(source));
  t.ok(relevant.some((source) => /related_transaction_id = \?/.test(source) && /REFUND/.test(source) && /debit_amount_minor/.test(source)), 'the refund sum was planned');
  t.ok(relevant.some((source) => /related_transaction_id = \?/.test(source) && /INCOMING/.test(source)), 'the return sum was planned');
  t.ok(relevant.length > 10, `${relevant.length} statements planned`);
  for (const source of relevant) {
    const plan = planOf(prepare(`EXPLAIN QUERY PLAN ${source}`) as Statement).map((step) => step.detail);
    const label = source.replace(/\s+/g, ' ').slice(0, 180);
    t.same(plan.filter((detail) => /^SCAN (t|m|transactions|transaction_accounts)\b/.test(detail)), [], `no full scan: ${label}`);
    // A time bound on another column than the sort (sort by createdAt, bounded by updatedAt) reads the bound's index
    // range and sorts what it found: the rows of the range, never the scope (docs/decisions.md#list-counters).
    const sortColumn = /ORDER BY \w+\.(\w+)/.exec(source)?.[1];
    const boundColumn = /\b\w+\.(created_at_ms|updated_at_ms) [<>]=/.exec(source)?.[1];
    if (sortColumn !== undefined && boundColumn !== undefined && boundColumn !== sortColumn) {
      t.ok(plan.some((detail) => /^SEARCH/.test(detail) && detail.includes(`${boundColumn}>?`)), `the bound's range is searched: ${label}`);
    } else {
      t.same(plan.filter((detail) => /TEMP B-TREE/.test(detail)), [], `no temporary sort: ${label}`);
    }
  }
});

/** The plan of a statement with its parameters bound to NULL (better-sqlite3 refuses too few or too many). */
function planOf(statement: Statement): Array<{ detail: string }> {
  for (let count = 0; count <= 64; count += 1) {
    try {
      return statement.all(...new Array(count).fill(null)) as Array<{ detail: string }>;
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
    }
  }
  throw new Error('more than 64 parameters');
}

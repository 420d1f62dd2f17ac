#!/usr/bin/env node
// One-off measurement of the programme-wide transactions list (docs/benchmarks.md#programme-wide-list):
// seeds prg_sandbox with ~1,000,000 transactions across four users (usr_acme 40%, usr_jane 30%, two extra
// users 20% / 10%), then times list pages at programme scope (MULTI_USER key, no user header) against
// usr_acme's own list, calling the list service directly (no HTTP, no page cache), and prints the query
// plan of every statement a list page runs, flagging any full scan or temporary sort.
//   node bench/programme-scope.mjs [rows=1000000] [db file=bench/.data/programme-1m.db]
// Rows are written with one INSERT each (the triggers keep the counters), secondary indexes dropped during
// the load and recreated after, as bench/seed.mjs does. Rows carry a stored REST form (rest_json) built by
// the app's own toTransaction, so a page costs what it costs in the server. No ledger entries: the list
// does not read them.
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const load = (file) => import(pathToFileURL(path.join(ROOT, 'dist', 'src', file)).href);
const ROWS = Number(process.argv[2] ?? 1_000_000);
const FILE = process.argv[3] ?? path.join(ROOT, 'bench', '.data', `programme-${ROWS}.db`);
const START_MS = Date.parse('2026-03-01T00:00:00.000Z');
const SPACING_MS = 6_000;

const { createContext } = await load('create-context.js');
const { toTransaction } = await load('domains/transactions/transactions.schema.js');
const { listTransactionsJson } = await load('domains/transactions/transactions-list.service.js');
const { listTransactionsQuery } = await load('domains/transactions/transactions.schema.js');

function seed() {
  mkdirSync(path.dirname(FILE), { recursive: true });
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(FILE + suffix, { force: true });
  const ctx = createContext({ config: { db: FILE, logLevel: 'silent' } });
  const db = ctx.db;
  db.pragma('journal_mode = MEMORY');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -524288');
  // two more users of prg_sandbox, each with a USD account, copied from usr_jane's rows
  const copy = (table, row, changes) => {
    const next = { ...row, ...changes };
    const columns = Object.keys(next);
    db.prepare(`INSERT INTO ${table} (${columns.join(',')}) VALUES (${columns.map((c) => '@' + c).join(',')})`).run(next);
  };
  const jane = db.prepare("SELECT * FROM users WHERE id = 'usr_jane'").get();
  const janeUsd = db.prepare("SELECT * FROM accounts WHERE id = 'acct_jane_usd'").get();
  for (const n of [1, 2]) {
    copy('users', jane, { id: `usr_perf_${n}`, external_id: `perf-${n}` });
    const changes = { id: `acct_perf_${n}_usd`, user_id: `usr_perf_${n}` };
    for (const column of ['deposit_reconciliation_id', 'account_number', 'reference']) if (column in janeUsd && janeUsd[column] !== null) changes[column] = `${janeUsd[column]}-perf${n}`;
    copy('accounts', janeUsd, changes);
  }
  const accounts = ['usr_acme:acct_acme_usd', 'usr_jane:acct_jane_usd', 'usr_perf_1:acct_perf_1_usd', 'usr_perf_2:acct_perf_2_usd'].map((pair) => {
    const [user, account] = pair.split(':');
    return db.prepare('SELECT * FROM accounts WHERE id = ?').get(account) && { user, account };
  });
  const owner = (i) => { const r = i % 10; return accounts[r < 4 ? 0 : r < 7 ? 1 : r < 9 ? 2 : 3]; };

  const indexes = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('transactions', 'transaction_accounts') AND sql IS NOT NULL").all();
  for (const index of indexes) db.exec(`DROP INDEX ${index.name}`);
  const insert = db.prepare(`INSERT INTO transactions (id, programme_id, user_id, account_id, debit_account_id, credit_account_id, direction, type, status,
    reference_number, debit_amount_minor, debit_currency, debit_rail, credit_amount_minor, credit_currency, fees, tags, rail_behaviour,
    created_at, created_at_ms, updated_at, updated_at_ms, completed_at, rest_json)
    VALUES (@id, 'prg_sandbox', @user_id, @account_id, @debit_account_id, @credit_account_id, @direction, @type, @status,
    @reference_number, @amount, 'USD', 'US.USD.ACH', @amount, 'USD', '[]', '[]', 'NONE',
    @created_at, @created_at_ms, @updated_at, @updated_at_ms, @completed_at, @rest_json)`);
  const precision = (currency) => ctx.fixtures.currencies[currency].precision;
  const started = Date.now();
  for (let start = 0; start < ROWS; start += 20_000) {
    db.transaction(() => {
      for (let i = start; i < Math.min(ROWS, start + 20_000); i += 1) {
        const { user, account } = owner(i);
        const createdMs = START_MS + i * SPACING_MS;
        // every 20,000 rows, 600 consecutive rows (all four users) settle at one instant: change sync meets full pages sharing one updatedAt
        const burst = i % 20_000 >= 10_000 && i % 20_000 < 10_600;
        const updatedMs = burst ? START_MS + (i - (i % 20_000) + 10_600) * SPACING_MS : createdMs + 60_000;
        const deposit = i % 4 !== 3;
        const status = i % 50 === 7 ? 'FAILED' : i % 97 === 5 ? 'PROCESSING' : 'COMPLETED';
        const row = {
          id: `txn_p${String(i).padStart(8, '0')}`, user_id: user, account_id: account,
          debit_account_id: deposit ? null : account, credit_account_id: deposit ? account : null,
          direction: deposit ? 'INCOMING' : 'OUTGOING', type: deposit ? 'DEPOSIT' : 'WITHDRAWAL', status,
          reference_number: `REF${i}`, amount: 1000 + (i % 9000),
          created_at: new Date(createdMs).toISOString(), created_at_ms: createdMs,
          updated_at: new Date(updatedMs).toISOString(), updated_at_ms: updatedMs,
          completed_at: status === 'COMPLETED' ? new Date(updatedMs).toISOString() : null,
        };
        const nulls = Object.fromEntries(['status_reason', 'status_code', 'category', 'external_id', 'deposit_reconciliation_id', 'related_transaction_id',
          'net_debit_amount_minor', 'debit_party', 'debit_memo', 'debit_reference', 'debit_entry_descriptor', 'debit_instrument', 'credit_party',
          'credit_rail', 'credit_instrument', 'exchange_rate', 'base_exchange_rate', 'fx_spread', 'purpose', 'intent_id'].map((column) => [column, null]));
        row.rest_json = JSON.stringify(toTransaction({ ...nulls, ...row, programme_id: 'prg_sandbox', debit_amount_minor: row.amount, credit_amount_minor: row.amount,
          debit_currency: 'USD', credit_currency: 'USD', debit_rail: 'US.USD.ACH', fees: '[]', tags: '[]', rail_behaviour: 'NONE' }, precision));
        insert.run(row);
      }
    })();
  }
  const loaded = Date.now();
  for (const index of indexes) db.exec(index.sql);
  db.pragma('journal_mode = WAL');
  console.log(`seeded ${ROWS} rows in ${((loaded - started) / 1000).toFixed(1)} s, indexes in ${((Date.now() - loaded) / 1000).toFixed(1)} s`);
  db.close();
}

if (!existsSync(FILE) || process.env.RESEED) seed();
const ctx = createContext({ config: { db: FILE, logLevel: 'silent', readCache: 'off' } });
const db = ctx.db;
const total = db.prepare("SELECT COUNT(*) AS n FROM transactions WHERE programme_id = 'prg_sandbox'").get().n;
const counted = db.prepare("SELECT SUM(n) AS n FROM transaction_counts WHERE scope = 'programme:prg_sandbox'").get().n;
console.log(`prg_sandbox: ${total} rows, programme counter ${counted}${total === counted ? ' (equal)' : ' (DIFFERENT)'}`);

// Every statement a page runs, with its parameters, for EXPLAIN QUERY PLAN.
const seen = [];
const prepare = db.prepare.bind(db);
db.prepare = (text) => {
  const statement = prepare(text);
  const record = (method) => (...params) => { seen.push({ text, params }); return statement[method](...params); };
  const proxy = new Proxy(statement, {
    get(target, name) {
      if (name === 'all' || name === 'get') return record(name);
      if (name === 'pluck') return (...args) => { target.pluck(...args); return proxy; };
      const value = target[name];
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return proxy;
};

const programme = { programmeId: 'prg_sandbox', userId: null };
const acme = { programmeId: 'prg_sandbox', userId: 'usr_acme' };
const burstUpdated = new Date(START_MS + (10_600) * SPACING_MS).toISOString();
const mid = new Date(START_MS + Math.floor(ROWS / 2) * SPACING_MS).toISOString();
const cases = [
  ['first page, CREATED_AT DESC', {}],
  ['first page, CREATED_AT ASC', { sortDirection: 'ASC' }],
  ['UPDATED_AT DESC', { sortBy: 'UPDATED_AT' }],
  ['STATUS DESC', { sortBy: 'STATUS' }],
  ['TYPE ASC', { sortBy: 'TYPE', sortDirection: 'ASC' }],
  ['deep page 1000 x 200 (offset 200,000), CREATED_AT', { pageIndex: '1000', pageSize: '200' }],
  ['deep page 1999 x 200 (offset 399,800), CREATED_AT', { pageIndex: '1999', pageSize: '200' }],
  ['past the end (page 99999)', { pageIndex: '99999' }],
  ['status=FAILED', { status: 'FAILED' }],
  ['type=WITHDRAWAL sortBy=STATUS', { type: 'WITHDRAWAL', sortBy: 'STATUS' }],
  ['status=COMPLETED, CREATED_AT ASC', { status: 'COMPLETED', sortDirection: 'ASC' }],
  ['minCreatedAt=middle', { minCreatedAt: mid }],
  ['change sync: UPDATED_AT ASC minUpdatedAt=middle', { sortBy: 'UPDATED_AT', sortDirection: 'ASC', minUpdatedAt: mid }],
  ['change sync pinned to a 600-row instant, page 1', { sortBy: 'UPDATED_AT', sortDirection: 'ASC', minUpdatedAt: burstUpdated, maxUpdatedAt: burstUpdated, pageIndex: '1' }],
  ['minUpdatedAt + type=DEPOSIT', { sortBy: 'UPDATED_AT', minUpdatedAt: mid, type: 'DEPOSIT' }],
  ['accountId=acct_jane_usd', { accountId: 'acct_jane_usd' }],
];
const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
function time(scope, raw) {
  if (scope.userId !== null && raw.accountId === 'acct_jane_usd') raw = { ...raw, accountId: 'acct_acme_usd' };
  const query = listTransactionsQuery.parse(raw);
  let body = '';
  const runs = [];
  for (let n = 0; n < 15; n += 1) {
    const t0 = process.hrtime.bigint();
    body = listTransactionsJson(ctx, scope, query);
    runs.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  const parsed = JSON.parse(body);
  return { ms: median(runs), total: parsed.totalRecords, items: parsed.data.length };
}
const flagged = new Set();
console.log('\ncase | programme ms (totalRecords, items) | usr_acme ms (totalRecords, items)');
for (const [name, raw] of cases) {
  seen.length = 0;
  const p = time(programme, raw);
  const u = time(acme, raw);
  console.log(`${name} | ${p.ms.toFixed(2)} (${p.total}, ${p.items}) | ${u.ms.toFixed(2)} (${u.total}, ${u.items})`);
  for (const { text, params } of seen) {
    if (flagged.has(text)) continue;
    flagged.add(text);
    const plan = prepare(`EXPLAIN QUERY PLAN ${text}`).all(...params).map((row) => row.detail);
    const bad = plan.filter((detail) => /^SCAN (?!\(subquery|.*USING (COVERING )?INDEX)|TEMP B-TREE/.test(detail));
    console.log(`   ${bad.length ? 'CHECK' : 'ok   '} ${text.replace(/\s+/g, ' ').slice(0, 150)}\n         ${plan.join(' | ')}`);
  }
}
db.close();

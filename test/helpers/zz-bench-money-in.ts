import { performance } from 'node:perf_hooks';
import { existsSync, rmSync } from 'node:fs';
import { createContext } from '../../src/context.factory.js';
import { createClock } from '../../src/lib/clock.js';
import { buildApp } from '../../src/app.js';
import { signRequest } from '../../src/lib/hmac.js';
import { listTransactionsJson } from '../../src/domains/transactions/transactions-list.service.js';
import { listTransactionsQuery } from '../../src/domains/transactions/transactions.schema.js';
import { simulateDeposit } from '../../src/domains/sandbox/sandbox.service.js';

const N = Number(process.env.N ?? 1_000_000);
const dbPath = '/tmp/mi/bench/db.sqlite';
const fresh = process.env.FRESH === '1' || !existsSync(dbPath);
if (fresh) for (const f of [dbPath, dbPath + '-wal', dbPath + '-shm']) rmSync(f, { force: true });
const ctx = createContext({ config: { db: dbPath, logLevel: 'silent' }, clock: createClock({ mode: 'frozen', atMs: Date.parse('2026-03-01T12:00:00Z') }) });
const caller = { programmeId: 'prg_sandbox', userId: 'usr_acme' };
if (fresh) {
  ctx.db.transaction(() => simulateDeposit(ctx, caller, 'acct_acme_usd', { depositInstructionId: 'di_acme_usd_ach', amount: '100.00', reference: 'REF-1', counterpartyName: 'Northwind Traders' }))();
  const template = ctx.db.prepare("SELECT * FROM transactions ORDER BY rowid DESC LIMIT 1").get() as Record<string, unknown>;
  const columns = Object.keys(template);
  const insert = ctx.db.prepare(`INSERT INTO transactions (${columns.join(',')}) VALUES (${columns.map(() => '?').join(',')})`);
  const statuses = ['COMPLETED', 'COMPLETED', 'COMPLETED', 'COMPLETED', 'COMPLETED', 'COMPLETED', 'COMPLETED', 'FAILED', 'PENDING', 'PROCESSING'];
  const types = ['DEPOSIT', 'DEPOSIT', 'DEPOSIT', 'WITHDRAWAL', 'WITHDRAWAL', 'TRANSFER', 'REFUND'];
  const accounts = ['acct_acme_usd', 'acct_acme_usd', 'acct_acme_eur', 'acct_acme_usdc'];
  let seed = 42;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed / 2147483648);
  const started = performance.now();
  const base = Date.parse('2024-01-01T00:00:00Z');
  const json = String(template.rest_json);
  const batch = 50_000;
  for (let start = 0; start < N; start += batch) {
    ctx.db.transaction(() => {
      for (let i = start; i < Math.min(N, start + batch); i += 1) {
        const id = `txn_b${String(i).padStart(11, '0')}`;
        const created = base + i * 60_000;
        const updated = created + Math.floor(rnd() * 3_600_000);
        const row = { ...template, id, reference_number: `SBXB${i}`, status: statuses[Math.floor(rnd() * statuses.length)], type: types[Math.floor(rnd() * types.length)], account_id: accounts[i % 4], credit_account_id: accounts[i % 4], debit_account_id: null, created_at_ms: created, created_at: new Date(created).toISOString(), updated_at_ms: updated, updated_at: new Date(updated).toISOString(), rest_json: json.replace(String(template.id), id) };
        insert.run(...columns.map((c) => (row as Record<string, unknown>)[c]));
      }
    })();
  }
  console.log(`inserted ${N} rows in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  ctx.db.exec('ANALYZE');
}
const size = (ctx.db.prepare('SELECT page_count * page_size AS b FROM pragma_page_count(), pragma_page_size()').get() as { b: number }).b;
console.log(`database ${(size / 1e6).toFixed(0)} MB, rows ${(ctx.db.prepare('SELECT COUNT(*) AS n FROM transactions').get() as { n: number }).n}`);

function measure(label: string, queryText: string, iterations = 1500) {
  const query = listTransactionsQuery.parse(Object.fromEntries(new URLSearchParams(queryText)));
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < iterations; i += 1) {
    const t0 = performance.now();
    const out = listTransactionsJson(ctx, caller, query);
    times.push(performance.now() - t0);
    bytes = out.length;
  }
  times.sort((a, b) => a - b);
  const p = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(3);
  const total = JSON.parse(listTransactionsJson(ctx, caller, query)).totalRecords;
  console.log(`${label.padEnd(58)} p50 ${p(0.5)} ms  p99 ${p(0.99)} ms  max ${p(1)} ms  total ${total}  ${bytes} B`);
}
const lastUpdated = (ctx.db.prepare("SELECT updated_at FROM transactions WHERE user_id = 'usr_acme' ORDER BY updated_at_ms DESC LIMIT 1 OFFSET 40").get() as { updated_at: string }).updated_at;
measure('default (CREATED_AT DESC, page 0, 25)', '');
measure('pageSize=200', 'pageSize=200', 500);
measure('accountId=acct_acme_usd', 'accountId=acct_acme_usd');
measure('accountId=acct_acme_eur sortBy=UPDATED_AT ASC', 'accountId=acct_acme_eur&sortBy=UPDATED_AT&sortDirection=ASC');
for (const sortBy of ['CREATED_AT', 'UPDATED_AT', 'STATUS', 'TYPE']) for (const dir of ['ASC', 'DESC']) measure(`sortBy=${sortBy} ${dir}`, `sortBy=${sortBy}&sortDirection=${dir}`, 500);
measure('status=PROCESSING', 'status=PROCESSING');
measure('type=REFUND&status=FAILED', 'type=REFUND&status=FAILED');
measure('status=FAILED sortBy=UPDATED_AT', 'status=FAILED&sortBy=UPDATED_AT', 300);
measure('accountId=acct_acme_usd&type=WITHDRAWAL sortBy=STATUS', 'accountId=acct_acme_usd&type=WITHDRAWAL&sortBy=STATUS', 300);
measure('sync tail: UPDATED_AT ASC minUpdatedAt=<recent>', `sortBy=UPDATED_AT&sortDirection=ASC&minUpdatedAt=${lastUpdated}`);
measure('minCreatedAt=2025-06-01 (about half the rows)', 'minCreatedAt=2025-06-01T00:00:00Z', 20);
measure('sync from the start: minUpdatedAt=2000-01-01 UPDATED_AT ASC', 'sortBy=UPDATED_AT&sortDirection=ASC&minUpdatedAt=2000-01-01T00:00:00Z', 20);
measure('deep page: pageIndex=1000', 'pageIndex=1000', 200);
measure('deep page: pageIndex=39000', 'pageIndex=39000', 10);

// The same page rebuilt from the rows (stored JSON dropped) for comparison.
const ids = (JSON.parse(listTransactionsJson(ctx, caller, listTransactionsQuery.parse({}))).data as Array<{ id: string }>).map((r) => r.id);
ctx.db.prepare(`UPDATE transactions SET rest_json = NULL WHERE id IN (${ids.map(() => '?').join(',')})`).run(...ids);
measure('default page rebuilt from rows (rest_json NULL)', '');
ctx.db.transaction(() => { for (const id of ids) ctx.db.prepare('UPDATE transactions SET rest_json = ? WHERE id = ?').run(JSON.stringify(JSON.parse(listTransactionsJson(ctx, caller, listTransactionsQuery.parse({})))), 'none'); })();

// Over HTTP with HMAC, in process (app.inject).
const app = await buildApp(ctx);
const times: number[] = [];
for (let i = 0; i < 1500; i += 1) {
  const timestamp = String(Date.now());
  const url = '/v1/transactions';
  const headers = { 'x-service-api-key': 'pk_sandbox_single', 'x-service-timestamp': timestamp, 'x-service-program-id': 'prg_sandbox', 'x-service-signature': signRequest({ apiKey: 'pk_sandbox_single', secret: 'sk_sandbox_single_secret', timestamp, method: 'GET', target: url, body: '' }) };
  const t0 = performance.now();
  const r = await app.inject({ method: 'GET', url, headers });
  times.push(performance.now() - t0);
  if (r.statusCode !== 200) throw new Error(r.body);
}
times.sort((a, b) => a - b);
console.log(`HTTP inject GET /v1/transactions: p50 ${times[750]!.toFixed(3)} ms p99 ${times[1485]!.toFixed(3)} ms`);
// A write on the big table: a deposit (insert + triggers + rest_json) and its completion.
const w: number[] = [];
for (let i = 0; i < 200; i += 1) {
  const t0 = performance.now();
  simulateDeposit(ctx, caller, 'acct_acme_usd', { depositInstructionId: 'di_acme_usd_ach', amount: '1.00' });
  w.push(performance.now() - t0);
}
w.sort((a, b) => a - b);
console.log(`simulateDeposit on the big table: p50 ${w[100]!.toFixed(3)} ms p99 ${w[198]!.toFixed(3)} ms`);
await app.close();
ctx.db.close();

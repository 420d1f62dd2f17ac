// SQLite statements per request (bench/README.md, "Profiling"): a commit of a fresh intent and a simulated deposit sent
// through the whole app (`app.inject`: hooks, HMAC, validation, handler, journal) on the built code (dist/), then the
// jobs they scheduled run by advancing the emulated clock. Counted with better-sqlite3's statement trace (each
// statement run, with its literals; triggers run inside the statement that fires them and are not listed).
// Usage: npm run build && node bench/lib/count-statements.mjs [--json]
import { createHmac } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';

const DIST = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'src');
const load = (file) => import(pathToFileURL(path.join(DIST, file)).href);
const { createContext } = await load('create-context.js');
const { buildApp } = await load('app.js');
const { migrate } = await load('db/migrate.js');
const { advanceClock } = await load('scheduler/scheduler.js');

let counting = false;
const seen = new Map();
// one shape per statement: literals out, so the same statement with other values counts together
const shape = (sql) => sql.replace(/'(?:[^']|'')*'(\/\*\+\d+ bytes\*\/)?/g, '?').replace(/\b\d+(\.\d+)?\b/g, '?').replace(/\s+/g, ' ').trim();
const db = new Database(':memory:', { verbose: (sql) => counting && seen.set(shape(sql), (seen.get(shape(sql)) ?? 0) + 1) });
db.pragma('foreign_keys = ON');
migrate(db);
const ctx = createContext({ config: { logLevel: 'silent', clock: '2026-03-02T09:00:00.000Z' }, db });
const app = await buildApp(ctx, {});
const KEY = { apiKey: 'pk_sandbox_single', secret: 'sk_sandbox_single_secret', programId: 'prg_sandbox' };
const send = async (method, url, body) => {
  const payload = body ? JSON.stringify(body) : '';
  const timestamp = String(Date.now());
  const signature = createHmac('sha256', KEY.secret).update(`${KEY.apiKey}${timestamp}${method}${url}${payload}`).digest('hex');
  const headers = { 'x-service-api-key': KEY.apiKey, 'x-service-timestamp': timestamp, 'x-service-program-id': KEY.programId, 'x-service-signature': signature, 'content-type': 'application/json' };
  const response = await app.inject({ method, url, payload: payload || undefined, headers });
  if (response.statusCode >= 300) throw new Error(`${method} ${url} answered ${response.statusCode}: ${response.body}`);
  return JSON.parse(response.body);
};

const runs = 5;
const results = {};
function take(name, per) {
  const rows = [...seen].sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((sum, [, n]) => sum + n, 0);
  const writes = rows.filter(([sql]) => /^(INSERT|UPDATE|DELETE|REPLACE)\b/i.test(sql)).reduce((sum, [, n]) => sum + n, 0);
  results[name] = { statements: total / per, writes: writes / per, each: rows.map(([sql, n]) => ({ perUnit: n / per, sql })) };
  seen.clear();
}

await send('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_wire', amount: '5000000.00', reference: 'funding' });
advanceClock(ctx, 5_000);
const intents = [];
for (let i = 0; i <= runs; i += 1) {
  const idempotencyKey = `count-${i}`;
  const intent = await send('POST', '/v1/transaction-intents', { idempotencyKey, debitAccountId: 'acct_acme_usd', credit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_globex', instrumentId: 'bi_globex_usd' }, creditAmount: '1.00' });
  intents.push({ id: intent.id, idempotencyKey });
}
await send('POST', `/v1/transaction-intents/${intents[0].id}/commit`, { idempotencyKey: intents[0].idempotencyKey }); // warm
advanceClock(ctx, 60_000);

counting = true;
for (const intent of intents.slice(1)) await send('POST', `/v1/transaction-intents/${intent.id}/commit`, { idempotencyKey: intent.idempotencyKey });
counting = false;
take('commit', runs);
counting = true;
const commitJobs = advanceClock(ctx, 60_000);
counting = false;
take('jobs of the commits (per job)', commitJobs);

counting = true;
for (let i = 0; i < runs; i += 1) await send('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: '10.00', reference: `count ${i}` });
counting = false;
take('deposit', runs);
counting = true;
const depositJobs = advanceClock(ctx, 60_000);
counting = false;
take('jobs of the deposits (per job)', depositJobs);
await app.close();

if (process.argv.includes('--json')) {
  process.stdout.write(`${JSON.stringify(results)}\n`);
} else {
  for (const [name, result] of Object.entries(results)) {
    process.stdout.write(`\n== ${name}: ${result.statements.toFixed(1)} statements, ${result.writes.toFixed(1)} of them writes\n`);
    for (const { perUnit, sql } of result.each) process.stdout.write(`${perUnit.toFixed(1).padStart(5)}  ${sql.slice(0, 160)}\n`);
  }
}

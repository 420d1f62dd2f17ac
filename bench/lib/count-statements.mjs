// Count SQLite statements per request (commit of a fresh intent, sandbox deposit) through the whole app (app.inject).
import path from 'node:path';
import { createHmac } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
const DIST = path.resolve('dist/src');
const load = (f) => import(pathToFileURL(path.join(DIST, f)).href);
const { createContext } = await load('create-context.js');
const { buildApp } = await load('app.js');
const { migrate } = await load('db/migrate.js');
const { advanceClock, runDueJobs } = await load('scheduler/scheduler.js');
let counting = false; const seen = new Map();
const db = new Database(process.argv[2] ?? ':memory:', { verbose: (sql) => { if (counting) seen.set(sql, (seen.get(sql) ?? 0) + 1); } });
db.pragma('foreign_keys = ON'); db.pragma('synchronous = NORMAL');
migrate(db);
const ctx = createContext({ config: { logLevel: 'silent' }, db });
const app = await buildApp(ctx, {});
const KEY = { apiKey: 'pk_sandbox_single', secret: 'sk_sandbox_single_secret', programId: 'prg_sandbox' };
function sign(method, target, body = '') { const ts = String(Date.now()); return { 'x-service-api-key': KEY.apiKey, 'x-service-timestamp': ts, 'x-service-program-id': KEY.programId, 'x-service-signature': createHmac('sha256', KEY.secret).update(`${KEY.apiKey}${ts}${method}${target}${body}`).digest('hex'), 'content-type': 'application/json' }; }
const req = async (method, url, body) => { const payload = body ? JSON.stringify(body) : ''; const r = await app.inject({ method, url, payload: payload || undefined, headers: sign(method, url, payload) }); return r; };
let r = await req('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_wire', amount: '5000000.00', reference: 'f' });
advanceClock(ctx, 5000);
const intents = [];
for (let i = 0; i < 5; i++) { const k = `k${i}`; r = await req('POST', '/v1/transaction-intents', { idempotencyKey: k, debitAccountId: 'acct_acme_usd', credit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_globex', instrumentId: 'bi_globex_usd' }, creditAmount: '1.00' }); intents.push({ id: JSON.parse(r.body).id, k }); }
const show = (label, n) => { let total = 0; for (const v of seen.values()) total += v; console.log(`\n== ${label}: ${(total / n).toFixed(1)} statements per request`); for (const [sql, c] of [...seen].sort((a, b) => b[1] - a[1])) console.log(`${(c / n).toFixed(1).padStart(5)}  ${sql.replace(/\s+/g, ' ').slice(0, 150)}`); seen.clear(); };
// warm one
await req('POST', `/v1/transaction-intents/${intents[0].id}/commit`, { idempotencyKey: intents[0].k });
counting = true;
for (let i = 1; i < 5; i++) { r = await req('POST', `/v1/transaction-intents/${intents[i].id}/commit`, { idempotencyKey: intents[i].k }); if (r.statusCode !== 200) throw new Error(r.body); }
counting = false; show('commit', 4);
counting = true;
for (let i = 0; i < 4; i++) { r = await req('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: '10.00', reference: 'bench deposit' }); if (r.statusCode !== 202) throw new Error(r.body); }
counting = false; show('deposit', 4);
counting = true; const ran = runDueJobs(ctx); advanceClock(ctx, 1000); counting = false; console.log('jobs run', ran); show('scheduler pass after', 1);

// CPU time per write in process (bench/README.md, "Profiling"): N commits of fresh intents and N simulated deposits
// sent through the whole app (`app.inject`: hooks, HMAC, validation, handler, journal) on the built code (dist/), on
// an in-memory database, then the rail-step jobs they scheduled run by advancing the emulated clock. Each phase is
// timed with process.cpuUsage() (user + system of this process), which a loaded machine disturbs far less than
// wall-clock throughput. Usage: npm run build && node bench/lib/write-cpu.mjs [N=3000] [--json] [--dist OTHER/dist/src]
import { createHmac } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// --dist DIR: another build's dist/src (a build against build, as bench/lib/ab-list.mjs does for the list)
const distArg = process.argv.indexOf('--dist');
const DIST = distArg > 0 ? path.resolve(process.argv[distArg + 1]) : path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'src');
const load = (file) => import(pathToFileURL(path.join(DIST, file)).href);
const { createContext } = await load('create-context.js');
const { buildApp } = await load('app.js');
const { advanceClock } = await load('scheduler/scheduler.js');

const N = Number(process.argv.slice(2).find((arg) => /^\d+$/.test(arg)) ?? 3000);
const ctx = createContext({ config: { logLevel: 'silent', clock: '2026-03-02T09:00:00.000Z' } });
const app = await buildApp(ctx, {});
const KEY = { apiKey: 'pk_sandbox_single', secret: 'sk_sandbox_single_secret', programId: 'prg_sandbox' };
const send = async (method, url, body) => {
  const payload = body ? JSON.stringify(body) : '';
  const timestamp = String(Date.now());
  const signature = createHmac('sha256', KEY.secret).update(`${KEY.apiKey}${timestamp}${method}${url}${payload}`).digest('hex');
  const headers = { 'x-service-api-key': KEY.apiKey, 'x-service-timestamp': timestamp, 'x-service-program-id': KEY.programId, 'x-service-signature': signature, 'content-type': 'application/json' };
  const response = await app.inject({ method, url, payload: payload || undefined, headers });
  if (response.statusCode >= 300) throw new Error(`${method} ${url} answered ${response.statusCode}: ${response.body}`);
  return response.body;
};
const cpuMs = (since) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

await send('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_wire', amount: '50000000.00', reference: 'funding' });
advanceClock(ctx, 5_000);
const intents = [];
for (let i = 0; i < N; i += 1) {
  const idempotencyKey = `cpu-${i}`;
  const intent = JSON.parse(await send('POST', '/v1/transaction-intents', { idempotencyKey, debitAccountId: 'acct_acme_usd', credit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_globex', instrumentId: 'bi_globex_usd' }, creditAmount: '1.00' }));
  intents.push({ id: intent.id, idempotencyKey });
}
advanceClock(ctx, 60_000);

const results = {};
let start = process.cpuUsage();
for (const intent of intents) await send('POST', `/v1/transaction-intents/${intent.id}/commit`, { idempotencyKey: intent.idempotencyKey });
results.commit = cpuMs(start) / N;
start = process.cpuUsage();
let jobs = 0;
// PENDING -> PROCESSING, then PROCESSING -> COMPLETED: both steps of every commit
for (let i = 0; i < 4; i += 1) jobs += advanceClock(ctx, 3_600_000);
results.commitJobs = cpuMs(start) / N;
results.commitJobsPerJob = (cpuMs(start) / jobs);
results.commitJobCount = jobs / N;

start = process.cpuUsage();
for (let i = 0; i < N; i += 1) await send('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: '10.00', reference: `cpu ${i}` });
results.deposit = cpuMs(start) / N;
start = process.cpuUsage();
jobs = 0;
for (let i = 0; i < 4; i += 1) jobs += advanceClock(ctx, 3_600_000);
results.depositJobs = cpuMs(start) / N;
results.depositJobCount = jobs / N;
await app.close();

if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify({ n: N, ...results })}\n`);
else {
  const ms = (value) => `${(value * 1000).toFixed(0)} µs`;
  process.stdout.write(`N = ${N} (in memory), CPU time of this process per unit:\n`);
  process.stdout.write(`  commit (request)          ${ms(results.commit)}\n`);
  process.stdout.write(`  its rail-step jobs        ${ms(results.commitJobs)} (${results.commitJobCount.toFixed(2)} jobs per commit, ${ms(results.commitJobsPerJob)} a job)\n`);
  process.stdout.write(`  deposit (request)         ${ms(results.deposit)}\n`);
  process.stdout.write(`  its rail-step job         ${ms(results.depositJobs)} (${results.depositJobCount.toFixed(2)} jobs per deposit)\n`);
}

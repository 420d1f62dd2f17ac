// CPU time per write in process (bench/README.md, "Profiling"): commits of fresh intents and simulated deposits sent
// through the whole app (`app.inject`: hooks, HMAC, validation, handler, journal) on the built code (dist/), on an
// in-memory database, and the rail-step jobs they schedule, run by advancing the emulated clock (the intents' expiry
// jobs, 15 minutes out, are never reached). Each phase is timed with process.cpuUsage() (user + system of this
// process), which a loaded machine disturbs far less than wall-clock throughput; ROUNDS rounds of N of each, and the
// lowest figure of each phase is reported (the one least disturbed by other processes).
// Usage: npm run build && node bench/lib/write-cpu.mjs [N=1000] [ROUNDS=3] [--json] [--dist OTHER/dist/src]
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

const numbers = process.argv.slice(2).filter((arg, i, all) => /^\d+$/.test(arg) && all[i - 1] !== '--dist').map(Number);
const [N = 1000, ROUNDS = 3] = numbers;
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
const cpuUs = (since) => {
  const used = process.cpuUsage(since);
  return used.user + used.system;
};
// the rail steps due within a minute: PENDING -> PROCESSING -> COMPLETED of a payout, PENDING -> COMPLETED of a deposit
const runRailSteps = () => advanceClock(ctx, 30_000) + advanceClock(ctx, 30_000);

await send('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_wire', amount: '50000000.00', reference: 'funding' });
runRailSteps();
const best = { commit: Infinity, commitSteps: Infinity, deposit: Infinity, depositSteps: Infinity };
let stepsPerCommit = 0;
let stepsPerDeposit = 0;
for (let round = 0; round < ROUNDS; round += 1) {
  const intents = [];
  for (let i = 0; i < N; i += 1) {
    const idempotencyKey = `cpu-${round}-${i}`;
    const intent = JSON.parse(await send('POST', '/v1/transaction-intents', { idempotencyKey, debitAccountId: 'acct_acme_usd', credit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_globex', instrumentId: 'bi_globex_usd' }, creditAmount: '1.00' }));
    intents.push({ id: intent.id, idempotencyKey });
  }
  let start = process.cpuUsage();
  for (const intent of intents) await send('POST', `/v1/transaction-intents/${intent.id}/commit`, { idempotencyKey: intent.idempotencyKey });
  best.commit = Math.min(best.commit, cpuUs(start) / N);
  start = process.cpuUsage();
  const commitSteps = runRailSteps();
  best.commitSteps = Math.min(best.commitSteps, cpuUs(start) / N);
  stepsPerCommit = commitSteps / N;

  start = process.cpuUsage();
  for (let i = 0; i < N; i += 1) await send('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: '10.00', reference: `cpu ${round} ${i}` });
  best.deposit = Math.min(best.deposit, cpuUs(start) / N);
  start = process.cpuUsage();
  const depositSteps = runRailSteps();
  best.depositSteps = Math.min(best.depositSteps, cpuUs(start) / N);
  stepsPerDeposit = depositSteps / N;
}
await app.close();

if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify({ n: N, rounds: ROUNDS, ...best, stepsPerCommit, stepsPerDeposit })}\n`);
else {
  const us = (value) => `${value.toFixed(0)} µs`;
  process.stdout.write(`N = ${N} x ${ROUNDS} rounds (in memory), CPU time of this process per unit, lowest round:\n`);
  process.stdout.write(`  commit (request)     ${us(best.commit)}; its rail steps ${us(best.commitSteps)} (${stepsPerCommit} jobs)\n`);
  process.stdout.write(`  deposit (request)    ${us(best.deposit)}; its rail step ${us(best.depositSteps)} (${stepsPerDeposit} job)\n`);
}

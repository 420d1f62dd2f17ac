// Sessions measured in this process (bench/README.md "Sessions in process", docs/benchmarks.md#sessions): the server's
// CPU per operation (process.cpuUsage over many iterations, steadier than wall time on a shared machine), wall medians
// beside it, and the memory of idle sessions. Everything goes through the built server's one app with `app.inject`
// (hooks, auth, validation, the handler, the answer), so what is left out is Node's HTTP parser and the socket: the
// HTTP figures of bench/run.mjs (sessions(), pythonKitLife()) are these plus that floor and the client.
//
//   - create: POST /_emulator/sessions then DELETE /_emulator/sessions/{id}, each timed apart, per kind of body;
//   - life: one test's life as bench/lib/python-kit-life.py drives it through the Python kit (a labelled session, the
//     same 9 requests with two settles, the label ended), here as Node requests: the Python figure adds the kit's own
//     work (requests, HMAC, JSON) and 11 HTTP round trips;
//   - idle: the RSS and heap this process grows by per live idle session (N created in a row, after garbage collection).
//
// Usage: npm run build && node --expose-gc bench/lib/session-costs.mjs [ITERATIONS=300] [IDLE=200] ; prints a table
// and one JSON line last.
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// SESSION_COSTS_DIST: another build's dist/src (a worktree of an earlier commit), to compare builds alternately
const DIST = process.env.SESSION_COSTS_DIST ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'src');
const { startServer } = await import(pathToFileURL(path.join(DIST, 'server.js')).href);
const { signRequest } = await import(pathToFileURL(path.join(DIST, 'lib', 'hmac.js')).href);

const ITERATIONS = Number(process.argv[2] ?? 300);
const IDLE = Number(process.argv[3] ?? 200);
const START = '2026-03-01T12:00:00.000Z';
const KEY = { apiKey: 'pk_sandbox_single', secret: 'sk_sandbox_single_secret', programmeId: 'prg_sandbox' };
const gc = globalThis.gc ?? (() => undefined);

const server = await startServer({ config: { port: 0, host: '127.0.0.1', logLevel: 'warn', clock: START, maxSessions: Math.max(IDLE + 10, 100) } });
const { app } = server;


async function send(method, url, body) {
  const payload = body === undefined ? '' : JSON.stringify(body);
  const timestamp = String(Date.now());
  const headers = { 'x-service-api-key': KEY.apiKey, 'x-service-timestamp': timestamp, 'x-service-program-id': KEY.programmeId };
  if (url.includes('/v1/')) headers['x-service-signature'] = signRequest({ apiKey: KEY.apiKey, secret: KEY.secret, timestamp, method, target: url, body: payload });
  if (payload) headers['content-type'] = 'application/json';
  const answer = await app.inject({ method, url, headers, payload: payload || undefined });
  return { status: answer.statusCode, body: answer.body ? JSON.parse(answer.body) : null, headers: answer.headers };
}

function expect(answer, status, what) {
  if (answer.status !== status) throw new Error(`${what} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}

const createSession = async (body) => expect(await send('POST', '/_emulator/sessions', body), 201, 'POST /_emulator/sessions');

/** The 9 requests of bench/lib/python-kit-life.py, on a session's prefix. */
async function journey(prefix) {
  expect(await send('GET', `${prefix}/v1/accounts`), 200, 'GET /v1/accounts');
  const deposited = await send('POST', `${prefix}/v1/sandbox/accounts/acct_acme_usd/deposits`, {
    depositInstructionId: 'di_acme_usd_ach', amount: '1250.00', reference: 'INV-2026-0311', counterpartyName: 'Northwind Traders',
  });
  expect(deposited, 202, 'deposit');
  const txn = String(deposited.headers.location).split('/').pop();
  expect(await send('POST', `${prefix}/_emulator/settle`, {}), 200, 'settle');
  expect(await send('GET', `${prefix}/v1/transactions/${txn}`), 200, 'GET the deposit');
  const key = `bench-node-${Math.random().toString(16).slice(2, 14)}`;
  const credit = { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_globex', instrumentId: 'bi_globex_usd' };
  const intent = expect(await send('POST', `${prefix}/v1/transaction-intents`, { idempotencyKey: key, debitAccountId: 'acct_acme_usd', creditAmount: '100.00', credit }), 201, 'intent');
  const committed = expect(await send('POST', `${prefix}/v1/transaction-intents/${intent.id}/commit`, { idempotencyKey: key }), 200, 'commit');
  if (committed.status !== 'COMMITTED') throw new Error(`commit answered ${committed.status}`);
  expect(await send('POST', `${prefix}/_emulator/settle`, {}), 200, 'settle');
  expect(await send('GET', `${prefix}/v1/transaction-intents/${intent.id}`), 200, 'GET the intent');
  expect(await send('GET', `${prefix}/v1/transactions?accountId=acct_acme_usd`), 200, 'GET the list');
}

const cpuMs = (since) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const round = (value, digits = 3) => Math.round(value * 10 ** digits) / 10 ** digits;

/** `iterations` runs of `step` after a tenth as many warm-ups: CPU ms per run (the whole loop's, divided) and wall medians. */
async function measure(iterations, step) {
  for (let i = 0; i < Math.max(5, iterations / 10); i += 1) await step();
  gc();
  const walls = [];
  const cpuStart = process.cpuUsage();
  for (let i = 0; i < iterations; i += 1) {
    const t0 = performance.now();
    await step();
    walls.push(performance.now() - t0);
  }
  return { cpuMsPerRun: round(cpuMs(cpuStart) / iterations), wallMedianMs: round(median(walls)), runs: iterations };
}

/** Create with `body` and end, timing the create alone (CPU and wall) and the end apart. */
async function createAndEnd(body) {
  let createCpu = 0;
  let endCpu = 0;
  const walls = [];
  const result = await measure(ITERATIONS, async () => {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const made = await createSession(body);
    walls.push(performance.now() - t0);
    createCpu += cpuMs(c0);
    const c1 = process.cpuUsage();
    expect(await send('DELETE', `/_emulator/sessions/${made.id}`), 204, 'DELETE');
    endCpu += cpuMs(c1);
  });
  const timed = walls.slice(-ITERATIONS); // the warm-ups' CPU is in the sums, divided by every run
  return { createCpuMs: round(createCpu / walls.length), createWallMedianMs: round(median(timed)), endCpuMs: round(endCpu / walls.length), cpuMsPerCreateAndEnd: result.cpuMsPerRun, runs: ITERATIONS };
}

const results = { loadAverageBefore: os.loadavg().map((value) => round(value, 2)), iterations: ITERATIONS };
expect(await send('POST', '/_emulator/snapshots', { name: 'bench' }), 201, 'snapshot');
results.create = {
  default: await createAndEnd({}),
  label: await createAndEnd({ label: 'bench' }),
  seedAndLabel: await createAndEnd({ seed: 'bench-seed', label: 'bench' }),
  ownClock: await createAndEnd({ clock: '2026-06-01T00:00:00.000Z' }),
  webhookUrl: await createAndEnd({ webhookUrl: 'http://127.0.0.1:9/hooks' }),
  snapshot: await createAndEnd({ snapshot: 'bench' }),
};
let lives = 0;
results.life = await measure(Math.max(20, Math.round(ITERATIONS / 5)), async () => {
  lives += 1;
  const label = `bench-life-${lives}`;
  const made = await createSession({ label, clock: START });
  await journey(`/_sessions/${made.id}`);
  const ended = expect(await send('DELETE', `/_emulator/sessions?label=${label}`), 200, 'end the label');
  if (ended.ended.length !== 1) throw new Error(`the label ended ${ended.ended.length} sessions`);
});

gc();
gc();
const before = process.memoryUsage();
const idle = [];
for (let i = 0; i < IDLE; i += 1) idle.push((await createSession({ label: 'bench-idle' })).id);
await new Promise((resolve) => setTimeout(resolve, 500));
gc();
gc();
const after = process.memoryUsage();
results.idle = {
  sessions: IDLE,
  rssMbPerSession: round((after.rss - before.rss) / 1e6 / IDLE),
  heapMbPerSession: round((after.heapUsed - before.heapUsed) / 1e6 / IDLE),
  gcExposed: Boolean(globalThis.gc),
};
expect(await send('DELETE', '/_emulator/sessions?label=bench-idle'), 200, 'end the idle sessions');
results.loadAverageAfter = os.loadavg().map((value) => round(value, 2));
await server.close();

const lines = [
  `load average before ${results.loadAverageBefore.join(' / ')}, after ${results.loadAverageAfter.join(' / ')} (${os.cpus().length} cores)`,
  ...Object.entries(results.create).map(
    ([kind, r]) => `create ${kind.padEnd(13)} CPU ${r.createCpuMs} ms (wall median ${r.createWallMedianMs} ms); end CPU ${r.endCpuMs} ms; create+end ${r.cpuMsPerCreateAndEnd} ms CPU`,
  ),
  `one test's life (labelled session, 9 requests with two settles, label ended): CPU ${results.life.cpuMsPerRun} ms, wall median ${results.life.wallMedianMs} ms over ${results.life.runs}`,
  `idle: ${results.idle.rssMbPerSession} MB RSS, ${results.idle.heapMbPerSession} MB heap per session over ${IDLE}${results.idle.gcExposed ? '' : ' (run with --expose-gc for steadier figures)'}`,
];
process.stderr.write(`${lines.join('\n')}\n`);
process.stdout.write(`${JSON.stringify(results)}\n`);

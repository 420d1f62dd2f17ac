#!/usr/bin/env node
// `npm run bench`: the emulator measured as its users feel it (docs/benchmarks.md). See bench/README.md.
//
// Every server under test is the built CLI with the Node flags of `npm start` (`node --max-semi-space-size=4
// dist/service-sandbox.mjs`, read from package.json: START_FLAGS) in its own child process, on loopback,
// with the default fixtures, `--log-level warn` (no line per request) and everything else at its default
// (request journal included). Load comes from autocannon in this process: CONNECTIONS connections for
// DURATION seconds after a WARMUP-second run that is thrown away. Peak RSS is the server process's VmHWM.
// Results: a table on stdout and bench/results.json.
import { spawn, spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { freePort } from './lib/free-port.mjs';
import { DATA_DIR, DB_100K, DB_1M } from './seed.mjs';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.dirname(BENCH_DIR);
const CLI = path.join(ROOT, 'dist', 'service-sandbox.mjs');
const RESULTS = path.join(BENCH_DIR, 'results.json');
// The Node flags `npm start` runs the bundle with (the image's entry point passes the same: docs/configuration.md#nodes-flags):
// the servers under test start as users start them.
const START_FLAGS = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'))
  .scripts.start.split(/\s+/)
  .filter((word) => word.startsWith('--'));

const DURATION = Number(process.env.BENCH_DURATION ?? 5);
/** Seconds of the WAL-ceiling run (docs/robustness.md#the-wal-ceiling): 2 minutes unless BENCH_WAL_DURATION says. */
const WAL_DURATION = Number(process.env.BENCH_WAL_DURATION ?? 120);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const COMMIT_INTENTS_MEMORY = Number(process.env.BENCH_COMMIT_INTENTS_MEMORY ?? 12_000);
const COMMIT_INTENTS_FILE = Number(process.env.BENCH_COMMIT_INTENTS_FILE ?? 20_000);
const ADVANCE_IN_FLIGHT = Number(process.env.BENCH_ADVANCE_IN_FLIGHT ?? 1_000);
// Write tails are held to the bare write ceiling's own p99 in the same run, not to absolute figures (docs/benchmarks.md#targets).
const P99_TO_WRITE_CEILING = 1.5;

// Default fixture credentials (README.md#default-fixture-credentials): the SINGLE_USER key acts for usr_acme, who owns
// the large tables.
const KEY = { apiKey: 'pk_sandbox_single', secret: 'sk_sandbox_single_secret', programId: 'prg_sandbox' };
const LIST_PATH = '/v1/transactions';

const log = (line = '') => process.stdout.write(`${line}\n`);
const round = (value, digits = 1) => (value === null || value === undefined || Number.isNaN(value) ? null : Number(value.toFixed(digits)));
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
/** Nearest-rank percentile of an ascending array (null when empty). */
const percentile = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : null);
const loadAverage = () => os.loadavg().map((value) => round(value, 2));

// ---- processes ----

function peakRssMb(pid) {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? round(Number(match[1]) / 1024, 1) : null;
  } catch {
    return null;
  }
}

/** CPU time (user + system) a process has used so far, in ms (/proc/<pid>/stat, clock ticks of 10 ms); null off Linux. */
function cpuMsOf(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * (1000 / 100);
  } catch {
    return null;
  }
}

/** Reset the VmHWM of a process we own (Linux clear_refs 5), so the peak covers what follows only. */
function resetPeakRss(pid) {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

async function waitFor(check, timeoutMs, what) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** Status of a GET (0 when nothing answers), on a fresh connection: light enough to poll every 2 ms. */
function answers(url) {
  return new Promise((resolve) => {
    const request = http.get(url, { agent: false }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
      response.on('error', () => resolve(0));
    });
    request.on('error', () => resolve(0));
    request.setTimeout(2_000, () => request.destroy());
  });
}

/** A child process that serves HTTP; `stop()` returns its peak RSS. */
async function spawnServer(command, args, { readyUrl, readyWhen = (status) => status === 200, timeoutMs = 30_000, label }) {
  const started = performance.now();
  const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output = (output + chunk).slice(-4000)));
  child.stderr.on('data', (chunk) => (output = (output + chunk).slice(-4000)));
  let exited = false;
  child.once('exit', () => (exited = true));
  try {
    await waitFor(async () => {
      if (exited) throw new Error(`${label} exited early:\n${output}`);
      return readyWhen(await answers(readyUrl));
    }, timeoutMs, label);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  const readyMs = performance.now() - started;
  return {
    pid: child.pid,
    readyMs,
    peakRssMb: () => peakRssMb(child.pid),
    async stop() {
      const rss = peakRssMb(child.pid);
      if (!exited) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await once(child, 'exit').catch(() => undefined);
        clearTimeout(timer);
      }
      return rss;
    },
  };
}

// BENCH_CPU_PROF=DIR: every emulator server under test writes a V8 CPU profile into DIR when it stops (bench/README.md, "Profiling").
const CPU_PROF = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(process.env.BENCH_CPU_PROF)] : [];

async function startSandboxServer({ db = ':memory:', extra = [] } = {}) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const server = await spawnServer(process.execPath, [...START_FLAGS, ...CPU_PROF, CLI, '--port', String(port), '--host', '127.0.0.1', '--db', db, '--log-level', 'warn', ...extra], {
    readyUrl: `${url}/_emulator/health`,
    label: `server (${db})`,
  });
  return { ...server, url };
}

// ---- HMAC signing (docs/authentication.md) ----

function sign(method, target, body = '', timestamp = String(Date.now())) {
  const signature = createHmac('sha256', KEY.secret).update(`${KEY.apiKey}${timestamp}${method}${target}${body}`).digest('hex');
  return {
    'x-service-api-key': KEY.apiKey,
    'x-service-timestamp': timestamp,
    'x-service-program-id': KEY.programId,
    'x-service-signature': signature,
  };
}

/**
 * Signed headers for a request whose target and body never change, re-signed once per second: the
 * timestamp is part of the canonical string and must stay within 60 s of the server clock.
 */
function signedOncePerSecond(method, target, body = '') {
  let second = -1;
  let headers = null;
  return () => {
    const now = Date.now();
    if (Math.floor(now / 1000) !== second) {
      second = Math.floor(now / 1000);
      headers = { ...sign(method, target, body, String(now)), ...(body ? { 'content-type': 'application/json' } : {}) };
    }
    return headers;
  };
}

async function signedFetch(url, method, target, body) {
  const headers = { ...sign(method, target, body ?? ''), ...(body ? { 'content-type': 'application/json' } : {}) };
  const response = await fetch(`${url}${target}`, { method, headers, body });
  const text = await response.text();
  return { status: response.status, text };
}

// ---- load ----

function cannon({ onInstance, ...options }) {
  return new Promise((resolve, reject) => {
    const instance = autocannon({ connections: CONNECTIONS, ...options }, (error, result) => (error ? reject(error) : resolve(result)));
    onInstance?.(instance);
  });
}

/**
 * One load run on one set of connections (bench/README.md, "How it measures"): the warm-up and the measured window
 * share the connections, and the window opens only once the warm-up time has passed AND every connection has had its
 * first answer. A fresh connection waits to be accepted: Node accepts one new connection per turn of its event loop,
 * so 50 connections opened at once on a busy server are answered for the first time one turn apart (up to seconds on
 * a write route). That ramp is reported apart (`connectionRampMs`), not mixed into the steady-state latencies.
 * `makeRequests()` gives autocannon's request list; `onInstance` receives the autocannon instance (to stop it early).
 */
async function measure(url, makeRequests, pid = null, { onInstance, duration = DURATION } = {}) {
  const latencies = [];
  const clients = new Set();
  let started = null;
  let rampMs = null;
  let windowStart = null;
  let windowEnd = null;
  let cpu0 = null;
  let non2xx = 0;
  let bytes = 0;
  let errors = 0;
  let instance = null;
  const openWindow = () => {
    windowStart = performance.now();
    cpu0 = pid === null ? null : cpuMsOf(pid);
  };
  const maxRampMs = 30_000;
  const result = await cannon({
    url,
    duration: WARMUP + duration + maxRampMs / 1000,
    requests: makeRequests(),
    onInstance: (i) => {
      instance = i;
      started = performance.now();
      onInstance?.(i);
      i.on('response', (client, statusCode, resBytes, responseTime) => {
        const now = performance.now();
        if (windowStart === null) {
          if (!clients.has(client)) {
            clients.add(client);
            if (clients.size === CONNECTIONS) rampMs = now - started;
          }
          if (now - started >= WARMUP * 1000 && (rampMs !== null || now - started >= maxRampMs)) openWindow();
          return;
        }
        if (windowEnd !== null) return;
        if (now - windowStart >= duration * 1000) {
          windowEnd = now;
          instance.stop();
          return;
        }
        latencies.push(responseTime);
        bytes += resBytes;
        if (statusCode < 200 || statusCode >= 300) non2xx += 1;
      });
      i.on('reqError', () => {
        if (windowStart !== null && windowEnd === null) errors += 1;
      });
    },
  });
  // stopped early (e.g. the commit run's intents ran out) or ended by its duration cap
  if (windowStart === null) openWindow();
  if (windowEnd === null) windowEnd = performance.now();
  latencies.sort((a, b) => a - b);
  const seconds = (windowEnd - windowStart) / 1000;
  const figures = {
    requestsPerSecond: round(latencies.length / seconds, 0),
    latencyP50Ms: round(percentile(latencies, 50), 1),
    latencyP99Ms: round(percentile(latencies, 99), 1),
    latencyMaxMs: round(latencies.at(-1) ?? null, 1),
    requests: latencies.length,
    non2xx,
    errors,
    timeouts: result.timeouts,
    bytesPerResponse: latencies.length ? Math.round(bytes / latencies.length) : 0,
    measuredSeconds: round(seconds, 2),
    connectionRampMs: rampMs === null ? null : round(rampMs, 0),
  };
  return withCpu(figures, pid, cpu0);
}

/**
 * The server's CPU time per completed request over the measured run (user + system, from /proc): steadier than
 * req/s on a machine shared with other work, since it does not count the time the server waited for a core.
 */
function withCpu(figures, pid, cpu0) {
  if (pid === null || cpu0 === null || !figures.requests) return figures;
  const used = cpuMsOf(pid);
  return used === null ? figures : { ...figures, serverCpuMsPerRequest: round((used - cpu0) / figures.requests, 3) };
}

const signedGet = (target) => () => {
  const headers = signedOncePerSecond('GET', target);
  return [{ method: 'GET', path: target, setupRequest: (request) => ({ ...request, headers: headers() }) }];
};

// ---- scenarios ----

const machine = {
  cpus: os.cpus().length,
  cpuModel: os.cpus()[0]?.model ?? 'unknown',
  memoryGb: round(os.totalmem() / 2 ** 30, 1),
  node: process.version,
  platform: `${os.type()} ${os.release()}`,
};
const scenarios = [];
const extras = {};

function record(name, description, figures, rss, load) {
  const entry = { name, description, ...figures, peakRssMb: rss ?? null, loadAverageBefore: load };
  scenarios.push(entry);
  const cpu = figures.serverCpuMsPerRequest === undefined ? '' : `, server CPU ${figures.serverCpuMsPerRequest} ms/request`;
  const ramp = figures.connectionRampMs === undefined ? '' : `, all ${CONNECTIONS} connections answered after ${figures.connectionRampMs ?? '?'} ms`;
  log(`  ${name}: ${figures.requestsPerSecond} req/s, p50 ${figures.latencyP50Ms} ms, p99 ${figures.latencyP99Ms} ms, max ${figures.latencyMaxMs} ms, non-2xx ${figures.non2xx}, peak RSS ${rss ?? '?'} MB${cpu}${ramp}`);
  return entry;
}

async function ceilingRun(pageFile, label) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const load = loadAverage();
  const server = await spawnServer(process.execPath, [path.join(BENCH_DIR, 'lib', 'ceiling-server.mjs'), String(port), pageFile], {
    readyUrl: `${url}${LIST_PATH}`,
    label: 'ceiling server',
  });
  // The same signed headers as the list runs, so the load generator does the same work; the route ignores them.
  const figures = await measure(url, signedGet(LIST_PATH));
  const entry = record(label, 'Bare Fastify route answering the same 25-transaction page (1,000,000-row database) prebuilt in memory', figures, await server.stop(), load);
  entry.ceiling = true;
  return entry;
}

async function listRun(db, label, rows, extra = []) {
  const load = loadAverage();
  const server = await startSandboxServer({ db, extra });
  const first = await signedFetch(server.url, 'GET', LIST_PATH);
  if (first.status !== 200) throw new Error(`${label}: GET ${LIST_PATH} answered ${first.status}: ${first.text.slice(0, 300)}`);
  const page = JSON.parse(first.text);
  const figures = await measure(server.url, signedGet(LIST_PATH));
  const flags = extra.length ? ` (server flags: ${extra.join(' ')})` : '';
  const entry = record(label, `HMAC-signed GET ${LIST_PATH} (page of 25, exact totalRecords) with ${rows.toLocaleString('en-US')} transactions of the caller in the database${flags}`, figures, server.peakRssMb(), load);
  entry.totalRecords = page.totalRecords;
  entry.pageBytes = Buffer.byteLength(first.text);
  return { server, entry, pageText: first.text };
}

/** Interface 4.5 change sync over every transaction of the caller, checked for exactly-once delivery. */
async function changeSync(url, expectedTotal) {
  const pageSize = 200;
  const seen = new Set();
  let requests = 0;
  let pinnedInstants = 0;
  let cursor = null;
  const started = performance.now();
  const get = async (query) => {
    const target = `${LIST_PATH}?sortBy=UPDATED_AT&sortDirection=ASC&pageSize=${pageSize}${query}`;
    const response = await signedFetch(url, 'GET', target);
    requests += 1;
    if (response.status !== 200) throw new Error(`change sync: ${target} answered ${response.status}: ${response.text.slice(0, 300)}`);
    if (requests > 10 * Math.ceil(expectedTotal / pageSize) + 100) throw new Error('change sync does not terminate');
    return JSON.parse(response.text).data;
  };
  // the bound is inclusive: ids already seen are skipped
  const take = (items) => {
    for (const item of items) seen.add(item.id);
  };
  for (;;) {
    const items = await get(`&pageIndex=0${cursor ? `&minUpdatedAt=${encodeURIComponent(cursor)}` : ''}`);
    take(items);
    if (items.length < pageSize) break;
    const firstAt = items[0].updatedAt;
    const lastAt = items[items.length - 1].updatedAt;
    if (firstAt === lastAt) {
      // A full page sharing one updatedAt: pin both bounds to it and page until a short page, then move past it.
      pinnedInstants += 1;
      const instant = encodeURIComponent(firstAt);
      for (let pageIndex = 1; ; pageIndex += 1) {
        const pinned = await get(`&pageIndex=${pageIndex}&minUpdatedAt=${instant}&maxUpdatedAt=${instant}`);
        take(pinned);
        if (pinned.length < pageSize) break;
      }
      cursor = new Date(Date.parse(firstAt) + 1).toISOString();
    } else {
      cursor = lastAt;
    }
  }
  const totalMs = performance.now() - started;
  return { transactions: seen.size, expected: expectedTotal, exactlyOnce: seen.size === expectedTotal, requests, pageSize, pinnedInstants, totalMs: round(totalMs, 0) };
}

async function healthRun() {
  const load = loadAverage();
  const server = await startSandboxServer();
  const figures = await measure(server.url, () => [{ method: 'GET', path: '/_emulator/health' }]);
  record('GET /_emulator/health (70-byte answer)', 'Diagnostic: the cheapest route of the app (no credentials, no database, a 70-byte answer), i.e. the app\'s hooks and serialization without a large body', figures, await server.stop(), load);
}

async function accountsRun() {
  const load = loadAverage();
  const server = await startSandboxServer();
  const check = await signedFetch(server.url, 'GET', '/v1/accounts');
  if (check.status !== 200) throw new Error(`GET /v1/accounts answered ${check.status}`);
  const openapi = await fetch(`${server.url}/openapi.json`).then((response) => response.text());
  const figures = await measure(server.url, signedGet('/v1/accounts'));
  record('GET /v1/accounts', 'HMAC-signed GET /v1/accounts (default fixtures, in-memory database)', figures, await server.stop(), load);
  return openapi;
}

function removeDbFiles(db) {
  for (const suffix of ['', '-wal', '-shm']) rmSync(db + suffix, { force: true });
}

/** Fund acct_acme_usd and create `count` intents through the public API (for the in-memory server). */
async function intentsOverHttp(url, count) {
  const funding = JSON.stringify({ depositInstructionId: 'di_acme_usd_wire', amount: '5000000.00', reference: 'bench funding' });
  const funded = await signedFetch(url, 'POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', funding);
  if (funded.status !== 202) throw new Error(`funding deposit answered ${funded.status}: ${funded.text}`);
  const advanced = await fetch(`${url}/_emulator/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advanceMs: 5_000 }) });
  if (advanced.status !== 200) throw new Error(`clock advance answered ${advanced.status}`);
  const intents = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const idempotencyKey = `bench-commit-${next++}`;
      const body = JSON.stringify({
        idempotencyKey,
        debitAccountId: 'acct_acme_usd',
        credit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_globex', instrumentId: 'bi_globex_usd' },
        creditAmount: '1.00',
      });
      const created = await signedFetch(url, 'POST', '/v1/transaction-intents', body);
      if (created.status !== 201) throw new Error(`intent creation answered ${created.status}: ${created.text}`);
      intents.push({ id: JSON.parse(created.text).id, idempotencyKey });
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  return intents;
}

/** Fund acct_acme_usd and create `count` intents with the app's own services in a database file. */
function intentsInFile(db, count) {
  const prepared = spawnSync(process.execPath, [path.join(BENCH_DIR, 'lib', 'prepare-intents.mjs'), db, String(count)], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (prepared.status !== 0) throw new Error(`prepare-intents failed:\n${prepared.stderr}`);
  return JSON.parse(prepared.stdout.trim().split('\n').pop());
}

/** Each request commits a CREATED intent never committed before (interface 4.4). */
async function commitRun({ file }) {
  const db = file ? path.join(DATA_DIR, 'tmp-commit.db') : ':memory:';
  if (file) removeDbFiles(db);
  const intentsFromFile = file ? intentsInFile(db, COMMIT_INTENTS_FILE) : null;
  const load = loadAverage();
  const server = await startSandboxServer({ db });
  const intents = intentsFromFile ?? (await intentsOverHttp(server.url, COMMIT_INTENTS_MEMORY));
  // the peak RSS of this scenario covers the commits, not the creation of the intents
  resetPeakRss(server.pid);
  let next = 0;
  let exhausted = false;
  let instance = null;
  const commitRequests = () => [
    {
      method: 'POST',
      setupRequest: (request) => {
        if (next >= intents.length) {
          exhausted = true;
          instance?.stop();
        }
        const intent = intents[Math.min(next, intents.length - 1)];
        next += 1;
        const target = `/v1/transaction-intents/${intent.id}/commit`;
        const body = JSON.stringify({ idempotencyKey: intent.idempotencyKey });
        return { ...request, method: 'POST', path: target, body, headers: { ...sign('POST', target, body), 'content-type': 'application/json' } };
      },
    },
  ];
  // Warm-up and measured window on the same connections, each request with its own intent.
  const figures = await measure(server.url, commitRequests, server.pid, { onInstance: (i) => (instance = i) });
  const entry = record(
    `POST .../commit (${file ? 'file' : 'in-memory'})`,
    `HMAC-signed POST /v1/transaction-intents/{id}/commit, each request a fresh CREATED intent (1.00 USD to a bank account over ACH, funded account), ${file ? 'database file in WAL mode (--db)' : 'in-memory database (the default)'}`,
    figures,
    await server.stop(),
    load,
  );
  entry.intentsPrepared = intents.length;
  entry.intentsUsed = next;
  entry.intentsExhausted = exhausted;
  if (file) removeDbFiles(db);
}

async function depositsRun({ file }) {
  const db = file ? path.join(DATA_DIR, 'tmp-deposits.db') : ':memory:';
  if (file) removeDbFiles(db);
  const load = loadAverage();
  const server = await startSandboxServer({ db });
  const target = '/v1/sandbox/accounts/acct_acme_usd/deposits';
  const body = JSON.stringify({ depositInstructionId: 'di_acme_usd_ach', amount: '10.00', reference: 'bench deposit' });
  const check = await signedFetch(server.url, 'POST', target, body);
  if (check.status !== 202) throw new Error(`deposit answered ${check.status}: ${check.text}`);
  const figures = await measure(server.url, () => {
    const headers = signedOncePerSecond('POST', target, body);
    return [{ method: 'POST', path: target, body, setupRequest: (request) => ({ ...request, headers: headers() }) }];
  }, server.pid);
  record(
    `POST sandbox deposit (${file ? 'file' : 'in-memory'})`,
    `HMAC-signed POST ${target}, each a new deposit that settles 1 s later on the scheduler; ${file ? 'database file in WAL mode (--db)' : 'in-memory database (the default)'}`,
    figures,
    await server.stop(),
    load,
  );
  if (file) removeDbFiles(db);
}

/**
 * A refund on the 1,000,000-row file (docs/benchmarks.md#a-refund-on-the-large-file): POST /v1/transaction-intents with
 * `refundOf` sums the refunds the deposit already has (transactions naming it in related_transaction_id: the partial
 * index of migration 013, where a scan of the whole table took about 0.5 s). Each refund intent is cancelled right
 * after it is timed, so the transactions table, the lists and the balances of the seeded file stay as they were (an
 * intent row per run is all that is left).
 */
async function refundRun(runs = 30) {
  const server = await startSandboxServer({ db: DB_1M });
  try {
    const found = await signedFetch(server.url, 'GET', '/v1/transactions?accountId=acct_acme_usd&type=DEPOSIT&status=COMPLETED&pageSize=1');
    const deposit = JSON.parse(found.text).data?.[0];
    if (found.status !== 200 || !deposit) throw new Error(`no COMPLETED deposit of acct_acme_usd to refund: ${found.status} ${found.text.slice(0, 200)}`);
    const times = [];
    for (let i = 0; i < runs + 3; i += 1) {
      const body = JSON.stringify({ idempotencyKey: `bench-refund-${Date.now()}-${i}`, debitAccountId: 'acct_acme_usd', refundOf: deposit.id, debitAmount: '0.01' });
      const t0 = performance.now();
      const made = await signedFetch(server.url, 'POST', '/v1/transaction-intents', body);
      const ms = performance.now() - t0;
      if (made.status !== 201) throw new Error(`refund intent answered ${made.status}: ${made.text.slice(0, 300)}`);
      const cancelled = await signedFetch(server.url, 'POST', `/v1/transaction-intents/${JSON.parse(made.text).id}/cancel`, '{}');
      if (cancelled.status >= 300) throw new Error(`cancel answered ${cancelled.status}: ${cancelled.text.slice(0, 300)}`);
      if (i >= 3) times.push(ms); // three warm-ups
    }
    const sorted = [...times].sort((a, b) => a - b);
    const result = { medianMs: round(median(times), 2), p90Ms: round(percentile(sorted, 90), 2), maxMs: round(sorted.at(-1), 2), runs, refundOf: deposit.id };
    log(`  refund intent of a deposit on the 1,000,000-row file: median ${result.medianMs} ms (p90 ${result.p90Ms}, max ${result.maxMs}) over ${runs}`);
    return result;
  } finally {
    await server.stop();
  }
}

/**
 * The WAL's ceiling (docs/robustness.md#the-wal-ceiling): deposits on a database file at full speed for WAL_DURATION
 * seconds (2 minutes by default), the WAL file's size sampled every 50 ms; the row reports its peak next to the
 * throughput (docs/decisions.md#wal-ceiling promises under 64 MiB).
 */
async function walRun() {
  const db = path.join(DATA_DIR, 'tmp-wal.db');
  removeDbFiles(db);
  const load = loadAverage();
  const server = await startSandboxServer({ db });
  const target = '/v1/sandbox/accounts/acct_acme_usd/deposits';
  const body = JSON.stringify({ depositInstructionId: 'di_acme_usd_ach', amount: '10.00', reference: 'bench wal' });
  const check = await signedFetch(server.url, 'POST', target, body);
  if (check.status !== 202) throw new Error(`deposit answered ${check.status}: ${check.text}`);
  let peakWalBytes = 0;
  const sample = () => {
    try {
      peakWalBytes = Math.max(peakWalBytes, statSync(`${db}-wal`).size);
    } catch {
      // no WAL file at this instant
    }
  };
  const sampler = setInterval(sample, 50);
  let figures;
  try {
    figures = await measure(
      server.url,
      () => {
        const headers = signedOncePerSecond('POST', target, body);
        return [{ method: 'POST', path: target, body, setupRequest: (request) => ({ ...request, headers: headers() }) }];
      },
      server.pid,
      { duration: WAL_DURATION },
    );
  } finally {
    clearInterval(sampler);
  }
  sample();
  const databaseBytes = statSync(db).size;
  const entry = record(
    `WAL ceiling: POST sandbox deposit (file, ${WAL_DURATION} s)`,
    `HMAC-signed POST ${target} at full speed for ${WAL_DURATION} s on a database file in WAL mode (--db); the WAL file's size sampled every 50 ms`,
    figures,
    await server.stop(),
    load,
  );
  entry.peakWalMb = round(peakWalBytes / 2 ** 20, 1);
  entry.databaseMbAfter = round(databaseBytes / 2 ** 20, 1);
  log(`  peak WAL ${entry.peakWalMb} MiB (ceiling 64 MiB), database ${entry.databaseMbAfter} MiB after the run`);
  removeDbFiles(db);
  return entry;
}

// ---- write ceiling (bench/README.md, "The write ceiling") ----

/**
 * The write ceiling of one storage: bench/lib/write-ceiling.mjs (bare Fastify, one BEGIN IMMEDIATE transaction with the
 * row writes of a commit, on the app's schema) under the same signed, per-request commit requests as commitRun.
 */
async function writeCeilingRun({ file }) {
  const db = file ? path.join(DATA_DIR, 'tmp-write-ceiling.db') : ':memory:';
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const load = loadAverage();
  const server = await spawnServer(process.execPath, [path.join(BENCH_DIR, 'lib', 'write-ceiling.mjs'), String(port), db], {
    readyUrl: `${url}/_emulator/health`,
    label: 'write ceiling',
  });
  const writes = JSON.parse(await fetch(`${url}/_emulator/health`).then((response) => response.text())).writesPerRequest;
  let n = 0;
  const requests = () => [
    {
      method: 'POST',
      setupRequest: (request) => {
        const target = `/v1/transaction-intents/ti_ceiling${n}/commit`;
        const body = JSON.stringify({ idempotencyKey: `bench-commit-${n++}` });
        return { ...request, method: 'POST', path: target, body, headers: { ...sign('POST', target, body), 'content-type': 'application/json' } };
      },
    },
  ];
  const figures = await measure(url, requests, server.pid);
  const entry = record(
    `write ceiling (${file ? 'file' : 'in-memory'})`,
    `Bare Fastify POST route: the ${writes} row writes of a commit in one BEGIN IMMEDIATE transaction with prepared statements on the app's schema, ${file ? 'database file in WAL mode' : 'in-memory database'}`,
    figures,
    await server.stop(),
    load,
  );
  entry.writeCeiling = file ? 'file' : 'memory';
  entry.writesPerRequest = writes;
  if (file) removeDbFiles(db);
  return entry;
}

/** Each write scenario (commit, deposit) against the write ceiling of the same storage, measured in the same run. */
function writeRatios() {
  const ceilingOf = (storage) => scenarios.filter((s) => s.writeCeiling === storage);
  const rows = [];
  for (const scenario of scenarios) {
    const storage = /\((file|in-memory)\)$/.exec(scenario.name)?.[1];
    if (!storage || scenario.writeCeiling || !/commit|deposit/.test(scenario.name)) continue;
    const runs = ceilingOf(storage === 'file' ? 'file' : 'memory');
    if (runs.length === 0) continue;
    const ceilingRps = runs.reduce((sum, s) => sum + s.requestsPerSecond, 0) / runs.length;
    scenario.writeCeilingUsed = round(ceilingRps, 0);
    // the bare write ceiling's own tail at the same 50 connections: a p99 target below it cannot be met on this machine
    scenario.writeCeilingP99Ms = round(runs.reduce((sum, s) => sum + s.latencyP99Ms, 0) / runs.length, 1);
    scenario.ratioToWriteCeiling = round(scenario.requestsPerSecond / ceilingRps, 3);
    // the same ratio by the server's CPU per request (the ceiling's over the scenario's): what a core would give each
    const cpuRuns = runs.filter((s) => s.serverCpuMsPerRequest);
    if (cpuRuns.length && scenario.serverCpuMsPerRequest) {
      scenario.writeCeilingCpuMsPerRequest = round(cpuRuns.reduce((sum, s) => sum + s.serverCpuMsPerRequest, 0) / cpuRuns.length, 3);
      scenario.cpuRatioToWriteCeiling = round(scenario.writeCeilingCpuMsPerRequest / scenario.serverCpuMsPerRequest, 3);
    }
    // the tail as a multiple of the bare write ceiling's own p99 in the same run (docs/benchmarks.md#targets)
    scenario.p99ToWriteCeiling = scenario.writeCeilingP99Ms ? round(scenario.latencyP99Ms / scenario.writeCeilingP99Ms, 2) : null;
    rows.push(
      { target: `${scenario.name} >= 50% of the write ceiling (req/s)`, measured: `${round(scenario.ratioToWriteCeiling * 100, 1)}% (${scenario.requestsPerSecond} of ${scenario.writeCeilingUsed} req/s)${scenario.cpuRatioToWriteCeiling ? `; by server CPU ${round(scenario.cpuRatioToWriteCeiling * 100, 1)}% (${scenario.serverCpuMsPerRequest} vs ${scenario.writeCeilingCpuMsPerRequest} ms/request)` : ''}`, met: scenario.ratioToWriteCeiling >= 0.5 },
      { target: `${scenario.name}: p99 <= ${P99_TO_WRITE_CEILING}x the write ceiling's`, measured: `${scenario.p99ToWriteCeiling}x (${scenario.latencyP99Ms} vs ${scenario.writeCeilingP99Ms} ms; p50 ${scenario.latencyP50Ms} ms)`, met: scenario.p99ToWriteCeiling !== null && scenario.p99ToWriteCeiling <= P99_TO_WRITE_CEILING },
    );
  }
  return rows;
}

/** Commits and deposits, in memory and on a file, each storage between two runs of its write ceiling. */
async function writeScenarios() {
  await writeCeilingRun({ file: false });
  await commitRun({ file: false });
  await depositsRun({ file: false });
  await writeCeilingRun({ file: false });
  await writeCeilingRun({ file: true });
  await commitRun({ file: true });
  await depositsRun({ file: true });
  await writeCeilingRun({ file: true });
  return writeRatios();
}

// ---- clock advance (bench/README.md, "Scenarios") ----

/**
 * Advance one emulated day with ADVANCE_IN_FLIGHT transactions in flight and webhook retries owed, all set up over the
 * API: a frozen clock, the programme's webhook URL on a local listener that answers 500 to everything, half deposits and
 * half committed payouts (each still PENDING: the clock has not moved), and the first attempt of every delivery made
 * and refused (so each owes a retry). Then `POST /_emulator/clock {"advanceMs": 86400000}` is timed as the client sees
 * it; it answers once every job due in that day ran (rail steps, settlements, webhook retries).
 */
async function advanceRun(inFlight = ADVANCE_IN_FLIGHT, runs = 3) {
  const refusing = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.statusCode = 500;
      response.end('refused');
    });
  });
  refusing.listen(0, '127.0.0.1');
  await once(refusing, 'listening');
  let refused = 0;
  refusing.on('request', () => (refused += 1));
  const times = [];
  const details = [];
  try {
    for (let run = 0; run < runs; run += 1) {
      const server = await startSandboxServer({ extra: ['--clock', '2026-03-02T09:00:00.000Z'] });
      try {
        const control = (method, target, body) =>
          fetch(`${server.url}${target}`, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }).then(async (response) => ({ status: response.status, json: await response.json() }));
        const endpoint = await control('PUT', '/_emulator/webhooks/endpoint', { url: `http://127.0.0.1:${refusing.address().port}/hooks` });
        if (endpoint.status !== 200) throw new Error(`PUT /_emulator/webhooks/endpoint answered ${endpoint.status}`);
        const funding = await signedFetch(server.url, 'POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', JSON.stringify({ depositInstructionId: 'di_acme_usd_wire', amount: '5000000.00', reference: 'bench funding' }));
        if (funding.status !== 202) throw new Error(`funding deposit answered ${funding.status}`);
        await control('POST', '/_emulator/clock', { advanceMs: 5_000 });
        let next = 0;
        const worker = async () => {
          while (next < inFlight) {
            const i = next++;
            if (i % 2 === 0) {
              const made = await signedFetch(server.url, 'POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', JSON.stringify({ depositInstructionId: 'di_acme_usd_ach', amount: '10.00', reference: `in flight ${i}` }));
              if (made.status !== 202) throw new Error(`deposit answered ${made.status}: ${made.text}`);
            } else {
              const idempotencyKey = `advance-${i}`;
              const created = await signedFetch(server.url, 'POST', '/v1/transaction-intents', JSON.stringify({ idempotencyKey, debitAccountId: 'acct_acme_usd', credit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_globex', instrumentId: 'bi_globex_usd' }, creditAmount: '1.00' }));
              if (created.status !== 201) throw new Error(`intent answered ${created.status}: ${created.text}`);
              const id = JSON.parse(created.text).id;
              const committed = await signedFetch(server.url, 'POST', `/v1/transaction-intents/${id}/commit`, JSON.stringify({ idempotencyKey }));
              if (committed.status !== 200) throw new Error(`commit answered ${committed.status}: ${committed.text}`);
            }
          }
        };
        await Promise.all(Array.from({ length: 8 }, worker));
        // every delivery attempted once and refused: each owes a retry on the emulated clock
        // (a later event of the same transaction waits behind a retrying one: docs/webhooks.md#delivery-rules, so wait for quiet)
        let seen = -1;
        await waitFor(async () => {
          const quiet = refused > 0 && refused === seen;
          seen = refused;
          if (!quiet) await new Promise((resolve) => setTimeout(resolve, 500));
          return quiet;
        }, 120_000, 'first webhook attempts');
        const owed = (await control('GET', '/_emulator/webhooks/deliveries?status=RETRYING&pageSize=1')).json.totalRecords;
        const pendingJobs = (await control('GET', '/_emulator/jobs?status=PENDING&pageSize=1')).json.totalRecords;
        const load = loadAverage();
        const cpu0 = cpuMsOf(server.pid);
        const t0 = performance.now();
        const advanced = await control('POST', '/_emulator/clock', { advanceMs: 86_400_000 });
        const ms = performance.now() - t0;
        const cpuMs = cpu0 === null ? null : cpuMsOf(server.pid) - cpu0;
        if (advanced.status !== 200) throw new Error(`clock advance answered ${advanced.status}`);
        const left = (await control('GET', '/_emulator/jobs?status=PENDING&pageSize=1')).json.totalRecords;
        times.push(ms);
        details.push({ ms: round(ms, 0), serverCpuMs: cpuMs, retriesOwed: owed, pendingJobsBefore: pendingJobs, pendingJobsAfter: left, loadAverageBefore: load });
      } finally {
        await server.stop();
      }
    }
  } finally {
    refusing.close();
  }
  return { inFlight, medianMs: round(median(times), 0), runs: details, refusedAttempts: refused };
}

async function prismRun(openapiFile) {
  const bin = path.join(ROOT, 'node_modules', '@stoplight', 'prism-cli', 'dist', 'index.js');
  if (!existsSync(bin)) return { skipped: 'node_modules/@stoplight/prism-cli is not installed' };
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const load = loadAverage();
  const server = await spawnServer(process.execPath, [bin, 'mock', openapiFile, '-h', '127.0.0.1', '-p', String(port), '-v', 'warn'], {
    readyUrl: `${url}/_emulator/health`,
    readyWhen: (status) => status > 0,
    timeoutMs: 60_000,
    label: 'prism',
  });
  const check = await signedFetch(url, 'GET', LIST_PATH);
  const figures = await measure(url, signedGet(LIST_PATH));
  const entry = record('Prism mock (same request)', `@stoplight/prism-cli mock of the emulator's own /openapi.json, static examples, answering the same signed GET ${LIST_PATH}`, figures, await server.stop(), load);
  entry.status = check.status;
  entry.bytesOfFirstResponse = Buffer.byteLength(check.text);
  return entry;
}

// ---- Mockoon CLI, the second peer (bench/README.md, "Peers") ----
// Installed on demand into bench/.peers (git-ignored): 252 packages, ≈110 MB, too heavy for a devDependency that
// every `npm ci` would fetch. BENCH_NO_INSTALL=1 leaves it out ("not measured").
const MOCKOON_VERSION = '9.9.0'; // the newest release; its engines accept Node >= 18
const PEERS_DIR = path.join(BENCH_DIR, '.peers');

function mockoonBin() {
  const bin = path.join(PEERS_DIR, 'node_modules', '@mockoon', 'cli', 'bin', 'run.js'); // package.json "bin"
  const installed = path.join(PEERS_DIR, 'node_modules', '@mockoon', 'cli', 'package.json');
  if (existsSync(installed) && JSON.parse(readFileSync(installed, 'utf8')).version === MOCKOON_VERSION) return bin;
  if (process.env.BENCH_NO_INSTALL === '1') return null;
  log(`  installing @mockoon/cli@${MOCKOON_VERSION} into ${path.relative(ROOT, PEERS_DIR)} (once) ...`);
  mkdirSync(PEERS_DIR, { recursive: true });
  if (!existsSync(path.join(PEERS_DIR, 'package.json'))) writeFileSync(path.join(PEERS_DIR, 'package.json'), '{ "private": true }\n');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const installed_ = spawnSync(npm, ['install', '--no-audit', '--no-fund', '--loglevel', 'error', `@mockoon/cli@${MOCKOON_VERSION}`], { cwd: PEERS_DIR, stdio: ['ignore', 'inherit', 'inherit'] });
  return installed_.status === 0 && existsSync(bin) ? bin : null;
}

/** Mockoon CLI serving the emulator's own /openapi.json (it builds its routes from the document), the same signed request. */
async function mockoonRun(openapiFile) {
  const bin = mockoonBin();
  if (!bin) return { skipped: `@mockoon/cli ${MOCKOON_VERSION} is not installed (BENCH_NO_INSTALL=1 or npm install failed)` };
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const load = loadAverage();
  const server = await spawnServer(process.execPath, [bin, 'start', '--data', openapiFile, '--port', String(port), '--hostname', '127.0.0.1', '--disable-log-to-file', '--disable-admin-api'], {
    readyUrl: `${url}${LIST_PATH}`,
    readyWhen: (status) => status > 0,
    timeoutMs: 180_000,
    label: 'mockoon',
  });
  const check = await signedFetch(url, 'GET', LIST_PATH);
  const figures = await measure(url, signedGet(LIST_PATH));
  const entry = record('Mockoon CLI (same request)', `@mockoon/cli ${MOCKOON_VERSION} serving the emulator's own /openapi.json, answering the same signed GET ${LIST_PATH}`, figures, await server.stop(), load);
  entry.status = check.status;
  entry.bytesOfFirstResponse = Buffer.byteLength(check.text);
  return entry;
}

/**
 * Spawn to first answer of GET /_emulator/health, median of `runs`. In memory, each emulator start is followed by one
 * start of the start-up ceiling (bench/lib/startup-ceiling.mjs: Fastify + better-sqlite3, an in-memory database, one
 * route), so the two medians share the machine's load (bench/README.md, "The start-up ceiling").
 */
async function coldStarts(runs, db = ':memory:') {
  const times = [];
  const rss = [];
  const ceilingTimes = [];
  for (let i = 0; i < runs; i += 1) {
    const port = await freePort();
    const server = await spawnServer(process.execPath, [...START_FLAGS, CLI, '--port', String(port), '--host', '127.0.0.1', '--db', db, '--log-level', 'warn'], {
      readyUrl: `http://127.0.0.1:${port}/_emulator/health`,
      label: 'cold start',
    });
    times.push(server.readyMs);
    rss.push(await server.stop());
    if (db !== ':memory:') continue;
    const ceilingPort = await freePort();
    const ceiling = await spawnServer(process.execPath, [path.join(BENCH_DIR, 'lib', 'startup-ceiling.mjs'), String(ceilingPort)], {
      readyUrl: `http://127.0.0.1:${ceilingPort}/_emulator/health`,
      label: 'start-up ceiling',
    });
    ceilingTimes.push(ceiling.readyMs);
    await ceiling.stop();
  }
  const result = { medianMs: round(median(times), 0), runsMs: times.map((t) => round(t, 0)), peakRssMb: round(median(rss), 1), runs };
  if (ceilingTimes.length === 0) return result;
  const ceilingMedianMs = round(median(ceilingTimes), 0);
  return { ...result, ceilingMedianMs, ceilingRunsMs: ceilingTimes.map((t) => round(t, 0)), ratioToCeiling: round(median(times) / median(ceilingTimes), 2) };
}

/**
 * POST `path` `runs` times (after `before()` each time), timed by the client and by the answer's `durationMs`, after
 * 10 unmeasured warm-up runs (the steady state a test suite restoring before every test sees, not the JIT's first calls).
 */
async function timedPosts(server, path, runs, before = async () => {}) {
  const client = [];
  const reported = [];
  for (let i = 0; i < 10; i += 1) {
    await before();
    await (await fetch(`${server.url}${path}`, { method: 'POST' })).arrayBuffer();
  }
  for (let i = 0; i < runs; i += 1) {
    await before();
    const t0 = performance.now();
    const response = await fetch(`${server.url}${path}`, { method: 'POST' });
    const body = await response.json();
    client.push(performance.now() - t0);
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
    reported.push(body.durationMs);
  }
  const sorted = [...client].sort((a, b) => a - b);
  return {
    medianMs: round(median(client), 2),
    p90Ms: round(percentile(sorted, 90), 2),
    maxMs: round(sorted[runs - 1], 2),
    serverReportedMedianMs: round(median(reported), 2),
    runs,
  };
}

async function resets(runs) {
  const server = await startSandboxServer();
  const result = await timedPosts(server, '/_emulator/reset', runs);
  await server.stop();
  return result;
}

// docs/control-plane.md#snapshots: restore of the default state, measured as the client sees it and as the
// server reports it (`durationMs`), after a clock move each time so each restore has something to undo.
async function restores(runs) {
  const server = await startSandboxServer();
  const post = (path, body) => fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const saved = await post('/_emulator/snapshots', '{"name":"bench"}');
  if (saved.status !== 201) throw new Error(`snapshot save answered ${saved.status}`);
  const result = await timedPosts(server, '/_emulator/snapshots/bench/restore', runs, () => post('/_emulator/clock', '{"advanceMs":1000}'));
  await server.stop();
  return result;
}

function currentRssMb(pid) {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}

// docs/sessions.md#how-fast: POST /_emulator/sessions as a client in another process sees it. One at a time with a
// pause (a test suite's setup), from a root snapshot, a burst of 16 at once, one with its own clock or a seed, and the
// memory of idle sessions (the server's RSS before and after 32 of them).
async function sessions(runs) {
  const server = await startSandboxServer({ extra: ['--clock', '2026-03-01T12:00:00.000Z', '--max-sessions', '100'] });
  const json = { 'content-type': 'application/json' };
  const create = async (body = {}) => {
    const t0 = performance.now();
    const response = await fetch(`${server.url}/_emulator/sessions`, { method: 'POST', headers: json, body: JSON.stringify(body) });
    const answer = await response.json();
    if (response.status !== 201) throw new Error(`POST /_emulator/sessions answered ${response.status}: ${JSON.stringify(answer)}`);
    return { ms: performance.now() - t0, id: answer.id };
  };
  const end = (id) => fetch(`${server.url}/_emulator/sessions/${id}`, { method: 'DELETE' });
  const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const timed = async (count, body, gapMs) => {
    const times = [];
    for (let i = 0; i < count; i += 1) {
      await pause(gapMs);
      const made = await create(body);
      times.push(made.ms);
      await end(made.id);
    }
    const sorted = [...times].sort((a, b) => a - b);
    return { medianMs: round(median(times), 2), p90Ms: round(percentile(sorted, 90), 2), runs: count };
  };
  // the first session of a start takes the image the others open (docs/sessions.md#how-fast): one first
  await end((await create()).id);
  await pause(1000);
  // docs/benchmarks.md#sessions: the default create taking turns with two floors, each after the same pause and from
  // the same client: the same POST refused by its schema (400: the emulator's routing, hooks and error answer, no
  // sandbox opened), and a bare node:http server answering a body of a session's size (the machine's own floor)
  const floorPort = await freePort();
  const floorServer = await spawnServer(process.execPath, [path.join(BENCH_DIR, 'lib', 'http-floor-server.mjs'), String(floorPort)], {
    readyUrl: `http://127.0.0.1:${floorPort}/`,
    label: 'HTTP floor server',
  });
  const refusedTimes = [];
  const bareTimes = [];
  const postTimed = async (url, body, status) => {
    const t0 = performance.now();
    const response = await fetch(url, { method: 'POST', headers: json, body });
    await response.json();
    if (response.status !== status) throw new Error(`POST ${url} answered ${response.status}, not ${status}`);
    return performance.now() - t0;
  };
  const defaultTimes = [];
  for (let i = 0; i < runs; i += 1) {
    await pause(200);
    const made = await create({});
    defaultTimes.push(made.ms);
    await end(made.id);
    await pause(200);
    refusedTimes.push(await postTimed(`${server.url}/_emulator/sessions`, '{"refused":true}', 400));
    await pause(200);
    bareTimes.push(await postTimed(`http://127.0.0.1:${floorPort}/`, '{}', 201));
  }
  await floorServer.stop();
  const medianOf = (times) => round(median(times), 2);
  // `pooled`: the key older results.json files have for the default create (from when sessions came from a pool)
  const pooled = { medianMs: medianOf(defaultTimes), p90Ms: round(percentile([...defaultTimes].sort((a, b) => a - b), 90), 2), runs };
  const floors = { refusedMedianMs: medianOf(refusedTimes), bareNodeMedianMs: medianOf(bareTimes), runs };
  await fetch(`${server.url}/_emulator/snapshots`, { method: 'POST', headers: json, body: '{"name":"bench"}' });
  const fromSnapshot = await timed(runs, { snapshot: 'bench' }, 200);
  // docs/sessions.md#how-fast: a session with its own clock opens the same image; seed and label cost nothing
  const ownClock = await timed(runs, { clock: '2026-06-01T00:00:00.000Z', label: 'bench' }, 200);
  const seeded = await timed(runs, { seed: 'bench-seed', label: 'bench' }, 200);
  await pause(500);
  const t0 = performance.now();
  const burst = await Promise.all(Array.from({ length: 16 }, () => create()));
  const burstMs = performance.now() - t0;
  await Promise.all(burst.map((made) => end(made.id)));
  await pause(1000);
  const before = currentRssMb(server.pid);
  const idle = [];
  for (let i = 0; i < 32; i += 1) idle.push((await create()).id);
  await pause(1500);
  const after = currentRssMb(server.pid);
  await Promise.all(idle.map((id) => end(id)));
  await server.stop();
  return {
    pooled,
    floors,
    fromSnapshot,
    ownClock,
    seeded,
    burst16Ms: round(burstMs, 0),
    idleMbPerSession: before !== null && after !== null ? round((after - before) / 32, 2) : null,
  };
}

/** docs/benchmarks.md#sessions: the two floors the default create was timed beside, after the same pause. */
function floorsLine(floors) {
  return (
    `floors, taking turns with the default create over ${floors.runs}: the same POST refused by its schema ${floors.refusedMedianMs} ms, ` +
    `a bare node:http server ${floors.bareNodeMedianMs} ms (medians)`
  );
}

// One test's life through the Python kit (bench/lib/python-kit-life.py, bench/README.md "Also measured"): a labelled
// session, 9 requests with two settles, the label ended, as a pytest test using clients/python sees it; `runs` timed lives
// after 3 warm-ups, on a server of its own (in-memory, default fixtures, --log-level warn). Skipped without python3.
async function pythonKitLife(runs) {
  const python = spawnSync('python3', ['--version'], { encoding: 'utf8' });
  if (python.error || python.status !== 0) return { skipped: 'python3 is not on PATH' };
  const load = loadAverage();
  const server = await startSandboxServer();
  try {
    // no wait: the script's 3 warm-up lives take the image its sessions open (they start at a clock of their own)
    const run = spawnSync('python3', [path.join(BENCH_DIR, 'lib', 'python-kit-life.py'), server.url, String(runs)], { cwd: ROOT, encoding: 'utf8', timeout: 300_000 });
    if (run.status !== 0) throw new Error(`python-kit-life.py failed (${run.error ?? `exit ${run.status}`}):\n${run.stderr}`);
    return { ...JSON.parse(run.stdout.trim().split('\n').pop()), loadAverageBefore: load };
  } finally {
    await server.stop();
  }
}

const pythonKitLine = (life) =>
  life.skipped
    ? `  one test's life, Python kit: skipped (${life.skipped})`
    : `  one test's life, Python kit (labelled session, ${life.journeyRequests} requests with two settles, end): median ${life.medianMs} ms (p90 ${life.p90Ms}, min ${life.minMs}, max ${life.maxMs}) over ${life.runs}; ` +
      `create ${life.steps.createSessionMs} ms, the ${life.journeyRequests} requests ${life.steps.journeyMs} ms (the first alone ${life.firstRequestMs} ms), end ${life.steps.endMs} ms (medians); load ${life.loadAverageBefore.join(' / ')} before`;

function childJson(script, args) {
  const run = spawnSync(process.execPath, [path.join(BENCH_DIR, 'lib', script), ...args], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (run.status !== 0) throw new Error(`${script} failed:\n${run.stderr}`);
  return JSON.parse(run.stdout.trim().split('\n').pop());
}

// ---- report ----

function table(rows, columns) {
  const widths = columns.map((column) => Math.max(column.title.length, ...rows.map((row) => String(column.value(row) ?? '-').length)));
  const line = (cells) => `| ${cells.map((cell, i) => (columns[i].left ? String(cell).padEnd(widths[i]) : String(cell).padStart(widths[i]))).join(' | ')} |`;
  return [line(columns.map((c) => c.title)), `|${widths.map((w, i) => (columns[i].left ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`, ...rows.map((row) => line(columns.map((c) => c.value(row) ?? '-')))].join('\n');
}

/** `npm run bench -- --sandboxes`: only reset, snapshot restore and sessions (a minute, no load scenarios, results.json untouched). */
async function sandboxesOnly() {
  log(`load average at start (1/5/15 min): ${loadAverage().join(' / ')}`);
  const reset = await resets(50);
  log(`POST /_emulator/reset: median ${reset.medianMs} ms (server-reported ${reset.serverReportedMedianMs} ms)`);
  const restore = await restores(50);
  log(`POST /_emulator/snapshots/{name}/restore: median ${restore.medianMs} ms (inside the server ${restore.serverReportedMedianMs} ms; target < 2)`);
  const made = await sessions(40);
  log(`POST /_emulator/sessions: median ${made.pooled.medianMs} ms, p90 ${made.pooled.p90Ms} ms (target < 1); from a snapshot ${made.fromSnapshot.medianMs} ms, p90 ${made.fromSnapshot.p90Ms} ms (target < 3)`);
  log(`  ${floorsLine(made.floors)}`);
  log(`  with its own clock ${made.ownClock.medianMs} ms, with a seed ${made.seeded.medianMs} ms; 16 at once ${made.burst16Ms} ms in all; ${made.idleMbPerSession} MB RSS per idle session`);
  log(`load average at the end: ${loadAverage().join(' / ')}`);
}

/**
 * BENCH_ONLY=read,write,advance,startup,peers (bench/README.md, "Running only some scenarios"): only those groups, printed
 * as they run, then the targets table; results.json untouched. Groups: `read` (the 1,000,000-row list repeated and with
 * every answer built, GET /v1/accounts, between ceiling runs), `write` (write ceilings, commits, deposits, in memory and
 * on a file, with their ratios), `advance` (one emulated day with transactions in flight and retries owed), `startup`
 * (cold start, reset, snapshot restore, session create, one test's life through the Python kit), `peers` (the list next to Prism and Mockoon CLI).
 */
async function onlySome(groups) {
  const known = ['read', 'write', 'advance', 'startup', 'peers', 'wal'];
  const unknown = groups.filter((group) => !known.includes(group));
  if (unknown.length) throw new Error(`BENCH_ONLY: unknown group(s) ${unknown.join(', ')}; known: ${known.join(', ')}`);
  mkdirSync(DATA_DIR, { recursive: true });
  log(`load average at start (1/5/15 min): ${loadAverage().join(' / ')}; autocannon -c ${CONNECTIONS} -d ${DURATION} after a ${WARMUP} s warm-up`);
  // read and peers (docs/benchmarks.md#targets): the lists need the seeded databases and the ceiling's page.
  if (groups.includes('read') || groups.includes('peers')) {
    const seed = spawnSync(process.execPath, [path.join(BENCH_DIR, 'seed.mjs')], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    if (seed.status !== 0) throw new Error('bench/seed.mjs failed');
    const pageFile = path.join(DATA_DIR, 'page-1m.json');
    const pageServer = await startSandboxServer({ db: DB_1M });
    writeFileSync(pageFile, (await signedFetch(pageServer.url, 'GET', LIST_PATH)).text);
    const openapi = await fetch(`${pageServer.url}/openapi.json`).then((response) => response.text());
    await pageServer.stop();
    await ceilingRun(pageFile, 'ceiling');
    if (groups.includes('read')) {
      const listed = await listRun(DB_1M, 'GET /v1/transactions, 1,000,000 rows', 1_000_000);
      listed.entry.peakRssMb = await listed.server.stop();
      const uncached = await listRun(DB_1M, 'same, --read-cache off (every answer built)', 1_000_000, ['--read-cache', 'off']);
      uncached.entry.peakRssMb = await uncached.server.stop();
      extras.refund = await refundRun();
      await ceilingRun(pageFile, 'ceiling');
      await accountsRun();
      await ceilingRun(pageFile, 'ceiling');
    }
    if (groups.includes('peers')) {
      const openapiFile = path.join(DATA_DIR, 'openapi.json');
      writeFileSync(openapiFile, openapi);
      const again = await listRun(DB_1M, 'GET /v1/transactions, 1,000,000 rows (again, next to Prism)', 1_000_000);
      again.entry.peakRssMb = await again.server.stop();
      await prismRun(openapiFile);
      await mockoonRun(openapiFile);
      await ceilingRun(pageFile, 'ceiling');
    }
  }
  if (groups.includes('startup')) {
    extras.coldStart = await coldStarts(7);
    log(`  cold start to first answered request: median ${extras.coldStart.medianMs} ms (runs ${extras.coldStart.runsMs.join(', ')}); start-up ceiling ${extras.coldStart.ceilingMedianMs} ms (runs ${extras.coldStart.ceilingRunsMs.join(', ')}): ${extras.coldStart.ratioToCeiling}x`);
    extras.reset = await resets(50);
    log(`  POST /_emulator/reset: median ${extras.reset.medianMs} ms (server ${extras.reset.serverReportedMedianMs} ms)`);
    extras.restore = await restores(50);
    log(`  snapshot restore: median ${extras.restore.medianMs} ms (server ${extras.restore.serverReportedMedianMs} ms)`);
    extras.sessions = await sessions(40);
    log(`  POST /_emulator/sessions: median ${extras.sessions.pooled.medianMs} ms, from a snapshot ${extras.sessions.fromSnapshot.medianMs} ms`);
    extras.pythonKitLife = await pythonKitLife(30);
    log(pythonKitLine(extras.pythonKitLife));
  }
  if (groups.includes('write')) await writeScenarios();
  if (groups.includes('wal')) await walRun();
  if (groups.includes('advance')) {
    const advance = await advanceRun();
    log(`  advance one emulated day, ${advance.inFlight} in flight: ${advance.runs.map((r) => `${r.ms} ms, server CPU ${r.serverCpuMs} ms (${r.retriesOwed} retries owed, ${r.pendingJobsBefore} jobs pending before, ${r.pendingJobsAfter} after)`).join('; ')}`);
    extras.advance = advance;
  }
  ceilingRatios();
  log(`load average at the end: ${loadAverage().join(' / ')}`);
  // every target: those of the groups that ran with met or the gap, the others "not measured"
  printTargets(issueTargets(extras));
}

// ---- the targets table (docs/benchmarks.md#targets) ----
// Every row of the performance targets, in their order, with "met" or the measured gap. A row whose scenario did not
// run in this run (a group left out, a peer not installed) says "not measured".

const pct = (ratio) => `${round(ratio * 100, 1)}%`;

/** A check: what was measured, the target it is held to, and whether it holds (null: not measured). */
const check = (measured, target, ok) => ({ measured, target, ok });

function targetRow(scenario, target, checks, note = '') {
  const measuredChecks = checks.filter((c) => c.ok !== null && c.ok !== undefined);
  if (measuredChecks.length < checks.length) return { scenario, target, measured: 'not measured', met: null, result: 'not measured' };
  const gaps = checks.filter((c) => !c.ok);
  return {
    scenario,
    target,
    measured: `${checks.map((c) => c.measured).join(', ')}${note ? ` (${note})` : ''}`,
    met: gaps.length === 0,
    result: gaps.length === 0 ? 'met' : `gap: ${gaps.map((c) => `${c.measured} vs ${c.target}`).join('; ')}`,
  };
}

function issueTargets(extras) {
  const named = (name) => scenarios.find((s) => s.name === name);
  const rows = [];
  const list = (name, label, minRatio, maxP99) => {
    const s = named(name);
    rows.push(
      targetRow(label, `>= ${minRatio * 100}% of the ceiling, p99 < ${maxP99} ms`, [
        check(s && pct(s.ratioToCeiling), `${minRatio * 100}%`, s ? s.ratioToCeiling >= minRatio : null),
        check(s && `p99 ${s.latencyP99Ms} ms`, `< ${maxP99} ms`, s ? s.latencyP99Ms < maxP99 : null),
      ]),
    );
  };
  list('same, --read-cache off (every answer built)', 'list, 1,000,000 rows, every answer built', 0.35, 10);
  list('GET /v1/transactions, 1,000,000 rows', 'list, 1,000,000 rows, repeated request', 0.7, 8);
  const accounts = named('GET /v1/accounts');
  rows.push(targetRow('GET /v1/accounts', '>= 60% of the ceiling', [check(accounts && pct(accounts.ratioToCeiling), '60%', accounts ? accounts.ratioToCeiling >= 0.6 : null)]));
  // Ratios to the write ceiling are set where the write scenarios run (ratioToWriteCeiling); absent: not measured.
  for (const [kind, name] of [
    ['commit of a fresh intent', 'POST .../commit'],
    ['simulated deposit', 'POST sandbox deposit'],
  ]) {
    for (const storage of ['in-memory', 'file']) {
      const s = named(`${name} (${storage})`);
      const ratio = s?.ratioToWriteCeiling;
      const tail = s?.p99ToWriteCeiling;
      rows.push(
        targetRow(`${kind}, ${storage === 'in-memory' ? 'in memory' : 'file'}`, `>= 50% of the write ceiling, p99 <= ${P99_TO_WRITE_CEILING}x the write ceiling's`, [
          check(ratio !== undefined && ratio !== null ? pct(ratio) : undefined, '50%', ratio !== undefined && ratio !== null ? ratio >= 0.5 : null),
          check(tail !== undefined && tail !== null ? `p99 ${tail}x (${s.latencyP99Ms} vs ${s.writeCeilingP99Ms} ms)` : undefined, `<= ${P99_TO_WRITE_CEILING}x`, tail !== undefined && tail !== null ? tail <= P99_TO_WRITE_CEILING : null),
        ]),
      );
    }
  }
  const { refund } = extras;
  rows.push(targetRow('refund of a deposit, 1,000,000-row file', '< 5 ms', [check(refund && `${refund.medianMs} ms (median; p90 ${refund.p90Ms} ms)`, '< 5 ms', refund ? refund.medianMs < 5 : null)]));
  const advance = extras.advance;
  rows.push(targetRow('advance one day, 1,000 in flight + retries', '< 1 s', [check(advance && `${advance.medianMs} ms`, '< 1000 ms', advance ? advance.medianMs < 1000 : null)]));
  const { coldStart, reset, restore, sessions: made } = extras;
  // docs/benchmarks.md#targets: against the start-up ceiling started alternately with it (Node's own start moves with the machine)
  rows.push(
    targetRow(
      'cold start',
      '<= 2x the start-up ceiling',
      [check(coldStart?.ratioToCeiling !== undefined ? `${coldStart.ratioToCeiling}x (${coldStart.medianMs} vs ${coldStart.ceilingMedianMs} ms)` : undefined, '<= 2x', coldStart?.ratioToCeiling !== undefined ? coldStart.ratioToCeiling <= 2 : null)],
      'spawn to first answer, medians',
    ),
  );
  rows.push(targetRow('reset', '< 5 ms', [check(reset && `${reset.medianMs} ms`, '< 5 ms', reset ? reset.medianMs < 5 : null)], reset && `client median; server ${reset.serverReportedMedianMs} ms`));
  // the restore inside the server (its durationMs), as this target has always been read; the client's median is noted
  rows.push(
    targetRow('snapshot restore', '< 2 ms inside the server', [check(restore && `${restore.serverReportedMedianMs} ms`, '< 2 ms', restore ? restore.serverReportedMedianMs < 2 : null)], restore && `median; client ${restore.medianMs} ms`),
  );
  rows.push(
    targetRow('session create', '< 1 ms; < 3 ms from a snapshot; < 0.5 MB idle', [
      check(made && `${made.pooled.medianMs} ms`, '< 1 ms', made ? made.pooled.medianMs < 1 : null),
      check(made && `${made.fromSnapshot.medianMs} ms from a snapshot`, '< 3 ms', made ? made.fromSnapshot.medianMs < 3 : null),
      check(made && `${made.ownClock.medianMs} ms with its own clock`, '< 1 ms', made ? made.ownClock.medianMs < 1 : null),
      check(made?.seeded && `${made.seeded.medianMs} ms with a seed and label`, '< 1 ms', made?.seeded ? made.seeded.medianMs < 1 : null),
      check(made && made.idleMbPerSession !== null && `${made.idleMbPerSession} MB per idle session`, '< 0.5 MB', made && made.idleMbPerSession !== null ? made.idleMbPerSession < 0.5 : null),
    ], made?.floors && floorsLine(made.floors)),
  );
  // bench/lib/python-kit-life.py: create with a label, 9 requests with two settles, end_label; skipped without python3
  const life = extras.pythonKitLife?.skipped ? null : extras.pythonKitLife;
  rows.push(
    targetRow(
      "one test's life, Python kit (labelled session, 9 requests with two settles, end)",
      'median < 25 ms',
      [check(life && `${life.medianMs} ms`, '< 25 ms', life ? life.medianMs < 25 : null)],
      life && `p90 ${life.p90Ms} ms; create ${life.steps.createSessionMs}, requests ${life.steps.journeyMs} (first ${life.firstRequestMs}), end ${life.steps.endMs} ms (medians of ${life.runs})`,
    ),
  );
  const listed = named('GET /v1/transactions, 1,000,000 rows');
  const uncached = named('same, --read-cache off (every answer built)');
  const peaks = [listed, uncached].filter((s) => s?.peakRssMb !== null && s?.peakRssMb !== undefined);
  const peak = peaks.length === 2 ? Math.max(...peaks.map((s) => s.peakRssMb)) : null;
  rows.push(
    targetRow('RSS, 1,000,000 rows under list load', '< 120 MB', [check(peak !== null ? `${peak} MB` : undefined, '< 120 MB', peak !== null ? peak < 120 : null)], peak !== null ? `peak of the repeated (${listed.peakRssMb} MB) and every-answer-built (${uncached.peakRssMb} MB) runs` : ''),
  );
  const again = named('GET /v1/transactions, 1,000,000 rows (again, next to Prism)');
  for (const [peer, name] of [
    ['Prism', 'Prism mock (same request)'],
    ['Mockoon CLI', 'Mockoon CLI (same request)'],
  ]) {
    const s = named(name);
    const times = s && again ? round(again.requestsPerSecond / s.requestsPerSecond, 1) : null;
    rows.push(targetRow(`${peer} on the same request`, '>= 15x its req/s', [check(times !== null ? `${times}x` : undefined, '15x', times !== null ? times >= 15 : null)], times !== null ? `${again.requestsPerSecond} vs ${s.requestsPerSecond} req/s` : ''));
  }
  if (extras.statements) {
    rows.push(targetRow('10,000-entry PDF statement', '< 1 s', [check(`${round(extras.statements.pdf.httpRequestMs, 0)} ms`, '< 1000 ms', extras.statements.pdf.httpRequestMs < 1000)]));
  }
  return rows;
}

/** Each scenario against the mean of the ceiling runs just before and just after it (ratioToCeiling, ceilingUsed). */
function ceilingRatios() {
  const ceilings = scenarios.filter((s) => s.ceiling);
  const ceilingRps = ceilings.length ? ceilings.reduce((sum, s) => sum + s.requestsPerSecond, 0) / ceilings.length : null;
  scenarios.forEach((scenario, index) => {
    if (scenario.ceiling) {
      scenario.ratioToCeiling = round(scenario.requestsPerSecond / ceilingRps, 3);
      return;
    }
    const before = scenarios.slice(0, index).reverse().find((s) => s.ceiling);
    const after = scenarios.slice(index + 1).find((s) => s.ceiling);
    const around = [before, after].filter(Boolean).map((s) => s.requestsPerSecond);
    if (around.length === 0) return;
    scenario.ceilingUsed = round(around.reduce((a, b) => a + b, 0) / around.length, 0);
    scenario.ratioToCeiling = round(scenario.requestsPerSecond / scenario.ceilingUsed, 3);
  });
  return { ceilings, ceilingRps };
}

function printTargets(rows) {
  log(
    table(rows, [
      { title: 'scenario', value: (t) => t.scenario, left: true },
      { title: 'target', value: (t) => t.target, left: true },
      { title: 'measured', value: (t) => t.measured, left: true },
      { title: 'result', value: (t) => t.result, left: true },
    ]),
  );
}

async function main() {
  if (!existsSync(CLI)) throw new Error('dist/service-sandbox.mjs is missing: run `npm run bench` (it builds first)');
  if (process.argv.includes('--sandboxes')) return sandboxesOnly();
  if (process.env.BENCH_ONLY) return onlySome(process.env.BENCH_ONLY.split(',').map((group) => group.trim()).filter(Boolean));
  mkdirSync(DATA_DIR, { recursive: true });
  const startedAt = new Date();
  const started = performance.now();
  const loadAtStart = loadAverage();
  log(`service-sandbox benchmark: ${machine.cpus} x ${machine.cpuModel}, ${machine.memoryGb} GB, Node ${machine.node}`);
  log(`load average at start (1/5/15 min): ${loadAtStart.join(' / ')}; autocannon -c ${CONNECTIONS} -d ${DURATION} after a ${WARMUP} s warm-up`);

  log('\n[1/6] databases');
  // progress lines arrive on stderr as the build goes; the manifest is the last line of stdout
  const seed = spawnSync(process.execPath, [path.join(BENCH_DIR, 'seed.mjs')], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  if (seed.status !== 0) throw new Error('bench/seed.mjs failed');
  const manifest = JSON.parse(seed.stdout.trim().split('\n').at(-1));
  log(`  ${manifest.reused ? 'reused' : 'built'} ${path.relative(ROOT, DB_100K)} and ${path.relative(ROOT, DB_1M)}${manifest.reused ? '' : ` in ${round(manifest.secondsTotal, 1)} s`}`);
  extras.seed = { reused: manifest.reused, builtAt: manifest.builtAt, secondsTotal: manifest.secondsTotal ? round(manifest.secondsTotal, 1) : null };

  log('\n[2/6] load (autocannon on 127.0.0.1)');
  // The load of this machine drifts, so the ceiling is measured again between groups of scenarios and each
  // ratio uses the ceiling runs on either side of its scenario; Prism is measured right after a list run.
  const pageFile = path.join(DATA_DIR, 'page-1m.json');
  const pageServer = await startSandboxServer({ db: DB_1M });
  const firstPage = await signedFetch(pageServer.url, 'GET', LIST_PATH);
  if (firstPage.status !== 200) throw new Error(`GET ${LIST_PATH} answered ${firstPage.status}: ${firstPage.text.slice(0, 300)}`);
  writeFileSync(pageFile, firstPage.text);
  await pageServer.stop();
  await ceilingRun(pageFile, 'ceiling (bare Fastify, prebuilt page)');
  const listed = await listRun(DB_1M, 'GET /v1/transactions, 1,000,000 rows', 1_000_000);
  listed.entry.peakRssMb = await listed.server.stop();
  await ceilingRun(pageFile, 'ceiling');
  const small = await listRun(DB_100K, 'GET /v1/transactions, 100,000 rows', 100_000);
  small.entry.peakRssMb = small.server.peakRssMb();
  log('  change sync (interface 4.5) over the 100,000-row database ...');
  extras.changeSync = await changeSync(small.server.url, small.entry.totalRecords);
  await small.server.stop();
  log(`  change sync: ${extras.changeSync.transactions} transactions in ${extras.changeSync.requests} requests, ${extras.changeSync.totalMs} ms, every one seen: ${extras.changeSync.exactlyOnce}`);
  // Diagnostics: the same list without the request journal's ring buffer, and the app's cheapest route.
  const noJournal = await listRun(DB_1M, 'same, --journal-size 0', 1_000_000, ['--journal-size', '0']);
  noJournal.entry.peakRssMb = await noJournal.server.stop();
  // Without the read cache every answer is built (page query, counters, API key): the figure for a list
  // that changes between requests, or a query never asked before.
  const uncached = await listRun(DB_1M, 'same, --read-cache off (every answer built)', 1_000_000, ['--read-cache', 'off']);
  uncached.entry.peakRssMb = await uncached.server.stop();
  extras.refund = await refundRun();
  await healthRun();
  await ceilingRun(pageFile, 'ceiling');
  const openapi = await accountsRun();
  await writeScenarios(); // write ceilings, commits, deposits (bench/README.md, "The write ceiling")
  await walRun(); // the WAL under a 2-minute full-speed write load (docs/robustness.md#the-wal-ceiling)
  await ceilingRun(pageFile, 'ceiling');
  const openapiFile = path.join(DATA_DIR, 'openapi.json');
  writeFileSync(openapiFile, openapi);
  log('  Prism, right after the same list ...');
  const again = await listRun(DB_1M, 'GET /v1/transactions, 1,000,000 rows (again, next to Prism)', 1_000_000);
  again.entry.peakRssMb = await again.server.stop();
  const prism = await prismRun(openapiFile);
  extras.prism = prism.skipped ? prism : { requestsPerSecond: prism.requestsPerSecond, status: prism.status, bytesOfFirstResponse: prism.bytesOfFirstResponse };
  const mockoon = await mockoonRun(openapiFile);
  extras.mockoon = mockoon.skipped ? mockoon : { requestsPerSecond: mockoon.requestsPerSecond, status: mockoon.status, bytesOfFirstResponse: mockoon.bytesOfFirstResponse };
  await ceilingRun(pageFile, 'ceiling');
  log('\n[3/6] start-up');
  extras.coldStart = await coldStarts(7);
  extras.coldStart1m = await coldStarts(3, DB_1M);
  log(`  cold start to first answered request: median ${extras.coldStart.medianMs} ms (in-memory), ${extras.coldStart1m.medianMs} ms (1,000,000-row file); start-up ceiling ${extras.coldStart.ceilingMedianMs} ms: ${extras.coldStart.ratioToCeiling}x`);
  extras.testkit = childJson('testkit-timing.mjs', ['10']);
  extras.testkit = {
    importMs: round(extras.testkit.importMs, 0),
    firstStartMs: round(extras.testkit.startMs[0], 1),
    medianStartMs: round(median(extras.testkit.startMs.slice(1)), 1),
    medianCloseMs: round(median(extras.testkit.closeMs), 1),
    runs: extras.testkit.startMs.length,
  };
  log(`  startSandbox(): first ${extras.testkit.firstStartMs} ms, median ${extras.testkit.medianStartMs} ms (package import ${extras.testkit.importMs} ms)`);

  log('\n[4/6] reset');
  extras.reset = await resets(50);
  log(`  POST /_emulator/reset: median ${extras.reset.medianMs} ms over ${extras.reset.runs} (p90 ${extras.reset.p90Ms}, max ${extras.reset.maxMs})`);
  extras.restore = await restores(50);
  log(`  POST /_emulator/snapshots/{name}/restore: median ${extras.restore.medianMs} ms over ${extras.restore.runs} (p90 ${extras.restore.p90Ms}; inside the server ${extras.restore.serverReportedMedianMs} ms)`);

  extras.advance = await advanceRun();
  log(`  advance one emulated day, ${extras.advance.inFlight} transactions in flight and webhook retries owed: median ${extras.advance.medianMs} ms (${extras.advance.runs.map((r) => `${r.ms} ms`).join(', ')})`);

  extras.sessions = await sessions(40);
  log(
    `  POST /_emulator/sessions: median ${extras.sessions.pooled.medianMs} ms (p90 ${extras.sessions.pooled.p90Ms}) ` +
      `${extras.sessions.fromSnapshot.medianMs} ms from a snapshot, ${extras.sessions.ownClock.medianMs} ms with its own clock, ${extras.sessions.seeded.medianMs} ms with a seed; ` +
      `16 at once ${extras.sessions.burst16Ms} ms; ${extras.sessions.idleMbPerSession} MB RSS per idle session`,
  );
  log(`  ${floorsLine(extras.sessions.floors)}`);
  extras.pythonKitLife = await pythonKitLife(30);
  log(pythonKitLine(extras.pythonKitLife));

  log('\n[5/6] statements of 10,000 entries');
  extras.statements = childJson('statements-timing.mjs', ['3']);
  log(`  PDF: ${round(extras.statements.pdf.httpRequestMs, 0)} ms per request (renderer alone ${round(extras.statements.pdf.renderWallMs, 0)} ms wall, ${round(extras.statements.pdf.renderCpuMs, 0)} ms CPU; ${extras.statements.pdf.pages} pages)`);
  log(`  CSV: ${round(extras.statements.csv.httpRequestMs, 0)} ms per request (renderer alone ${round(extras.statements.csv.renderWallMs, 0)} ms)`);

  // ---- ratios, targets, output ----
  const { ceilings, ceilingRps } = ceilingRatios();
  const prismRps = prism.skipped ? null : prism.requestsPerSecond;
  const ratioToPrism = prismRps ? round(again.entry.requestsPerSecond / prismRps, 2) : null;
  const targets = issueTargets(extras);
  const finishedLoad = loadAverage();

  log('\n[6/6] results');
  log(`machine: ${machine.cpus} CPUs, load average (1/5/15 min) ${loadAtStart.join(' / ')} at start, ${finishedLoad.join(' / ')} at the end`);
  log(
    table(scenarios, [
      { title: 'scenario', value: (s) => s.name, left: true },
      { title: 'req/s', value: (s) => s.requestsPerSecond },
      { title: 'p50 ms', value: (s) => s.latencyP50Ms },
      { title: 'p99 ms', value: (s) => s.latencyP99Ms },
      { title: 'x ceiling', value: (s) => (s.ceiling ? '-' : s.ratioToCeiling?.toFixed(3)) },
      { title: 'non-2xx', value: (s) => s.non2xx },
      { title: 'peak RSS MB', value: (s) => s.peakRssMb },
      { title: 'load 1m', value: (s) => s.loadAverageBefore?.[0] },
    ]),
  );
  log(`ceiling: ${round(ceilingRps, 0)} req/s on average over its ${ceilings.length} runs; each ratio uses the ceiling runs on either side of its scenario`);
  if (ratioToPrism !== null) log(`the 1,000,000-row list against Prism on the same request (back to back): ${ratioToPrism} x Prism's req/s`);
  if (!mockoon.skipped) log(`the same list against Mockoon CLI (right after Prism): ${round(again.entry.requestsPerSecond / mockoon.requestsPerSecond, 2)} x Mockoon's req/s`);
  log('');
  printTargets(targets);

  const results = {
    startedAt: startedAt.toISOString(),
    durationSeconds: round((performance.now() - started) / 1000, 0),
    machine: { ...machine, loadAverageStart: loadAtStart, loadAverageEnd: finishedLoad },
    settings: { connections: CONNECTIONS, durationSeconds: DURATION, warmupSeconds: WARMUP, serverFlags: '--log-level warn (defaults otherwise)' },
    ceilingRequestsPerSecond: round(ceilingRps, 0),
    ceilingRuns: ceilings.map((s) => s.requestsPerSecond),
    scenarios,
    ratioOfListAt1mToPrism: ratioToPrism,
    ...extras,
    targets,
  };
  writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`);
  log(`\nwrote ${path.relative(ROOT, RESULTS)} (${results.durationSeconds} s in all)`);
}

main().catch((error) => {
  process.stderr.write(`bench failed: ${error.stack ?? error}\n`);
  process.exit(1);
});

// A/B of the repeated list (bench/README.md, "The read path, build against build"): the same signed
// `GET /v1/transactions` load as the bench's list run, against two or more server commands run alternately
// (A, B, A, B, ...), each on a fresh server, with the ceiling server between rounds. Prints one line per run
// (req/s, p50/p99, the server's CPU ms per request, peak RSS, load average) and a summary of ranges.
//
// Usage: node bench/lib/ab-list.mjs DB ROUNDS 'label=[node flags] CLI [flags...]' 'label=...' ...
//   e.g. node bench/lib/ab-list.mjs bench/.data/transactions-1m.db 3 'main=dist/service-sandbox.mjs' 'old=/tmp/old/dist/service-sandbox.mjs'
// Environment: AB_DURATION (5 s window), AB_WARMUP (1 s), AB_CONNECTIONS (50), AB_CEILING=0 skips the ceiling runs,
// AB_CPU_PROF=DIR starts each emulator server with `node --cpu-prof --cpu-prof-dir DIR`.
// AB_DEPOSIT=1: the file writes instead (docs/robustness.md#the-wal-ceiling): DB is a database file made afresh for each
// run, the load is the bench's signed POST sandbox deposit (202), the WAL's peak size is sampled every 50 ms, and no
// ceiling runs.
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { freePort } from './free-port.mjs';

const BENCH_DIR = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const DURATION = Number(process.env.AB_DURATION ?? 5);
const WARMUP = Number(process.env.AB_WARMUP ?? 1);
const CONNECTIONS = Number(process.env.AB_CONNECTIONS ?? 50);
const KEY = { apiKey: 'pk_sandbox_single', secret: 'sk_sandbox_single_secret', programId: 'prg_sandbox' };
const DEPOSIT = process.env.AB_DEPOSIT === '1';
const TARGET = DEPOSIT ? '/v1/sandbox/accounts/acct_acme_usd/deposits' : '/v1/transactions';
const METHOD = DEPOSIT ? 'POST' : 'GET';
const BODY = DEPOSIT ? JSON.stringify({ depositInstructionId: 'di_acme_usd_ach', amount: '10.00', reference: 'bench wal' }) : '';
const EXPECTED = DEPOSIT ? 202 : 200;
const CPU_PROF = process.env.AB_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(process.env.AB_CPU_PROF)] : [];

const [db, roundsArg, ...variants] = process.argv.slice(2);
if (!db || !roundsArg || variants.length === 0) {
  process.stderr.write("usage: node bench/lib/ab-list.mjs DB ROUNDS 'label=CLI [flags...]' ...\n");
  process.exit(2);
}
const builds = variants.map((spec) => {
  const [label, command] = spec.split(/=(.*)/s);
  // Words before the CLI's path that start with -- are Node's flags (e.g. --max-semi-space-size=4).
  const words = command.trim().split(/\s+/);
  const nodeFlags = [];
  while (words[0]?.startsWith('--')) nodeFlags.push(words.shift());
  const [cli, ...flags] = words;
  return { label, nodeFlags, cli: path.resolve(cli), flags };
});

const round1 = (value) => Math.round(value * 10) / 10;


function procStatus(pid, field) {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? round1(Number(match[1]) / 1024) : null;
}

function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function status(url, headers = {}) {
  return new Promise((resolve) => {
    const request = http.get(url, { agent: false, headers }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      response.on('error', () => resolve({ status: 0, text: '' }));
    });
    request.on('error', () => resolve({ status: 0, text: '' }));
  });
}

function sign(timestamp = String(Date.now())) {
  const signature = createHmac('sha256', KEY.secret).update(`${KEY.apiKey}${timestamp}${METHOD}${TARGET}${BODY}`).digest('hex');
  return { ...(DEPOSIT ? { 'content-type': 'application/json' } : {}), 'x-service-api-key': KEY.apiKey, 'x-service-timestamp': timestamp, 'x-service-program-id': KEY.programId, 'x-service-signature': signature };
}

async function start(args, readyPath) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, args(port), { stdio: ['ignore', 'ignore', 'inherit'] });
  for (let i = 0; i < 15_000; i += 1) {
    if ((await status(`${url}${readyPath}`)).status === 200) break;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return { url, pid: child.pid, child };
}

async function stop(server) {
  server.child.kill('SIGTERM');
  await once(server.child, 'exit');
}

/** 1 s warm-up on the same connections, then the window (the bench's measure(), simplified). */
async function load(server) {
  let second = -1;
  let headers = null;
  const signed = () => {
    const now = Date.now();
    if (Math.floor(now / 1000) !== second) {
      second = Math.floor(now / 1000);
      headers = sign(String(now));
    }
    return headers;
  };
  const latencies = [];
  let windowStart = null;
  let cpu0 = null;
  const started = performance.now();
  await new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: server.url,
        connections: CONNECTIONS,
        duration: WARMUP + DURATION + 10,
        requests: [{ method: METHOD, path: TARGET, ...(DEPOSIT ? { body: BODY } : {}), setupRequest: (request) => ({ ...request, headers: signed() }) }],
      },
      (error) => (error ? reject(error) : resolve()),
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      const now = performance.now();
      if (statusCode !== EXPECTED) throw new Error(`answered ${statusCode}`);
      if (windowStart === null) {
        if (now - started >= WARMUP * 1000) {
          windowStart = now;
          cpu0 = cpuMs(server.pid);
        }
        return;
      }
      if (now - windowStart >= DURATION * 1000) return instance.stop();
      latencies.push(responseTime);
    });
  });
  latencies.sort((a, b) => a - b);
  const seconds = DURATION;
  return {
    rps: Math.round(latencies.length / seconds),
    p50: round1(latencies[Math.floor(latencies.length * 0.5)]),
    p99: round1(latencies[Math.ceil(latencies.length * 0.99) - 1]),
    cpuMsPerRequest: Math.round(((cpuMs(server.pid) - cpu0) / latencies.length) * 1000) / 1000,
    peakRssMb: procStatus(server.pid, 'VmHWM'),
  };
}

function sendSigned(url) {
  return new Promise((resolve) => {
    const request = http.request(url, { method: 'POST', agent: false, headers: sign() }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
    });
    request.on('error', () => resolve({ status: 0, text: '' }));
    request.end(BODY);
  });
}

async function measureBuild(build) {
  if (DEPOSIT) for (const suffix of ['', '-wal', '-shm']) rmSync(db + suffix, { force: true });
  const server = await start((port) => [...CPU_PROF, ...build.nodeFlags, build.cli, '--port', String(port), '--host', '127.0.0.1', '--db', db, '--log-level', 'warn', ...build.flags], '/_emulator/health');
  const first = DEPOSIT ? await sendSigned(`${server.url}${TARGET}`) : await status(`${server.url}${TARGET}`, sign());
  if (first.status !== EXPECTED) throw new Error(`${build.label}: ${first.status} ${first.text.slice(0, 200)}`);
  await new Promise((resolve) => setTimeout(resolve, 1500)); // past the session pool's build, 1 s after listening
  const idleRssMb = procStatus(server.pid, 'VmRSS');
  let peakWalMb = 0;
  const sampler = DEPOSIT
    ? setInterval(() => {
        try {
          peakWalMb = Math.max(peakWalMb, round1(statSync(`${db}-wal`).size / 2 ** 20));
        } catch {
          // no WAL file at this instant
        }
      }, 50)
    : null;
  const figures = await load(server);
  if (sampler) clearInterval(sampler);
  await stop(server);
  return { ...figures, idleRssMb, ...(DEPOSIT ? { peakWalMb } : {}), page: first.text };
}

async function measureCeiling(pageFile) {
  const server = await start((port) => [path.join(BENCH_DIR, 'lib', 'ceiling-server.mjs'), String(port), pageFile], TARGET);
  const figures = await load(server);
  await stop(server);
  return figures;
}

const results = Object.fromEntries(builds.map((build) => [build.label, []]));
results.ceiling = [];
const pageFile = path.join(os.tmpdir(), `ab-list-page-${process.pid}.json`);
for (let round = 0; round < Number(roundsArg); round += 1) {
  for (const build of builds) {
    const load1 = os.loadavg()[0].toFixed(2);
    const { page, ...figures } = await measureBuild(build);
    writeFileSync(pageFile, page);
    results[build.label].push(figures);
    process.stdout.write(`${build.label}\t${JSON.stringify(figures)}\tload ${load1}\n`);
  }
  if (process.env.AB_CEILING !== '0' && !DEPOSIT) {
    const load1 = os.loadavg()[0].toFixed(2);
    const figures = await measureCeiling(pageFile);
    results.ceiling.push(figures);
    process.stdout.write(`ceiling\t${JSON.stringify(figures)}\tload ${load1}\n`);
  }
}
const range = (values) => `${Math.min(...values)}-${Math.max(...values)}`;
for (const [label, runs] of Object.entries(results)) {
  if (runs.length === 0) continue;
  const keys = Object.keys(runs[0]);
  process.stdout.write(`${label}: ${keys.map((key) => `${key} ${range(runs.map((run) => run[key]))}`).join(', ')}\n`);
}
process.stdout.write(`load average at the end: ${os.loadavg().map((value) => value.toFixed(2)).join(' / ')}\n`);

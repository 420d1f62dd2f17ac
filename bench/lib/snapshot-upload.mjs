// A large snapshot file checked while the server keeps answering (docs/robustness.md#hostile-files): the built CLI
// on the 100,000-row bench database exports a snapshot of it; a second server (in memory, one session live) receives
// that file with PUT /_emulator/snapshots/{name} while a client asks the root's GET /_emulator/health and the
// session's signed GET /v1/accounts every 20 ms. Prints the file's size, the upload's time, the latencies of the
// requests sent while it was checked, and the receiving server's peak RSS.
//
// Usage: npm run build && node bench/seed.mjs && node bench/lib/snapshot-upload.mjs [DB=bench/.data/transactions-100k.db]
// UPLOAD_CPU_PROF=DIR profiles the receiving server (node --cpu-prof).
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './free-port.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = path.join(ROOT, 'dist', 'service-sandbox.mjs');
const DB = path.resolve(process.argv[2] ?? path.join(ROOT, 'bench', '.data', 'transactions-100k.db'));
const KEY = { apiKey: 'pk_sandbox_single', secret: 'sk_sandbox_single_secret', programId: 'prg_sandbox' };

async function start(db, nodeFlags = []) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [...nodeFlags, CLI, '--port', String(port), '--host', '127.0.0.1', '--db', db, '--log-level', 'warn'], { stdio: ['ignore', 'ignore', 'inherit'] });
  for (let i = 0; i < 3000; i += 1) {
    try {
      if ((await fetch(`${url}/_emulator/health`)).ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return { url, child };
}

async function stop(server) {
  server.child.kill('SIGTERM');
  await once(server.child, 'exit');
}

const peakRssMb = (pid) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
const round = (value) => Math.round(value * 10) / 10;
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

// 1. the file: a snapshot of the seeded database, exported
const source = await start(DB);
const saved = await fetch(`${source.url}/_emulator/snapshots`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"big"}' });
if (saved.status !== 201) throw new Error(`saving the snapshot answered ${saved.status}: ${await saved.text()}`);
const file = Buffer.from(await (await fetch(`${source.url}/_emulator/snapshots/big/export`)).arrayBuffer());
await stop(source);

// 2. the upload, with a session answering beside it
const server = await start(':memory:', process.env.UPLOAD_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(process.env.UPLOAD_CPU_PROF)] : []);
const session = await (await fetch(`${server.url}/_emulator/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json();
const accounts = `${new URL(session.baseUrl).pathname}/v1/accounts`;
const signed = () => {
  const timestamp = String(Date.now());
  const signature = createHmac('sha256', KEY.secret).update(`${KEY.apiKey}${timestamp}GET${accounts}`).digest('hex');
  return { 'x-service-api-key': KEY.apiKey, 'x-service-timestamp': timestamp, 'x-service-program-id': KEY.programId, 'x-service-signature': signature };
};
const latencies = { health: [], accounts: [] };
let uploading = true;
const probe = (async () => {
  while (uploading) {
    let t0 = performance.now();
    const health = await fetch(`${server.url}/_emulator/health`);
    await health.text();
    latencies.health.push(performance.now() - t0);
    t0 = performance.now();
    const listed = await fetch(`${server.url}${accounts}`, { headers: signed() });
    await listed.text();
    if (listed.status !== 200) throw new Error(`the session's GET /v1/accounts answered ${listed.status}`);
    latencies.accounts.push(performance.now() - t0);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
})();
const t0 = performance.now();
const upload = await fetch(`${server.url}/_emulator/snapshots/uploaded`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: file });
const uploadMs = performance.now() - t0;
const uploadText = await upload.text();
uploading = false;
await probe;
const rss = peakRssMb(server.child.pid);
await stop(server);

const summary = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { requests: sorted.length, p50Ms: round(pct(sorted, 50)), p99Ms: round(pct(sorted, 99)), maxMs: round(sorted.at(-1)) };
};
const result = {
  fileMiB: round(file.length / 2 ** 20),
  uploadStatus: upload.status,
  uploadAnswer: uploadText.slice(0, 200),
  uploadSeconds: round(uploadMs / 1000),
  duringUpload: { health: summary(latencies.health), sessionAccounts: summary(latencies.accounts) },
  peakRssMb: round(rss),
  loadAverage: os.loadavg().map((value) => round(value)),
};
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
if (upload.status !== 201 && upload.status !== 200) process.exitCode = 1;

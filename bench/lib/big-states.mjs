// Big states (bench/README.md "Big states", docs/control-plane.md#big-states): save, sessions from the snapshot, their
// reset, the root's first reset, restore and export on a copy of the bench's database of 100,000 transactions, each
// timed as a client sees it, beside the longest wait of a health check another client of this process reads every
// 20 ms meanwhile (what every other sandbox would wait), from a thread of its own.
//
// Usage: npm run build && node bench/seed.mjs && node bench/lib/big-states.mjs [SERVER_JS=dist/service-sandbox.mjs]
// SERVER_JS may be another build's entry (a worktree of an earlier commit), to compare builds one after the other.
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { freePort } from './free-port.mjs';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const serverJs = process.argv[2] ?? path.join(ROOT, 'dist', 'service-sandbox.mjs');
const dir = mkdtempSync(path.join(tmpdir(), 'big-states-'));
const db = path.join(dir, 'sandbox.db');
copyFileSync(path.join(ROOT, 'bench', '.data', 'transactions-100k.db'), db);
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const child = spawn(process.execPath, ['--max-semi-space-size=4', serverJs, '--port', String(port), '--db', db, '--log-level', 'silent', '--max-sessions', '10'], {
  stdio: ['ignore', 'ignore', 'inherit'],
});
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
for (let i = 0; ; i += 1) {
  try {
    await fetch(`${base}/_emulator/health`);
    break;
  } catch (error) {
    if (i >= 600) throw error;
    await pause(100);
  }
}

// the health reads run on a thread of their own, so this thread's handling of a big answer (240 MB of export) does
// not count as the server's; the longest wait (ms) is shared memory this thread reads and zeroes between steps
const longestWait = new Int32Array(new SharedArrayBuffer(4));
const poller = new Worker(
  `const { workerData } = require('node:worker_threads');
  const longest = workerData.longest;
  (async () => {
    for (;;) {
      const t0 = performance.now();
      try { await (await fetch(workerData.url)).arrayBuffer(); } catch { return; }
      const ms = Math.round(performance.now() - t0);
      if (ms > Atomics.load(longest, 0)) Atomics.store(longest, 0, ms);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();`,
  { eval: true, workerData: { url: `${base}/_emulator/health`, longest: longestWait } },
);

const rows = [];
async function step(label, method, url, body) {
  await pause(100);
  Atomics.store(longestWait, 0, 0);
  const t0 = performance.now();
  const response = await fetch(base + url, { method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined });
  const bytes = Buffer.from(await response.arrayBuffer());
  const tookMs = performance.now() - t0;
  await pause(60); // a health read under way at the end is counted
  if (response.status >= 300) throw new Error(`${label}: ${response.status} ${bytes.toString().slice(0, 300)}`);
  const longest = Atomics.load(longestWait, 0);
  rows.push({ step: label, tookMs: Math.round(tookMs), longestHealthWaitMs: longest });
  process.stderr.write(`${label.padEnd(40)} ${String(Math.round(tookMs)).padStart(7)} ms; longest health wait ${longest} ms\n`);
  return bytes.length < 1_000_000 ? bytes.toString() : '';
}

try {
  await step('save', 'POST', '/_emulator/snapshots', { name: 'big' });
  const first = JSON.parse(await step('the first session from that snapshot', 'POST', '/_emulator/sessions', { snapshot: 'big' }));
  const later = JSON.parse(await step('a later session from it', 'POST', '/_emulator/sessions', { snapshot: 'big' }));
  await step("that session's reset, nothing written", 'POST', `/_sessions/${first.id}/_emulator/reset`);
  await step('a session ended', 'DELETE', `/_emulator/sessions/${later.id}`);
  await step("the root's first reset", 'POST', '/_emulator/reset');
  await step('restore after that reset', 'POST', '/_emulator/snapshots/big/restore');
  await step('restore again, nothing changed', 'POST', '/_emulator/snapshots/big/restore');
  await step('export', 'GET', '/_emulator/snapshots/big/export');
} finally {
  await poller.terminate();
  child.kill();
  await pause(200);
  rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(`${JSON.stringify({ serverJs, rows })}\n`);

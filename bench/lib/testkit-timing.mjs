// Times the in-process test kit: `await startSandbox()` (a sandbox on a random port with a webhook
// receiver) and `await sandbox.close()`, RUNS times after the package is imported. The first run is
// reported on its own (first use of every code path), the median over the others.
// Usage: node bench/lib/testkit-timing.mjs RUNS ; prints one JSON line.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const runs = Number(process.argv[2] ?? 10);
const importStarted = performance.now();
const { startSandbox } = await import(pathToFileURL(path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'src', 'index.js')).href);
const importMs = performance.now() - importStarted;
const start = [];
const close = [];
for (let i = 0; i < runs; i += 1) {
  const t0 = performance.now();
  const sandbox = await startSandbox();
  const t1 = performance.now();
  const response = await sandbox.signedFetch('GET', '/v1/accounts');
  if (response.status !== 200) throw new Error(`signedFetch answered ${response.status}`);
  await response.arrayBuffer();
  const t2 = performance.now();
  await sandbox.close();
  start.push(t1 - t0);
  close.push(performance.now() - t2);
}
process.stdout.write(`${JSON.stringify({ importMs, startMs: start, closeMs: close })}\n`);

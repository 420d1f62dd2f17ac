// Sessions started from a scenario (docs/benchmarks.md#sessions-from-a-scenario, docs/sessions.md#scenarios): the
// wall time of POST /_emulator/sessions { scenario: NAME } over real HTTP to the built server, `given` built before the
// 201, then DELETE; the median of ROUNDS for each shipped scenario named, and a session without a scenario beside them.
// Usage: npm run build && node bench/lib/scenario-sessions.mjs [ROUNDS=21] [NAME...] (default: every shipped scenario
// with a `given`, and the demo)
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { startServer } = await import(pathToFileURL(path.join(root, 'dist', 'src', 'server.js')).href);

const rounds = Number(process.argv[2] ?? 21) || 21;
const asked = process.argv.slice(3);
const names = asked.length > 0 ? asked : ['demo', 'deposit-settles', 'failed-payout-and-return', 'ambiguous-commit-retried', 'duplicate-webhooks-under-chaos'];

const server = await startServer({ config: { port: 0, host: '127.0.0.1', logLevel: 'silent' } });

async function median(body) {
  const times = [];
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    const created = await fetch(`${server.url}/_emulator/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const answer = await created.json();
    times.push(performance.now() - started);
    if (created.status !== 201) throw new Error(`${JSON.stringify(body)}: ${created.status} ${JSON.stringify(answer).slice(0, 300)}`);
    await fetch(`${server.url}/_emulator/sessions/${answer.id}`, { method: 'DELETE' });
  }
  times.sort((a, b) => a - b);
  return { median: times[Math.floor(times.length / 2)], min: times[0], max: times.at(-1) };
}

const results = {};
try {
  results['(no scenario)'] = await median({});
  for (const name of names) results[name] = await median({ scenario: name });
} finally {
  await server.close();
}
for (const [name, figure] of Object.entries(results)) {
  console.log(`${name.padEnd(32)} median ${figure.median.toFixed(1)} ms (min ${figure.min.toFixed(1)}, max ${figure.max.toFixed(1)}) over ${rounds}`);
}
console.log(JSON.stringify({ rounds, results }));

import { writeFileSync } from 'node:fs';
import { buildTestApp } from '../helper.js';
import { demoRoute, recordDemo } from './demo-transactions.js';

// Writes test/fixtures/demo-transactions.json: what the built-in demo's 17 steps make in a fresh seeded session
// (test/helpers/demo-transactions.ts). Run once, before the demo became a scenario file, and committed:
//   node --import=./scripts/ts-loader.mjs test/helpers/demo-transactions.generate.ts

const sandbox = await buildTestApp({ conformance: false });
try {
  const record = await recordDemo(sandbox, 17, demoRoute(sandbox));
  writeFileSync(new URL('../fixtures/demo-transactions.json', import.meta.url), `${JSON.stringify(record, null, 2)}\n`);
  console.log(`${record.steps.length} steps, ${record.steps.reduce((n, step) => n + step.transactions.length, 0)} transaction states`);
} finally {
  await sandbox.close();
}

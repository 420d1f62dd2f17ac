// schemas/scenario.schema.json, the JSON Schema of scenario files (docs/decisions.md#scenario-format), written from
// the zod schema that validates them (src/scenarios/scenario.json-schema.ts; TypeScript run through
// scripts/ts-loader.mjs, no build needed). `npm run openapi` runs it after the OpenAPI files.
//   node scripts/scenario-schema.mjs           write it
//   node scripts/scenario-schema.mjs --check   exit 1 when the committed file differs
// test/scenarios/scenario-schema.test.ts runs the same comparison.
import './ts-loader.mjs';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const SCENARIO_SCHEMA_FILE = path.join(root, 'schemas', 'scenario.schema.json');

const { scenarioJsonSchemaText } = await import('../src/scenarios/scenario.json-schema.ts');
const text = scenarioJsonSchemaText();

if (process.argv.includes('--check')) {
  let committed = '';
  try {
    committed = readFileSync(SCENARIO_SCHEMA_FILE, 'utf8');
  } catch {
    // a missing file is stale too
  }
  if (committed !== text) {
    process.stderr.write('schemas/scenario.schema.json is stale: run `npm run openapi` (or node scripts/scenario-schema.mjs) and commit it\n');
    process.exit(1);
  }
} else {
  mkdirSync(path.dirname(SCENARIO_SCHEMA_FILE), { recursive: true });
  writeFileSync(SCENARIO_SCHEMA_FILE, text);
  process.stdout.write(`wrote ${path.relative(root, SCENARIO_SCHEMA_FILE)}\n`);
}

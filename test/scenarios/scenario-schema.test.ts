import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { scenarioJsonSchemaText } from '../../src/scenarios/scenario.json-schema.js';
import { V1_ROUTES } from '../../src/scenarios/scenario.scopes.js';
import { routeCatalog } from '../../src/http/route-catalog.js';
import { buildTestApp } from '../helper.js';

// The published JSON Schema of scenario files (docs/decisions.md#scenario-format) is made from the zod schema: the
// committed copy must equal what the schema gives now, every field must carry words, and the loader's table of
// what each /v1 route needs of a key must equal what the routes declare.

const ROOT = path.join(import.meta.dirname, '..', '..');
const COMMITTED = path.join(ROOT, 'schemas', 'scenario.schema.json');

t.test('schemas/scenario.schema.json is not stale', async (t) => {
  t.equal(readFileSync(COMMITTED, 'utf8'), scenarioJsonSchemaText(), 'run `npm run openapi` (or node scripts/scenario-schema.mjs) and commit schemas/scenario.schema.json');
  const check = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'scenario-schema.mjs'), '--check'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  t.equal(check.status, 0, check.stderr);
});

t.test('every field of the JSON Schema has a description', async (t) => {
  const schema = JSON.parse(scenarioJsonSchemaText());
  const missing: string[] = [];
  const stack: Array<{ node: unknown; at: string }> = [{ node: schema, at: '$' }];
  while (stack.length > 0) {
    const { node, at } = stack.pop()!;
    if (Array.isArray(node)) {
      node.forEach((item, index) => stack.push({ node: item, at: `${at}[${index}]` }));
    } else if (node && typeof node === 'object') {
      const record = node as Record<string, unknown>;
      if (record.properties && typeof record.properties === 'object') {
        for (const [name, property] of Object.entries(record.properties as Record<string, Record<string, unknown>>)) {
          if (typeof property.description !== 'string' || property.description.length === 0) missing.push(`${at}.properties.${name}`);
        }
      }
      for (const [key, value] of Object.entries(record)) stack.push({ node: value, at: `${at}.${key}` });
    }
  }
  t.same(missing, []);
});

t.test('the key table equals the scopes the /v1 routes declare', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const declared = routeCatalog(sandbox.app)
    .filter((route) => route.url.startsWith('/v1/') && route.method !== 'HEAD')
    .map((route) => ({ method: route.method, url: route.url, scope: route.auth?.scope ?? null, user: route.auth?.user }))
    .sort((a, b) => `${a.url} ${a.method}`.localeCompare(`${b.url} ${b.method}`));
  const table = [...V1_ROUTES].sort((a, b) => `${a.url} ${a.method}`.localeCompare(`${b.url} ${b.method}`));
  t.same(table, declared);
});

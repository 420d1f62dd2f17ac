// `npm run generate`: every derived file of the repository, written again from its sources, in order
// (docs/architecture.md#generated-files). `npm run generate -- --check` writes nothing and exits 1 naming each
// generator whose files differ from what it would write (run it before a commit, or let the tests say it:
// test/docs/generated-files.test.ts checks that this list covers every generated file and names the test that
// fails when each is stale).
//
// To add a generated file: add one entry to GENERATED below (its script must take `--check`), in an order where what
// it reads is written before it. Nothing else: `generate`, `generate -- --check` and the coverage test read this list.
//   node scripts/generate.mjs                 write everything
//   node scripts/generate.mjs --check         compare only
//   node scripts/generate.mjs --only NAME,..  the named entries only (e.g. --only models)
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The generators, in the order they run. `outputs` are the files (or folders) each writes, relative to the root;
 * `test` is the test file that fails when they are stale.
 */
export const GENERATED = [
  {
    name: 'openapi',
    script: 'scripts/openapi.mjs',
    reads: 'the routes, their zod schemas, src/http/openapi-document.ts, fixtures/default.json (the examples journey, scripts/openapi-examples.ts)',
    outputs: ['openapi/examples.json', 'openapi/openapi.json', 'openapi/service-sandbox.postman_collection.json', 'src/client/generated/openapi.ts'],
    test: ['test/http/openapi-examples.test.ts', 'test/http/openapi-static.test.ts', 'test/http/postman-collection.test.ts', 'test/client-kit/client-types.test.ts'],
  },
  {
    name: 'python-models',
    script: 'scripts/python-models.mjs',
    reads: 'openapi/openapi.json',
    outputs: ['clients/python/src/service_sandbox/models.py'],
    test: ['test/kits/python-models.test.ts'],
  },
  { name: 'go-models', script: 'scripts/go-models.mjs', reads: 'openapi/openapi.json', outputs: ['clients/go/sandbox/models_gen.go'], test: ['test/kits/go.test.ts'] },
  {
    name: 'java-models',
    script: 'scripts/java-models.mjs',
    reads: 'openapi/openapi.json',
    outputs: ['clients/java/client/src/main/java/dev/servicesandbox/model/'],
    test: ['test/kits/java.test.ts'],
  },
  {
    name: 'scenario-schema',
    script: 'scripts/scenario-schema.mjs',
    reads: 'src/scenarios/scenario.schema.ts (the zod schema that validates scenario files)',
    outputs: ['schemas/scenario.schema.json'],
    test: ['test/scenarios/scenario-schema.test.ts'],
  },
  {
    name: 'signing-vectors',
    script: 'scripts/signing-vectors.mjs',
    reads: 'scripts/signing-vectors.ts (the reference signing code)',
    outputs: ['clients/signing-vectors.json'],
    test: ['test/kits/signing-vectors.test.ts'],
  },
];

/** Entry names that select several: `models` is the three kits' models (the old `npm run models`). */
const GROUPS = { models: ['python-models', 'go-models', 'java-models'] };

function selected(argv) {
  const at = argv.indexOf('--only');
  if (at < 0) return GENERATED;
  const names = (argv[at + 1] ?? '').split(',').flatMap((name) => GROUPS[name] ?? [name]);
  const unknown = names.filter((name) => !GENERATED.some((entry) => entry.name === name));
  if (unknown.length) throw new Error(`scripts/generate.mjs: no generator ${unknown.join(', ')} (known: ${GENERATED.map((entry) => entry.name).join(', ')}, models)`);
  return GENERATED.filter((entry) => names.includes(entry.name));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  const stale = [];
  for (const entry of selected(process.argv)) {
    const run = spawnSync(process.execPath, [path.join(root, entry.script), ...(check ? ['--check'] : [])], { cwd: root, encoding: 'utf8' });
    const said = `${run.stdout ?? ''}${run.stderr ?? ''}`.trim();
    if (run.status !== 0) {
      if (!check) {
        process.stderr.write(`${entry.script} failed:\n${said}\n`);
        process.exit(1);
      }
      stale.push(`${entry.name} (${entry.outputs.join(', ')}): ${said}`);
    } else {
      // a generator that checks silently says nothing: its files match
      process.stdout.write(`${entry.name}: ${said ? said.split('\n').join('; ') : check ? 'up to date' : 'written'}\n`);
    }
  }
  if (stale.length) {
    process.stderr.write(`stale generated files, run \`npm run generate\`:\n${stale.map((line) => `- ${line}`).join('\n')}\n`);
    process.exit(1);
  }
}

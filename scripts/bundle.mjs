// Bundle the compiled server (dist/src/cli.js) into one file, dist/service-sandbox.mjs, which `npm start`,
// the `service-sandbox` bin and the Docker image run (cold start: docs/benchmarks.md). Node 20 spends much of a
// start resolving, reading and compiling several hundred small module files (fastify, zod, pino and
// ours); one file skips that. Packages that read their own files at run time, native ones and the ones
// the server loads only on first use stay outside, loaded from node_modules as before.
import { build } from 'esbuild';
import path from 'node:path';
import { rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export const BUNDLE = path.join(root, 'dist', 'service-sandbox.mjs');

export const EXTERNAL = [
  'better-sqlite3', // native addon
  'pdfkit', // reads its font files next to itself; loaded on the first PDF statement
  'pdfjs-dist', // loaded on the first PDF document upload
  '@fastify/swagger-ui', // serves its own static files; loaded on the first /docs request
  'undici', // loaded on the first webhook delivery
  'fast-xml-parser', // loaded on the first pacs.008 payout
  'csv-stringify',
  // Required by Fastify only on demand, and parsing them is start-up time: the default ajv and
  // fast-json-stringify compilers (zod compiles every schema, so they are never asked for), the test
  // injector (the first /docs request), and pino's worker transport (not used).
  '@fastify/ajv-compiler',
  '@fastify/fast-json-stringify-compiler',
  'light-my-request',
  'thread-stream',
];

/** The lazy stand-in of `yaml`: one enumerable getter per export name of the real package, each loading it on first use. */
function lazyYamlStandIn() {
  const names = Object.keys(createRequire(import.meta.url)('yaml'));
  return `let real; const load = () => (real ??= require('yaml'));
for (const name of ${JSON.stringify(names)}) Object.defineProperty(module.exports, name, { enumerable: true, get: () => load()[name] });`;
}

/**
 * Two packages that the bundle would parse whole for little use:
 * - zod's 40 locales (≈390 KB): the classic API re-exports them all as `z.locales`; the emulator's messages
 *   are English, so `z.locales` holds `en` only (zod registers `en` as the default itself).
 * - yaml (≈250 KB), which @fastify/swagger requires at load for its YAML output (/docs/yaml): a stand-in
 *   requires the real package from node_modules on first use. The stand-in has every export name of the real
 *   package as its own property (a getter that loads it), listed here at build time: a named or namespace
 *   `import ... from 'yaml'` goes through esbuild's __toESM, which copies a CommonJS module's own keys, and a
 *   stand-in without them gave `stringify` as undefined to `scenario-from-journal` (docs/scenarios.md#the-skeleton-command).
 */
const trimmed = {
  name: 'trimmed-packages',
  setup(b) {
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (args) =>
      args.importer.includes(`${path.sep}zod${path.sep}`) ? { path: path.join(path.dirname(args.importer), '..', 'locales', 'en.js'), namespace: 'zod-locales' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)};`,
      resolveDir: path.dirname(args.path),
      loader: 'js',
    }));
    b.onResolve({ filter: /^yaml$/ }, (args) => (args.namespace === 'lazy-yaml' ? { path: 'yaml', external: true } : { path: 'yaml', namespace: 'lazy-yaml' }));
    b.onLoad({ filter: /.*/, namespace: 'lazy-yaml' }, () => ({
      contents: lazyYamlStandIn(),
      loader: 'js',
    }));
  },
};

/**
 * The snapshot check's worker thread (src/snapshots/snapshots.worker.ts) as dist/snapshots.worker.js, next to the bundle:
 * the bundle starts it by that name relative to itself, as tsc's output finds its own copy beside snapshots.check.js.
 */
export const SNAPSHOT_WORKER = path.join(root, 'dist', 'snapshots.worker.js');

/** What both bundles share: one ES module for Node 20, the server's externals, the trimmed packages. */
const SHARED = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: EXTERNAL,
  plugins: [trimmed],
  // CommonJS packages inside an ES module bundle still call require() for Node's built-ins.
  banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
  logLevel: 'warning',
  legalComments: 'none',
};

/** The scenario reader's worker thread (src/scenarios/scenario.worker.ts) as dist/scenario.worker.js, found the same way. */
export const SCENARIO_WORKER = path.join(root, 'dist', 'scenario.worker.js');

export async function bundle() {
  await build({ ...SHARED, entryPoints: [path.join(root, 'dist', 'src', 'snapshots', 'snapshots.worker.js')], outfile: SNAPSHOT_WORKER });
  await build({ ...SHARED, entryPoints: [path.join(root, 'dist', 'src', 'scenarios', 'scenario.worker.js')], outfile: SCENARIO_WORKER });
  await build({ ...SHARED, entryPoints: [path.join(root, 'dist', 'src', 'cli.js')], outfile: BUNDLE });
}

/**
 * dist/schema.sqlite: the migrations run once, here, on an empty in-memory database, whose bytes every in-memory
 * database of the server and the test kit then opens (src/db/connection.ts, SCHEMA_IMAGE; docs/benchmarks.md#the-schema-image).
 * Made from scratch: any image of an earlier build is removed first, so it cannot be carried forward.
 */
export async function schemaImage() {
  const { SCHEMA_IMAGE, openDatabase } = await import(pathToFileURL(path.join(root, 'dist', 'src', 'db', 'connection.js')).href);
  rmSync(SCHEMA_IMAGE, { force: true });
  const db = openDatabase(':memory:');
  writeFileSync(SCHEMA_IMAGE, db.serialize());
  db.close();
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.join(root, 'scripts', 'bundle.mjs')) {
  await schemaImage(); // before the bundle: the bundle is the build's finishing mark (scripts/build-if-needed.mjs)
  await bundle();
}

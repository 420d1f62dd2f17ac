import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { ensureBuilt, PROJECT_ROOT, startServerProcess } from '../helpers/server-process.js';
import { plainCommand, plainNode } from '../helpers/node-child.js';
import { ensurePeers, peersMissing } from '../helpers/peers.js';

// Five client generators as integrators use them (docs/openapi.md#generators): each generates a client from
// openapi/openapi.json, tsc compiles its journey (test/client/generators/<generator>.ts, with common.ts and
// its signing adapter) in strict mode with no cast, and the journey runs against the built server: numeric
// paging, a beneficiary, an intent created and committed, a payout (the payout signature variant), a statement
// PDF read as bytes. The generators are installed on demand into .peers/generators (test/helpers/peers.ts);
// openapi-typescript and openapi-fetch are devDependencies.

const exec = promisify(execFile);
// Five generators, then strict tsc over five generated clients: 29 s on a quiet machine, 90-160 s in the clean-clone
// CI runs, and once past tap's 240 s when the machine was loaded beside the run (2026-11-28). Bounded only to fail.
t.setTimeout(600_000);
const DOCUMENT = path.join(PROJECT_ROOT, 'openapi', 'openapi.json');
const SOURCES = path.join(PROJECT_ROOT, 'test', 'client', 'generators');
const PACKAGES = {
  '@hey-api/openapi-ts': '0.95.0', // the newest whose engines accept Node 20 (>=20.19.0)
  orval: '7.13.2', // the newest without engines node >=22.18
  'swagger-typescript-api': '13.13.0',
  'openapi-zod-client': '1.18.3',
  '@zodios/core': '10.9.6', // the generated client's runtime, with its peers zod 3 and axios
  zod: '3.25.76',
  axios: '1.13.5',
  typescript: '5.9.3', // hey-api's peer, the project's own compiler version (npm would otherwise pick the newest)
};

interface Generator {
  name: string;
  dir: string;
  /** The journey and the hand-written adapter files it needs next to it. */
  files: string[];
  generate(bin: (tool: string) => string, dir: string): [string, string[]];
}

const projectBin = (tool: string) => path.join(PROJECT_ROOT, 'node_modules', '.bin', tool);
const GENERATORS: Generator[] = [
  {
    name: 'openapi-typescript + openapi-fetch',
    dir: 'openapi-fetch',
    files: ['openapi-fetch.ts'],
    generate: (_bin, dir) => [projectBin('openapi-typescript'), [DOCUMENT, '-o', path.join(dir, 'generated', 'schema.d.ts')]],
  },
  {
    name: 'hey-api (@hey-api/openapi-ts, fetch client)',
    dir: 'hey-api',
    files: ['hey-api.ts'],
    generate: (bin, dir) => [bin('openapi-ts'), ['-i', DOCUMENT, '-o', path.join(dir, 'generated'), '-c', '@hey-api/client-fetch']],
  },
  {
    name: 'orval (fetch client with a mutator)',
    dir: 'orval',
    files: ['orval.ts', 'orval-fetch.ts'],
    generate: (bin, dir) => {
      // orval's mutator option (docs/openapi.md#orval); extension: the import generated code writes for it (NodeNext)
      const config = { sandbox: { input: DOCUMENT, output: { target: 'generated/api.ts', client: 'fetch', mode: 'single', headers: true, prettier: false, override: { mutator: { path: 'orval-fetch.ts', name: 'signedOrvalFetch', extension: '.js' } } } } };
      writeFileSync(path.join(dir, 'orval.config.cjs'), `module.exports = ${JSON.stringify(config)};\n`);
      return [bin('orval'), ['--config', 'orval.config.cjs']];
    },
  },
  {
    name: 'swagger-typescript-api',
    dir: 'swagger-typescript-api',
    files: ['swagger-typescript-api.ts'],
    generate: (bin, dir) => [bin('swagger-typescript-api'), ['generate', '-p', DOCUMENT, '-o', path.join(dir, 'generated'), '-n', 'api.ts']],
  },
  {
    name: 'openapi-zod-client (Zodios, axios)',
    dir: 'openapi-zod-client',
    files: ['openapi-zod-client.ts'],
    // --media-type-expr: the PDF answer gets a schema (z.instanceof(File)) instead of z.void() (docs/openapi.md#openapi-zod-client)
    generate: (bin, dir) => {
      mkdirSync(path.join(dir, 'generated'), { recursive: true });
      return [bin('openapi-zod-client'), [DOCUMENT, '-o', path.join(dir, 'generated', 'api.ts'), '--media-type-expr', "mediaType === 'application/json' || mediaType === 'application/pdf'"]];
    },
  },
];

t.test('five generated clients compile under strict tsc and run the journey', async (t) => {
  await ensureBuilt();
  const peers = await ensurePeers('generators', PACKAGES, { 'service-sandbox': PROJECT_ROOT });
  if (typeof peers === 'string') return peersMissing(t, peers);
  const server = await startServerProcess({ db: ':memory:' });
  t.teardown(() => server.stop());

  // One workspace per generator under .peers/generators/work (outside the source trees; its node_modules
  // give zod 3 and axios to the Zodios client), compiled together by one tsc with test/client/tsconfig.json's options.
  // Each run generates again into a fresh generated/ folder; tsc's incremental build info (kept in work/) spares
  // re-checking a generated file whose text has not changed since the last run.
  const work = path.join(peers.dir, 'work');
  for (const generator of GENERATORS) rmSync(path.join(work, generator.dir, 'generated'), { recursive: true, force: true });
  let started = Date.now();
  await Promise.all(
    GENERATORS.map(async (generator) => {
      const dir = path.join(work, generator.dir);
      mkdirSync(dir, { recursive: true });
      for (const file of ['common.ts', ...generator.files]) copyFileSync(path.join(SOURCES, file), path.join(dir, file));
      const [command, args] = generator.generate(peers.bin, dir);
      await exec(...plainCommand(command, args), { cwd: dir, timeout: 120_000 });
    }),
  );
  t.pass(`five clients generated (${Date.now() - started} ms)`);

  const options = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'test', 'client', 'tsconfig.json'), 'utf8'));
  const journeys = GENERATORS.map((generator) => `${generator.dir}/${generator.files[0]}`);
  const compilerOptions = {
    ...options.compilerOptions,
    lib: ['ES2022', 'DOM'],
    outDir: 'out',
    rootDir: '.',
    typeRoots: [path.join(PROJECT_ROOT, 'node_modules', '@types')],
    incremental: true,
    tsBuildInfoFile: '.tsbuildinfo',
  };
  writeFileSync(path.join(work, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: journeys }));
  t.equal(compilerOptions.strict, true, 'strict mode');
  started = Date.now();
  const compiled = await exec(...plainCommand(projectBin('tsc'), ['-p', path.join(work, 'tsconfig.json')]), { cwd: work }).catch(
    (error: { stdout: string; stderr: string }) => error,
  );
  const compileErrors = compiled.stdout.trim().split('\n').filter(Boolean);
  t.same(compileErrors, [], `strict tsc compiles the five journeys and their generated clients (${Date.now() - started} ms)`);

  started = Date.now();
  const runs = await Promise.all(
    GENERATORS.map((generator) =>
      exec(...plainNode([path.join(work, 'out', generator.dir, generator.files[0]!.replace(/\.ts$/, '.js'))]), { cwd: work, env: { ...process.env, SANDBOX_URL: server.url }, timeout: 60_000 }).catch(
        (error: { stdout: string; stderr: string }) => error,
      ),
    ),
  );
  const elapsed = Date.now() - started;
  GENERATORS.forEach((generator, index) => {
    const run = runs[index]!;
    t.equal(run.stderr, '', `${generator.name}: the journey ran without a surprise`);
    t.match(
      JSON.parse(run.stdout.trim() || '{}'),
      {
        page: { pageSize: 5, rows: 5 },
        beneficiary: /^ben_/,
        intent: 'COMMITTED',
        payout: { status: 'RECEIVED', transactionId: /^txn_/ },
        statement: { magic: '%PDF-', bytes: Number },
      },
      `${generator.name}: paging, beneficiary, intent committed, payout, statement PDF`,
    );
  });
  t.pass(`five journeys ran (${elapsed} ms)`);
});

t.test('the journeys and their signing adapters use no cast and no any', async (t) => {
  for (const file of ['common.ts', ...GENERATORS.flatMap((generator) => generator.files)]) {
    const source = readFileSync(path.join(SOURCES, file), 'utf8').replace(/\/\/.*$/gm, '');
    t.notMatch(source, /\bas\s+(?!const\b)[A-Za-z_{[(]/, `${file}: no type assertion`);
    t.notMatch(source, /<any>|:\s*any\b/, `${file}: no any`);
    t.notMatch(source, /!\./, `${file}: no non-null assertion`);
  }
});

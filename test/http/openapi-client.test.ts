import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { ensureBuilt, PROJECT_ROOT, startServerProcess } from '../helpers/server-process.js';
import { plainCommand, plainNode } from '../helpers/node-child.js';

// A typed client generated from the served document, as an integrator would make one
// (docs/openapi.md#generating-a-typescript-client): openapi-typescript writes the types from the built
// server's /openapi.json, tsc compiles test/client/journey.ts (openapi-fetch) in strict mode, and the
// compiled journey runs against that server: create a user, onboard, deposit, advance the clock, list
// transactions with numeric paging, create a beneficiary, commit an intent, submit a payout.
// test/http/openapi-contract.test.ts runs the same journey through Prism's validating proxy.

const exec = promisify(execFile);
const bin = (name: string) => path.join(PROJECT_ROOT, 'node_modules', '.bin', name);
const CLIENT = path.join(PROJECT_ROOT, 'test', 'client');
const WORK = path.join(PROJECT_ROOT, '.tap', 'client-journey');
const OUT = path.join(WORK, 'out');

t.test('a client generated with openapi-typescript + openapi-fetch compiles under strict tsc and runs the journey', async (t) => {
  await ensureBuilt();
  const server = await startServerProcess({ db: ':memory:' });
  t.teardown(() => server.stop());

  // The client is built in a workspace outside the source trees (generated files are not sources):
  // journey.ts next to its generated types, compiled with test/client/tsconfig.json's options.
  const document = await (await fetch(`${server.url}/openapi.json`)).text();
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(path.join(WORK, 'generated'), { recursive: true });
  const documentFile = path.join(WORK, 'generated', 'openapi.json');
  writeFileSync(documentFile, document);
  copyFileSync(path.join(CLIENT, 'journey.ts'), path.join(WORK, 'journey.ts'));
  const options = JSON.parse(readFileSync(path.join(CLIENT, 'tsconfig.json'), 'utf8'));
  writeFileSync(path.join(WORK, 'tsconfig.json'), JSON.stringify({ ...options, compilerOptions: { ...options.compilerOptions, outDir: OUT } }));

  let started = Date.now();
  await exec(...plainCommand(bin('openapi-typescript'), [documentFile, '-o', path.join(WORK, 'generated', 'schema.d.ts')]), { cwd: PROJECT_ROOT });
  const schema = readFileSync(path.join(WORK, 'generated', 'schema.d.ts'), 'utf8');
  t.match(schema, /listTransactions: \{/, `types generated, operations named (${Date.now() - started} ms)`);
  t.match(schema, /pageSize\?: number/, 'pageSize is a number');

  started = Date.now();
  const compiled = await exec(...plainCommand(bin('tsc'), ['-p', path.join(WORK, 'tsconfig.json')]), { cwd: PROJECT_ROOT }).catch(
    (error: { stdout: string; stderr: string; code: number }) => error,
  );
  t.equal(compiled.stdout.trim(), '', `strict tsc compiles the journey with no error (${Date.now() - started} ms)`);

  // no casts, no any: the generated types carry the journey as written
  const source = readFileSync(path.join(CLIENT, 'journey.ts'), 'utf8').replace(/\/\/.*$/gm, '');
  t.notMatch(source, /\bas\s+(?!const\b)[A-Za-z_{[(]/, 'no type assertion');
  t.notMatch(source, /<any>|:\s*any\b/, 'no any');
  t.notMatch(source, /!\./, 'no non-null assertion');

  started = Date.now();
  const journey = await exec(...plainNode([path.join(OUT, 'journey.js')]), { cwd: PROJECT_ROOT, env: { ...process.env, SANDBOX_URL: server.url } }).catch(
    (error: { stdout: string; stderr: string; code: number }) => error,
  );
  t.equal(journey.stderr, '', `the journey ran without a surprise (${Date.now() - started} ms)`);
  const seen = JSON.parse(journey.stdout.trim() || '{}');
  t.match(seen, {
    user: /^usr_/,
    onboardedAccounts: ['USD'],
    deposit: { status: 'COMPLETED', type: 'DEPOSIT', pageSize: 25 },
    beneficiary: /^ben_/,
    intent: 'COMMITTED',
    payout: { status: 'RECEIVED', transactionId: /^txn_/ },
    notFound: 'NOT_FOUND',
  });
});


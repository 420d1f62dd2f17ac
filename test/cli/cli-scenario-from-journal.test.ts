import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { CLI, ensureBuilt } from '../helpers/server-process.js';
import { plainNode } from '../helpers/node-child.js';
import { loadScenario } from '../../src/scenarios/scenario.load.js';

// `service-sandbox scenario-from-journal` from the built CLI (docs/scenarios.md#the-skeleton-command): the bundle's
// stand-in for `yaml` (scripts/bundle.mjs) once gave the command no `stringify`, so it exited 1 on every journal; the
// tests of src/ import the real package and never saw it. The journal is two entries of a real `GET /_emulator/requests`.

const JOURNAL = {
  data: [
    {
      seq: 1,
      at: '2026-11-28T07:46:27.694Z',
      method: 'POST',
      path: '/v1/sandbox/accounts/acct_acme_usd/deposits',
      query: null,
      status: 202,
      latencyMs: 5.1,
      programmeId: 'prg_sandbox',
      userId: 'usr_acme',
      authMode: 'hmac',
      requestHeaders: { 'x-service-api-key': 'pk_sandbox_single', 'x-service-program-id': 'prg_sandbox', 'x-service-signature': '[REDACTED]', 'content-type': 'application/json' },
      requestBody: { depositInstructionId: 'di_acme_usd_ach', amount: '1250.00', reference: 'INV', counterpartyName: 'N' },
      responseBody: { message: 'Deposit txn_e5v2hnnt88fx7sb4 of 1250.00 USD via ACH accepted; it completes after 1000 ms of emulated time' },
      faults: [],
    },
    {
      seq: 2,
      at: '2026-11-28T07:46:27.925Z',
      method: 'GET',
      path: '/v1/accounts',
      query: null,
      status: 200,
      latencyMs: 5.2,
      programmeId: 'prg_sandbox',
      userId: 'usr_acme',
      authMode: 'hmac',
      requestHeaders: { 'x-service-api-key': 'pk_sandbox_single', 'x-service-program-id': 'prg_sandbox', 'x-service-signature': '[REDACTED]' },
      requestBody: null,
      responseBody: { data: [{ id: 'acct_acme_usd', currency: 'USD' }], pageIndex: 0, pageSize: 25, totalRecords: 1 },
      faults: [],
    },
  ],
  capacity: 1000,
};

t.test('the built CLI turns a saved journal into a scenario skeleton that loads', async (t) => {
  await ensureBuilt();
  const dir = mkdtempSync(path.join(tmpdir(), 'scenario-from-journal-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const journal = path.join(dir, 'journal.json');
  writeFileSync(journal, JSON.stringify(JOURNAL));

  const env = { ...process.env };
  for (const name of ['ADMIN_TOKEN', 'NODE_OPTIONS']) delete env[name];
  const child = spawnSync(...plainNode([CLI, 'scenario-from-journal', '--journal', journal, '--name', 'rec']), { env, encoding: 'utf8', timeout: 60_000 });
  t.equal(child.stderr, '', 'nothing on stderr');
  t.equal(child.status, 0, 'exit 0');

  const loaded = loadScenario(child.stdout, 'rec.yaml');
  t.equal(loaded.scenario.name, 'rec');
  t.same(
    loaded.scenario.steps.map((step) => [step.request?.method, step.request?.path, step.expect?.status]),
    [
      ['POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', 202],
      ['GET', '/v1/accounts', 200],
    ],
    'one request step per recorded /v1 call, expecting the recorded status',
  );
  t.same(loaded.scenario.steps[0]!.request?.as, { key: 'pk_sandbox_single' }, 'signed with the key the journal names');
  t.same(loaded.scenario.steps[0]!.request?.body, JOURNAL.data[0]!.requestBody, 'the recorded body');
});

// docs/robustness.md#files-a-user-names: a --journal that is not a regular file is refused at once (a FIFO used to hang
// the command, /dev/zero to grow it without end); an empty ADMIN_TOKEN is refused as an empty flag is.
t.test('the built CLI refuses a --journal that is not a regular file, and an empty ADMIN_TOKEN', async (t) => {
  await ensureBuilt();
  const dir = mkdtempSync(path.join(tmpdir(), 'scenario-from-journal-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const fifo = path.join(dir, 'journal.fifo');
  execFileSync('mkfifo', [fifo]);
  const env = { ...process.env };
  for (const name of ['ADMIN_TOKEN', 'NODE_OPTIONS']) delete env[name];
  const cases: Array<[string[], NodeJS.ProcessEnv, RegExp]> = [
    [['--journal', fifo], env, /^service-sandbox scenario-from-journal: --journal .*journal\.fifo: cannot read it: it is a FIFO \(named pipe\), not a regular file\n$/],
    [['--journal', '/dev/zero'], env, /^service-sandbox scenario-from-journal: --journal \/dev\/zero: cannot read it: it is a character device, not a regular file\n$/],
    [['--journal', dir], env, /: it is a directory, not a regular file\n$/],
    [['--url', 'http://127.0.0.1:9'], { ...env, ADMIN_TOKEN: '' }, /^service-sandbox scenario-from-journal: ADMIN_TOKEN is set but empty: give it a value, or unset it\n$/],
  ];
  for (const [args, childEnv, message] of cases) {
    const child = spawnSync(...plainNode([CLI, 'scenario-from-journal', ...args]), { env: childEnv, encoding: 'utf8', timeout: 60_000 });
    t.equal(child.status, 2, args.join(' '));
    t.match(child.stderr, message, args.join(' '));
    t.equal(child.stdout, '');
  }
});

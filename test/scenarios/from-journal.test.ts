import t from 'tap';
import { parse } from 'yaml';
import { fromJournalCommand } from '../../src/cli/from-journal.command.js';
import { keyBookFromFixtures } from '../../src/scenarios/scenario.keys.js';
import { loadScenario } from '../../src/scenarios/scenario.load.js';
import { runScenario } from '../../src/scenarios/scenario.run.js';
import { scenarioFromJournal, type JournalEntry } from '../../src/scenarios/scenario.from-journal.js';
import { injectTransport } from '../../src/scenarios/scenario.transport.js';
import { signRequest } from '../../src/lib/hmac.js';
import { buildTestApp, CREDENTIALS, json, type TestApp } from '../helper.js';

// docs/scenarios.md#from-a-request-journal-to-a-scenario: a flow recorded in a session's journal becomes a scenario
// skeleton that loads, refers to the ids earlier answers gave through captures, and replays to its end in a fresh
// session with the same seed; the CLI wrapper's refusals are one line with exit code 2.

const SEED = 'recorded-flow';
const CLOCK = '2026-03-01T12:00:00Z';

async function session(sandbox: TestApp): Promise<string> {
  const created = await sandbox.app.inject({ method: 'POST', url: '/_emulator/sessions', payload: { seed: SEED, clock: CLOCK } });
  return `/_sessions/${json<{ id: string }>(created).id}`;
}

/** A signed /v1 call into a session, as a client sends it. */
async function call(sandbox: TestApp, prefix: string, method: string, path: string, body?: unknown, as: { key?: 'multi' | 'single'; user?: string; idempotencyKey?: string } = {}) {
  const key = as.key === 'multi' ? CREDENTIALS.multi : CREDENTIALS.single;
  const payout = path.startsWith('/v1/payout-origination/');
  const payload = body === undefined ? '' : payout ? Buffer.from(JSON.stringify(body)).toString('base64') : JSON.stringify(body);
  const headers: Record<string, string> = payout
    ? {}
    : {
        'x-service-api-key': key.apiKey,
        'x-service-program-id': CREDENTIALS.programmeId,
      };
  if (payout) {
    // the payout variant (docs/payouts.md#signing-the-payout-variant) through the client's own signer
    const { signedHeaders } = await import('../../src/client/signing.js');
    Object.assign(headers, signedHeaders({ key: { apiKey: key.apiKey, secret: key.secret, programmeId: CREDENTIALS.programmeId }, method, target: prefix + path, body: payload }));
  } else {
    const timestamp = String(Date.now());
    headers['x-service-timestamp'] = timestamp;
    headers['x-service-signature'] = signRequest({ apiKey: key.apiKey, secret: key.secret, timestamp, method, target: prefix + path, body: payload });
  }
  if (as.user) headers['x-service-user-id'] = as.user;
  if (as.idempotencyKey) headers['idempotency-key'] = as.idempotencyKey;
  if (body !== undefined) headers['content-type'] = payout ? 'text/plain' : 'application/json';
  const response = await sandbox.app.inject({ method: method as 'GET', url: prefix + path, headers, ...(body === undefined ? {} : { payload }) });
  return { status: response.statusCode, body: response.body ? JSON.parse(response.body) : null };
}

t.test('a recorded flow becomes a skeleton that loads, refers to captured ids and replays to its end', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());

  // record: a user signs up and reads its enrollment; Acme is paid, pays out, and the clock moves
  const prefix = await session(sandbox);
  const user = await call(sandbox, prefix, 'POST', '/v1/auth/users', { externalId: 'recorded', type: 'BUSINESS', name: 'Recorded Ltd' }, { key: 'multi' });
  t.equal(user.status, 201);
  t.equal((await call(sandbox, prefix, 'GET', '/v1/enrollment', undefined, { key: 'multi', user: user.body.userId })).status, 200);
  t.equal((await call(sandbox, prefix, 'POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: '75.00' })).status, 202);
  const list = await call(sandbox, prefix, 'GET', '/v1/transactions?accountId=acct_acme_usd&pageSize=1');
  const payout = await call(sandbox, prefix, 'POST', '/v1/payout-origination/json', { entityId: 'acct_acme_usd', beneficiaryId: 'ben_globex', amount: '20.00', currency: 'USD', reference: 'Recorded 1' }, { idempotencyKey: 'recorded-0001' });
  t.equal(payout.status, 202);
  await sandbox.app.inject({ method: 'POST', url: `${prefix}/_emulator/clock`, payload: { advanceMs: 4000 } });
  t.equal((await call(sandbox, prefix, 'GET', `/v1/transactions/${list.body.data[0].id}`)).status, 200);
  t.equal((await call(sandbox, prefix, 'GET', `/v1/transactions/${payout.body.transactionId}`)).status, 200);
  const journal = json<{ data: JournalEntry[] }>(await sandbox.app.inject({ method: 'GET', url: `${prefix}/_emulator/requests` }));

  const text = scenarioFromJournal(journal.data, { name: SEED });
  t.match(text, /^# yaml-language-server: \$schema=\.\.\/schemas\/scenario\.schema\.json\n/);
  const skeleton = parse(text);
  const steps = skeleton.steps as Array<Record<string, any>>;
  t.equal(steps.length, 8, 'one step per call: six API calls, the clock, and nothing for the journal read itself');
  t.same(steps[0]!.capture, { usr1: 'body.userId' }, 'the new user id is captured');
  t.same(steps[1]!.request.as, { user: '${usr1}' }, 'and signs the next call as that user');
  t.same(steps[3]!.capture, { txn1: 'body.data.0.id' }, 'the listed deposit id is captured');
  t.same(steps[4]!.request.base64, { entityId: 'acct_acme_usd', beneficiaryId: 'ben_globex', amount: '20.00', currency: 'USD', reference: 'Recorded 1' }, 'the payout body decoded');
  t.equal(steps[4]!.request.idempotencyKey, 'recorded-0001');
  t.same(steps[4]!.request.as, { key: 'pk_sandbox_single' });
  t.equal(steps[5]!.advance, '4000ms');
  t.equal(steps[6]!.request.path, '/v1/transactions/${txn1}');
  t.equal(steps[7]!.request.path, '/v1/transactions/${txn2}');

  // replay: the skeleton loads and runs to its end in a fresh session
  const loaded = loadScenario(text, 'recorded.yaml');
  const replay = await session(sandbox);
  const result = await runScenario(injectTransport(sandbox.app, replay), loaded, keyBookFromFixtures(sandbox.ctx.fixtures)!);
  t.ok(result.passed, result.failure ? `${result.failure.line}:${result.failure.column}: ${result.failure.message}` : 'passed');
  t.equal(result.steps.length, steps.length);
});

t.test('scenario-from-journal: a saved journal in, YAML out; refusals are one line with exit code 2', async (t) => {
  const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const path = await import('node:path');
  const directory = mkdtempSync(path.join(tmpdir(), 'sandbox-journal-'));
  t.teardown(() => rmSync(directory, { recursive: true, force: true }));
  const file = path.join(directory, 'journal.json');
  writeFileSync(file, JSON.stringify({ data: [{ method: 'POST', path: '/_emulator/settle', query: null, status: 200, requestBody: {} }] }));

  let out = '';
  let err = '';
  t.equal(await fromJournalCommand(['--journal', file, '--name', 'saved'], {}, (text) => (out += text), (text) => (err += text)), 0, err);
  t.match(parse(out), { name: 'saved', steps: [{ settle: true }] });

  for (const [args, message] of [
    [['--journal', file, '--url', 'http://127.0.0.1:1'], /--url and --journal are exclusive/],
    [['--name', 'Not A Name'], /--name "Not A Name"/],
    [['--bogus'], /unknown argument --bogus/],
    [['--journal', path.join(directory, 'missing.json')], /ENOENT/],
  ] as Array<[string[], RegExp]>) {
    err = '';
    t.equal(await fromJournalCommand(args, {}, () => undefined, (text) => (err += text)), 2, args.join(' '));
    t.match(err, message);
    t.equal(err.trim().split('\n').length, 1, 'one line');
  }
});

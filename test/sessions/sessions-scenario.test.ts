import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { DEFAULT_FIXTURES, SHIPPED_SCENARIOS } from '../../src/config.js';
import { findScenario } from '../../src/emulator/scenario-library.js';
import { buildTestApp, json, type TestApp } from '../helper.js';

// Sessions from a scenario (docs/sessions.md#scenarios) and playing one (docs/sessions.md#playing-a-scenario):
// every shipped file starts a session; names, text and objects; --scenarios DIR listed with its broken files; the
// seed, clock and fixtures rules; bad scenarios are 400s at their line and column with no session left; the given of
// two sessions is their own; a play runs in order, a failed check ends it, a reset goes back to its start.

const ONE_USER = `name: one-user
description: A business with 10,000.00 USD
seed: one-user
clock: 2026-04-01T09:00:00Z
given:
  users:
    - as: northwind
      type: BUSINESS
      name: Northwind Traders Inc
      accounts:
        - { as: usd, currency: USD, balance: "10000.00" }
steps:
  - caption: Read the account
    request: { method: GET, path: "/v1/accounts/\${usd.id}", as: northwind }
    expect: { status: 200, body: { balances.available: "10000.00" } }
  - advance: 1s
  - caption: Read it again
    request: { method: GET, path: "/v1/accounts/\${usd.id}", as: northwind }
    expect: { status: 200 }
`;

async function create(sandbox: TestApp, body: unknown) {
  const response = await sandbox.app.inject({ method: 'POST', url: '/_emulator/sessions', payload: body as object });
  return { status: response.statusCode, body: json(response) };
}

async function sessionCount(sandbox: TestApp): Promise<number> {
  return json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/sessions' })).data.length;
}

function folder(t: { teardown(fn: () => void): void }, files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'scenarios-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

t.test('every shipped scenario starts a session by name', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const files = readdirSync(SHIPPED_SCENARIOS).filter((file) => /\.(ya?ml|json)$/.test(file));
  t.ok(files.includes('demo.yaml'), 'the demo is shipped');
  const listed = json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/scenarios' }));
  t.equal(listed.folder, null);
  t.same(listed.data.filter((entry: { source: string }) => entry.source === 'shipped').map((entry: { file: string }) => entry.file), files.sort(), 'GET /_emulator/scenarios lists each');
  for (const entry of listed.data as Array<{ name: string; file: string; error: unknown; steps: number }>) {
    t.equal(entry.error, null, `${entry.file} is good`);
    const created = await create(sandbox, { scenario: entry.name });
    t.equal(created.status, 201, `${entry.file}: ${JSON.stringify(created.body)}`);
    t.match(created.body.scenario, { name: entry.name, source: 'shipped' });
    const play = json(await sandbox.app.inject({ method: 'GET', url: `/_sessions/${created.body.id}/_emulator/scenario` }));
    t.match(play, { name: entry.name, completed: 0, next: 1, finished: false, given: created.body.scenario.given }, `${entry.file}: ready to play`);
    t.equal(play.steps.length, created.body.scenario.steps);
    t.equal(entry.steps, play.steps.length, `${entry.file}: the list counts the steps a play shows`);
    if (entry.name === 'demo') t.equal(entry.steps, 17, 'the demo plays 17 steps');
    await sandbox.app.inject({ method: 'DELETE', url: `/_emulator/sessions/${created.body.id}` });
  }
});

t.test('a scenario as text or as an object: its seed, clock and given, named in the answer', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const created = await create(sandbox, { scenario: ONE_USER, label: 'story' });
  t.equal(created.status, 201, JSON.stringify(created.body));
  t.match(created.body, { startedFrom: { seed: 'one-user', clock: '2026-04-01T09:00:00.000Z' }, label: 'story', scenario: { name: 'one-user', source: 'given', steps: 2 } });
  t.match(created.body.scenario.given, { northwind: /^usr_/, usd: /^acct_/ }, 'what given made, by name');
  const prefix = `/_sessions/${created.body.id}`;
  const account = json(await sandbox.app.inject({ method: 'GET', url: `${prefix}/_emulator/overview` }));
  const users = account.programmes.flatMap((programme: { users: Array<{ id: string }> }) => programme.users);
  t.ok(users.some((user: { id: string }) => user.id === created.body.scenario.given.northwind), 'the user is in the session');

  const again = await create(sandbox, { scenario: ONE_USER });
  t.same(again.body.scenario.given, created.body.scenario.given, 'the same seed: the same ids');
  const rootUsers = json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/overview' })).programmes.flatMap((programme: { users: Array<{ id: string }> }) => programme.users);
  t.notOk(rootUsers.some((user: { id: string }) => user.id === created.body.scenario.given.northwind), 'isolation: the root has none of it');
  // isolation: a deposit in one session is not in the other
  const other = `/_sessions/${again.body.id}`;
  const otherNow = json(await sandbox.app.inject({ method: 'GET', url: `${other}/_emulator/clock` })).now;
  t.ok(otherNow >= '2026-04-01T09:00:00.000Z', `the scenario's clock, moved only by its given (${otherNow})`);
  const moved = await sandbox.app.inject({ method: 'POST', url: `${prefix}/_emulator/clock`, payload: { advanceMs: 60_000 } });
  t.equal(moved.statusCode, 200);
  t.equal(json(await sandbox.app.inject({ method: 'GET', url: `${other}/_emulator/clock` })).now, otherNow, 'the other session\'s clock did not move');

  const asObject = await create(sandbox, { scenario: { name: 'inline', clock: '2026-05-01T00:00:00Z', steps: [{ caption: 'Settle', settle: true }] } });
  t.equal(asObject.status, 201, JSON.stringify(asObject.body));
  t.match(asObject.body, { startedFrom: { clock: '2026-05-01T00:00:00.000Z' }, scenario: { name: 'inline', source: 'given', steps: 1, given: {} } });
  const same = await create(sandbox, { scenario: ONE_USER, seed: 'one-user', clock: '2026-04-01T09:00:00.000Z' });
  t.equal(same.status, 201, 'the body may repeat the scenario\'s seed and clock');
});

t.test('bad scenarios: 400 at the line and column (or the JSON path), 404 for an unknown name, and no session left', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const cases: Array<[string, unknown, number, RegExp]> = [
    ['YAML syntax', { scenario: 'name: x\nsteps:\n  - advance: [1s\n' }, 400, /scenario:\d+:\d+: YAML/],
    ['an unknown field', { scenario: 'name: x\nsteps:\n  - advance: 1s\n    bogus: 1\n' }, 400, /scenario:4:5:/],
    ['a reference to nothing', { scenario: 'name: x\nsteps:\n  - request: { method: GET, path: "/v1/accounts/${nope.id}" }\n' }, 400, /scenario:3:/],
    ['an object with an unknown field', { scenario: { name: 'x', steps: [{ advance: '1s', bogus: 1 }] } }, 400, /scenario at \$\.steps\[0\]/],
    ['a seed that differs', { scenario: ONE_USER, seed: 'other' }, 400, /seed "other" differs from the scenario's seed "one-user"/],
    ['a clock that differs', { scenario: ONE_USER, clock: '2026-04-01T09:00:01Z' }, 400, /clock .* differs/],
    ['a fixtures path in a sent scenario', { scenario: 'name: x\nfixtures: ../fixtures/default.json\nsteps:\n  - settle: true\n' }, 400, /cannot name a fixtures file/],
    ['a snapshot with a scenario clock', { scenario: ONE_USER, snapshot: 'nope' }, 400, /snapshot cannot be combined/],
    ['an unknown name', { scenario: 'no-such-scenario' }, 404, /No scenario "no-such-scenario".*demo/],
    ['a given that cannot be built', { scenario: 'name: x\ngiven:\n  users:\n    - { as: a, type: BUSINESS, name: A, accounts: [{ as: x, currency: JPY }] }\nsteps:\n  - settle: true\n' }, 400, /given could not be built: scenario:\d+:\d+/],
  ];
  for (const [label, body, status, message] of cases) {
    const before = await sessionCount(sandbox);
    const answer = await create(sandbox, body);
    t.equal(answer.status, status, `${label}: ${JSON.stringify(answer.body)}`);
    t.match(answer.body.message, message, `${label}: the message`);
    if (status === 400) t.match(answer.body.validationErrors?.[0], { fieldRef: /^(scenario|seed|clock|snapshot|fixtures)$/ }, `${label}: names the field`);
    t.equal(await sessionCount(sandbox), before, `${label}: no session left behind`);
  }
});

t.test('--scenarios DIR: listed beside the shipped ones, broken files with their error, names unique', async (t) => {
  const dir = folder(t, {
    'one-user.yaml': ONE_USER,
    'broken.yaml': 'name: broken\nsteps:\n  - advance: 1s\n    nope: true\n',
    'demo.yml': 'name: demo\nsteps:\n  - settle: true\n',
    'notes.txt': 'not a scenario',
  });
  const sandbox = await buildTestApp({ config: { scenarios: dir } });
  t.teardown(sandbox.close);
  const listed = json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/scenarios' }));
  t.equal(listed.folder, dir);
  const mine = listed.data.filter((entry: { source: string }) => entry.source === 'folder');
  t.same(mine.map((entry: { file: string }) => entry.file), ['broken.yaml', 'demo.yml', 'one-user.yaml'], 'scenario files only, by file name');
  t.match(mine[0], { name: 'broken', steps: null, error: { line: 4, column: 5, message: /nope/ } }, 'a broken file: its error at its line and column');
  t.match(mine[1], { name: 'demo', error: { message: /already the shipped scenario of demo\.yaml/ } }, 'a shipped name stays the shipped file\'s');
  t.match(mine[2], { name: 'one-user', description: 'A business with 10,000.00 USD', steps: 2, error: null });
  t.equal((await create(sandbox, { scenario: 'one-user' })).status, 201, 'a folder scenario by name');
  const broken = await create(sandbox, { scenario: 'broken' });
  t.equal(broken.status, 400);
  t.match(broken.body.message, /broken\.yaml cannot be used/);
  t.match((await create(sandbox, { scenario: 'demo' })).body, { scenario: { source: 'shipped', steps: 17 } }, 'demo is the shipped one');
  writeFileSync(path.join(dir, 'later.json'), JSON.stringify({ name: 'later', steps: [{ settle: true }] }));
  t.ok(json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/scenarios' })).data.some((entry: { name: string }) => entry.name === 'later'), 'a file added while the server runs is listed at once');

  // parsed once while unchanged, again once edited (docs/decisions.md#scenario-folder)
  const config = { scenarios: dir };
  t.equal(findScenario(config, 'one-user').loaded, findScenario(config, 'one-user').loaded, 'an unchanged file is not parsed again');
  writeFileSync(path.join(dir, 'one-user.yaml'), ONE_USER.replace('A business with 10,000.00 USD', 'Edited while the server runs'));
  const relisted = json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/scenarios' })).data;
  t.match(relisted.find((entry: { name: string }) => entry.name === 'one-user'), { description: 'Edited while the server runs', error: null }, 'an edited file is read again');
  t.match(relisted.find((entry: { file: string }) => entry.file === 'demo.yml'), { error: { message: /already the shipped scenario/ } }, 'a duplicate name is still refused on a listing from what was read before');
  writeFileSync(path.join(dir, 'one-user.yaml'), 'name: one-user\nsteps:\n  - advance: 1s\n    nope: true\n');
  t.match((await create(sandbox, { scenario: 'one-user' })).body.message, /one-user\.yaml cannot be used/, 'broken by an edit: refused at once');
});

// docs/scenarios.md#fixtures-files: a --scenarios file's `fixtures:` path is read by the server for whoever asks for the
// session. /dev/zero used to freeze the server and grow it past 1.3 GB, and ../../../etc/passwd was read and its first
// bytes echoed in the 400. Now: regular files only, at most 4 MiB, read without holding the event loop, within the
// folder that holds the scenario folder (so ../fixtures/x.json beside it works), and no byte of a file in an error.
t.test('--scenarios DIR: a fixtures path names a bounded regular file beside the folder, never one outside it', async (t) => {
  const project = mkdtempSync(path.join(tmpdir(), 'scenario-project-'));
  t.teardown(() => rmSync(project, { recursive: true, force: true }));
  const dir = path.join(project, 'scenarios');
  mkdirSync(dir);
  mkdirSync(path.join(project, 'fixtures'));
  const fixtures = JSON.parse(readFileSync(DEFAULT_FIXTURES, 'utf8'));
  fixtures.programmes[0].name = 'Programme From The Project';
  writeFileSync(path.join(project, 'fixtures', 'mine.json'), `\ufeff${JSON.stringify(fixtures)}`);
  writeFileSync(path.join(project, 'fixtures', 'secret.txt'), 'root:x:0:0:SECRET-CONTENT');
  writeFileSync(path.join(project, 'fixtures', 'big.json'), `${' '.repeat(4 * 1024 * 1024)}{}`);
  execFileSync('mkfifo', [path.join(project, 'fixtures', 'pipe.json')]);
  const outside = mkdtempSync(path.join(tmpdir(), 'scenario-outside-'));
  t.teardown(() => rmSync(outside, { recursive: true, force: true }));
  writeFileSync(path.join(outside, 'other.json'), JSON.stringify(fixtures));
  symlinkSync(path.join(outside, 'other.json'), path.join(project, 'fixtures', 'link.json'));
  const scenario = (name: string, fixturesPath: string) => writeFileSync(path.join(dir, `${name}.yaml`), `name: ${name}\nfixtures: ${JSON.stringify(fixturesPath)}\nsteps:\n  - settle: true\n`);
  scenario('beside', '../fixtures/mine.json');
  scenario('zero', '/dev/zero');
  scenario('pipe', '../fixtures/pipe.json');
  scenario('big', '../fixtures/big.json');
  scenario('text', '../fixtures/secret.txt');
  scenario('escape', `../../${path.basename(outside)}/other.json`);
  scenario('absolute', path.join(outside, 'other.json'));
  scenario('link', '../fixtures/link.json');
  scenario('missing', '../fixtures/missing.json');
  const sandbox = await buildTestApp({ config: { scenarios: dir } });
  t.teardown(sandbox.close);

  const good = await create(sandbox, { scenario: 'beside' });
  t.equal(good.status, 201, JSON.stringify(good.body));
  const overview = json(await sandbox.app.inject({ method: 'GET', url: `/_sessions/${good.body.id}/_emulator/overview` }));
  t.equal(overview.programmes[0].name, 'Programme From The Project', 'the fixtures file beside the folder (a byte-order mark and all)');

  const refused: Array<[string, RegExp]> = [
    ['zero', /fixtures file \/dev\/zero is outside the folder that holds the scenario's folder/],
    ['pipe', /cannot read fixtures file \.\.\/fixtures\/pipe\.json: it is a FIFO \(named pipe\), not a regular file/],
    ['big', /cannot read fixtures file \.\.\/fixtures\/big\.json: it is larger than 4 MiB/],
    ['text', /fixtures file \.\.\/fixtures\/secret\.txt is not valid JSON$/],
    ['escape', /fixtures file \.\.\/\.\.\/.*other\.json is outside the folder that holds the scenario's folder/],
    ['absolute', /is outside the folder that holds the scenario's folder/],
    ['link', /fixtures file \.\.\/fixtures\/link\.json is outside the folder/],
    ['missing', /cannot read fixtures file \.\.\/fixtures\/missing\.json: ENOENT/],
  ];
  for (const [name, message] of refused) {
    const answer = await create(sandbox, { scenario: name });
    t.equal(answer.status, 400, name);
    t.match(answer.body.message, message, name);
    t.notMatch(JSON.stringify(answer.body), /SECRET-CONTENT|root:x/, `${name}: nothing of the file in the answer`);
  }
  t.equal(await sessionCount(sandbox), 1, 'no session left by a refusal');
  t.equal((await sandbox.app.inject({ method: 'GET', url: '/_emulator/health' })).statusCode, 200, 'the server serves on');
});

t.test('playing: in order, one caption at a time, a failed check ends the play, a reset goes back to the start', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  t.equal((await sandbox.app.inject({ method: 'GET', url: '/_emulator/scenario' })).statusCode, 404, 'the root plays no scenario');
  const created = await create(sandbox, { scenario: ONE_USER });
  const prefix = `/_sessions/${created.body.id}`;
  const step = async (number: number | string) => {
    const response = await sandbox.app.inject({ method: 'POST', url: `${prefix}/_emulator/scenario/steps/${number}` });
    return { status: response.statusCode, body: json(response) };
  };
  const clockNow = async () => Date.parse(json(await sandbox.app.inject({ method: 'GET', url: `${prefix}/_emulator/clock` })).now as string);
  const ready = await clockNow();
  const state = json(await sandbox.app.inject({ method: 'GET', url: `${prefix}/_emulator/scenario` }));
  t.match(state, { name: 'one-user', source: 'given', completed: 0, next: 1, startedAt: '2026-04-01T09:00:00.000Z', userId: created.body.scenario.given.northwind });
  t.same(state.steps.map((item: { caption: string }) => item.caption), ['Read the account', 'Read it again'], 'the uncaptioned wait goes with the first step');
  t.equal((await step(2)).status, 409, 'not before step 1');
  t.equal((await step(3)).status, 404, 'no step 3');
  t.equal((await step('x')).status, 400);
  const first = await step(1);
  t.equal(first.status, 200, JSON.stringify(first.body));
  t.match(first.body.step, { number: 1, done: true, passed: true });
  t.equal(first.body.step.results.length, 2, 'the read and the wait');
  t.equal(await clockNow(), ready + 1000, 'the wait moved the clock');
  t.equal((await step(1)).status, 409, 'step 1 again');
  t.match((await step(2)).body.scenario, { completed: 2, finished: true, next: null, failed: null });
  t.equal((await step(2)).status, 409, 'finished');

  t.equal((await sandbox.app.inject({ method: 'POST', url: `${prefix}/_emulator/reset` })).statusCode, 200);
  const reset = json(await sandbox.app.inject({ method: 'GET', url: `${prefix}/_emulator/scenario` }));
  t.match(reset, { completed: 0, next: 1, userId: created.body.scenario.given.northwind }, 'a reset goes back to the scenario\'s start, its given kept');
  t.equal(await clockNow(), ready, 'and the clock where the scenario\'s steps began');
  t.equal((await step(1)).status, 200, 'and it plays again');

  const failing = await create(sandbox, {
    scenario: 'name: failing\nsteps:\n  - caption: Expect too much\n    request: { method: GET, path: /v1/accounts, as: programme }\n    expect: { status: 418 }\n  - caption: Never\n    settle: true\n',
  });
  const failingPrefix = `/_sessions/${failing.body.id}`;
  const failed = json(await sandbox.app.inject({ method: 'POST', url: `${failingPrefix}/_emulator/scenario/steps/1` }));
  t.match(failed.step, { passed: false });
  t.match(failed.scenario, { finished: true, next: null, failed: { step: 1, line: 5 } }, 'the failed check, at its line');
  t.equal((await sandbox.app.inject({ method: 'POST', url: `${failingPrefix}/_emulator/scenario/steps/2` })).statusCode, 409, 'no later step');
});

/**
 * A session whose scenario adds a fault rule with `effect` on /v1/accounts (step 1), then reads the accounts (step 2,
 * with `expect` appended to it); played in process, step by step. Step 2's answer and the session's prefix.
 */
async function playFaultedRead(t: Test, sandbox: TestApp, effect: string, expect = ''): Promise<{ step: Record<string, unknown>; prefix: string }> {
  const created = await create(sandbox, {
    scenario:
      `name: faulted\nsteps:\n  - caption: A rule\n    fault: { match: { path: /v1/accounts }, effect: ${effect}, times: 1 }\n` +
      `  - caption: Read\n    request: { method: GET, path: /v1/accounts, as: { key: pk_sandbox_single } }\n${expect}`,
  });
  t.equal(created.status, 201, JSON.stringify(created.body));
  const prefix = `/_sessions/${created.body.id}`;
  t.equal((await sandbox.app.inject({ method: 'POST', url: `${prefix}/_emulator/scenario/steps/1` })).statusCode, 200);
  return { step: json(await sandbox.app.inject({ method: 'POST', url: `${prefix}/_emulator/scenario/steps/2` })).step, prefix };
}

t.test('a scenario\'s own fault rule acts on its own requests', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const { step } = await playFaultedRead(t, sandbox, '{ type: status, status: 503 }', '    expect: { status: 503 }\n');
  t.match(step, { passed: true, results: [{ status: 503 }] });
});

t.test('an ambiguous failure without a status fails a played step as it fails the same step of service-sandbox run', async (t) => {
  // docs/faults.md#fault-rules: the connection closes after processing; in process too, the call has no answer
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const { step, prefix } = await playFaultedRead(t, sandbox, '{ type: ambiguous }');
  t.match(step, { passed: false });
  t.match(JSON.stringify(step), /the connection was closed without an answer/, 'the step says why');
  const journal = json(await sandbox.app.inject({ method: 'GET', url: `${prefix}/_emulator/requests` }));
  t.ok(
    journal.data.some((entry: { path?: string; url?: string; status: number }) => /\/v1\/accounts/.test(entry.path ?? entry.url ?? '') && entry.status === 0),
    'the journal has the request unanswered',
  );
});

// docs/scenarios.md#paths: a played step's calls go under the session's prefix through app.inject, whose URL parser
// resolves dot segments; a path that would leave the session is refused when the file is read, and a path a reference
// fills in with dot segments fails its step. Either way the root's clock and the other sessions are as they were.
t.test('a scenario cannot reach the root or another session through dot segments', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const rootClock = async () => json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/clock' })).now as string;
  const victims = async () => json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/sessions?label=victim' })).data.length as number;
  t.equal((await create(sandbox, { label: 'victim' })).status, 201);
  const clockBefore = await rootClock();

  const written: Array<[string, string, RegExp]> = [
    ['the root clock', 'control: { method: POST, path: "/_emulator/../../../_emulator/clock", body: { advanceMs: 5000 } }', /scenario:4:36: path is not normalized: it has dot segments/],
    ['another session', 'control: { method: DELETE, path: "/_emulator/../../../_emulator/sessions?label=victim" }', /scenario:4:38: path is not normalized: it has dot segments/],
    ['a request step', 'request: { method: POST, path: "/v1/../../../_emulator/clock", body: { advanceMs: 5000 } }', /scenario:4:36: path is not normalized: it has dot segments/],
    ['encoded dots', 'control: { method: POST, path: "/_emulator/%2e%2e/%2e%2e/%2e%2e/_emulator/clock", body: { advanceMs: 5000 } }', /scenario:4:36: path is not normalized: it has an encoded dot/],
  ];
  for (const [label, action, message] of written) {
    const before = await sessionCount(sandbox);
    const answer = await create(sandbox, { scenario: `name: escape\nsteps:\n  - caption: ${label}\n    ${action}\n` });
    t.equal(answer.status, 400, `${label}: refused when read`);
    t.match(answer.body.message, message, `${label}: at its line and column`);
    t.equal(await sessionCount(sandbox), before, `${label}: no session made`);
  }

  const filled = await create(sandbox, {
    scenario:
      'name: escape-by-reference\nclock: 2026-03-01T12:00:00Z\nsteps:\n' +
      '  - caption: A value that holds dot segments\n' +
      '    fault: { match: { path: /v1/never }, effect: { type: status, status: 503 }, seed: "../../../_emulator/clock" }\n' +
      '    capture: { up: body.seed }\n' +
      '  - caption: Through it to the root clock\n' +
      '    control: { method: POST, path: "/_emulator/${up}", body: { advanceMs: 5000 } }\n',
  });
  t.equal(filled.status, 201, JSON.stringify(filled.body));
  const prefix = `/_sessions/${filled.body.id}`;
  const sessionClock = json(await sandbox.app.inject({ method: 'GET', url: `${prefix}/_emulator/clock` })).now as string;
  t.match(json(await sandbox.app.inject({ method: 'POST', url: `${prefix}/_emulator/scenario/steps/1` })).step, { passed: true });
  const second = await sandbox.app.inject({ method: 'POST', url: `${prefix}/_emulator/scenario/steps/2` });
  t.equal(second.statusCode, 200, 'a failed step, not a failed request');
  t.match(json(second).step, { passed: false, results: [{ passed: false, failure: { message: /^POST \/_emulator\/\.\.\/\.\.\/\.\.\/_emulator\/clock was not sent: the path is not normalized: it has dot segments/, line: 8 } }] });
  t.match(json(second).scenario, { finished: true, failed: { step: 2, line: 8 } });
  t.equal(json(await sandbox.app.inject({ method: 'GET', url: `${prefix}/_emulator/clock` })).now, sessionClock, 'the session\'s clock did not move either');

  t.equal(await rootClock(), clockBefore, 'the root clock did not move');
  t.equal(await victims(), 1, 'the other session lives on');
});

// docs/scenarios.md#matchers: a played step's `matches` share one time budget; a pattern that runs it out fails the
// step (200, passed false, with the reason), not the request, and the sandbox answers the next request.
t.test('a played step whose matches run out their time fails with the reason', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const created = await create(sandbox, {
    scenario:
      'name: slow-matches\nsteps:\n  - caption: A pattern that backtracks without end\n' +
      `    fault: { match: { path: /v1/never }, effect: { type: status, status: 503 }, seed: "${'1'.repeat(40)}!" }\n` +
      `    expect: { body: { seed: { matches: "^(\\\\d+)+$" } } }\n` +
      '  - caption: Never\n    settle: true\n',
  });
  t.equal(created.status, 201, JSON.stringify(created.body));
  const prefix = `/_sessions/${created.body.id}`;
  const played = await sandbox.app.inject({ method: 'POST', url: `${prefix}/_emulator/scenario/steps/1` });
  t.equal(played.statusCode, 200);
  t.match(json(played).step, { passed: false, results: [{ failure: { message: /^body\.seed: the pattern \/\^\(\\d\+\)\+\$\/ took longer than 100 ms on "/ } }] });
  t.equal((await sandbox.app.inject({ method: 'GET', url: `${prefix}/_emulator/health` })).statusCode, 200);
});

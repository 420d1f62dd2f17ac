import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadScenario, ScenarioFileError, SCENARIO_LIMITS } from '../../src/scenarios/scenario.load.js';
import { checkKeys, keyBookFromFixtures, keyBookFromSession } from '../../src/scenarios/scenario.keys.js';

// The scenario loader (docs/decisions.md#scenario-errors): a good file read with every name it gives and the position of
// every step; a table of broken files, each with its exact message, line and column; the bounds; the key check.

const GOOD = `# yaml-language-server: $schema=../schemas/scenario.schema.json
name: good-one
seed: "7"
clock: 2026-03-01T12:00:00Z
given:
  users:
    - as: northwind
      type: BUSINESS
      name: Northwind Traders Inc
      accounts:
        - { as: usd, currency: USD, balance: "100.00" }
      depositInstructions:
        - { as: ach, account: usd, rail: US.USD.ACH }
      beneficiaries:
        - as: initech
          body: { type: BUSINESS, businessName: Initech }
steps:
  - id: read
    caption: Read the account
    request:
      method: GET
      path: "/v1/accounts/\${usd.id}"
      as: northwind
    capture: { account: body }
    expect:
      status: 200
      body:
        id: "\${account.id}"
        balances.available: { gte: "1.00" }
  - advance: 1s
  - expect:
      balance: { account: usd, available: "100.00" }
      body: { status: "\${steps.read.status}" }
`;

t.test('a good file: the scenario, its given names and the positions of its steps', async (t) => {
  const loaded = loadScenario(GOOD, 'good.yaml');
  t.equal(loaded.scenario.name, 'good-one');
  t.same(loaded.givenNames, { northwind: 'user', usd: 'account', ach: 'depositInstruction', initech: 'beneficiary' });
  t.equal(loaded.steps.length, 3);
  t.same(loaded.steps[0]!.step, { line: 18, column: 5 });
  t.same(loaded.steps[0]!.action, { line: 20, column: 5 });
  t.equal(loaded.steps[0]!.actionName, 'request');
  t.same(loaded.steps[0]!.expect, { line: 25, column: 5 });
  t.same(loaded.steps[0]!.expectFields['body.balances.available'], { line: 29, column: 9 });
  t.same(loaded.steps[1]!.action, { line: 30, column: 5 });
  t.equal(loaded.steps[2]!.actionName, null);
  t.same(JSON.parse(JSON.stringify(loaded)), loaded, 'plain JSON');
});

t.test('JSON is read by the same parser, with positions', async (t) => {
  const loaded = loadScenario('{\n  "name": "j",\n  "steps": [\n    { "settle": true }\n  ]\n}\n', 'j.json');
  t.same(loaded.steps[0]!.action, { line: 4, column: 7 });
});

const BROKEN: Array<{ name: string; text: string; line: number; column: number; message: string; path?: string }> = [
  { name: 'YAML syntax error', text: 'name: x\nsteps: [a\n', line: 3, column: 1, message: 'YAML: Flow sequence in block collection must be sufficiently indented and end with a ]' },
  { name: 'JSON syntax error', text: '{"name": "x", "steps": [}', line: 1, column: 25, message: 'JSON: Flow sequence in block collection must be sufficiently indented and end with a ]' },
  {
    name: 'unknown field',
    text: 'name: x\nsteps:\n  - settle: true\n    bogus: 1\n',
    line: 4,
    column: 5,
    message: 'unknown field "bogus" (allowed here: id, caption, note, request, advance, settle, fault, chaos, force, return, decide, snapshot, control, waitFor, capture, expect)',
    path: '$.steps[0].bogus',
  },
  {
    name: 'reference to a capture that does not exist',
    text: 'name: x\nsteps:\n  - settle: true\n  - advance: 1s\n    expect: { body: { a: "${nope.x}" } }\n',
    line: 5,
    column: 26,
    message: '${nope.x}: "nope" is not a given name or an earlier capture (none is known here)',
    path: '$.steps[1].expect.body.a',
  },
  {
    name: 'reference to a capture of a later step',
    text: 'name: x\nsteps:\n  - request: { method: GET, path: "/v1/transactions/${later}" }\n  - request: { method: GET, path: /v1/transactions }\n    capture: { later: body.data.0.id }\n',
    line: 3,
    column: 35,
    message: '${later}: "later" is not a given name or an earlier capture (none is known here)',
  },
  {
    name: 'reference to a step id that comes later',
    text: 'name: x\nsteps:\n  - expect: { body: { a: "${steps.b.status}" } }\n  - id: b\n    settle: true\n',
    line: 3,
    column: 26,
    message: '${steps.b.status}: no earlier step has the id "b"',
  },
  {
    name: 'two actions in one step',
    text: 'name: x\nsteps:\n  - settle: true\n    advance: 5s\n',
    line: 4,
    column: 5,
    message: 'a step takes one action; this one has settle and advance (split it into 2 steps)',
  },
  { name: 'a step with nothing to do', text: 'name: x\nsteps:\n  - caption: hello\n', line: 3, column: 5, message: 'a step takes one action (request, advance, settle, fault, chaos, force, return, decide, snapshot, control, waitFor) or an expect' },
  { name: 'too deep', text: `name: x\nsteps: ${'['.repeat(70)}${']'.repeat(70)}\n`, line: 2, column: 72, message: 'the file nests more than 64 levels deep' },
  {
    name: 'too deep in block style',
    text: `name: x\nsteps:\n  - fault:\n${Array.from({ length: 70 }, (_, i) => `${' '.repeat(6 + i)}k${i}:`).join('\n')} 1\n`,
    line: 65,
    column: 68,
    message: 'the file nests more than 64 levels deep',
  },
  { name: 'a custom tag', text: 'name: x\nsteps:\n  - settle: !js true\n', line: 3, column: 13, message: 'YAML: Unresolved tag: !js: a scenario holds plain values, no custom tags' },
  { name: 'a wrong type', text: 'name: x\nsteps:\n  - advance: [1]\n', line: 3, column: 14, message: 'advance must be a number or a string (found a list)' },
  { name: 'a missing name', text: 'steps:\n  - settle: true\n', line: 1, column: 1, message: 'name is required', path: '$.name' },
  { name: 'not an object', text: '- a\n- b\n', line: 1, column: 1, message: 'a scenario is an object with name and steps (found a list)' },
  { name: 'a duplicate key', text: 'name: x\nname: y\nsteps:\n  - settle: true\n', line: 2, column: 1, message: 'YAML: Map keys must be unique' },
  {
    name: 'as names no given user',
    text: 'name: x\nsteps:\n  - request: { method: GET, path: /v1/accounts, as: nobody }\n',
    line: 3,
    column: 53,
    message: 'as: "nobody" is not a given user; write programme, a given user\'s name, or { key, user }',
  },
  {
    name: 'a matcher beside other keys',
    text: 'name: x\nsteps:\n  - expect: { body: { a: { gt: 1, lt: 3 } } }\n',
    line: 3,
    column: 26,
    message: 'a matcher is an object with exactly one of equals, matches, gt, gte, lt, lte, exists, contains; this one has gt, lt (to compare with such an object, write { equals: {...} })',
  },
  {
    name: 'a webhook event type with a typo (docs/scenarios.md#actions)',
    text: 'name: x\nsteps:\n  - waitFor: { events: [transaction_created, transaction_craeted] }\n',
    line: 3,
    column: 46,
    message: 'events must be "transaction_created" or "transaction_status_updated" (found "transaction_craeted")',
  },
  {
    name: 'a bad regular expression',
    text: 'name: x\nsteps:\n  - expect: { body: { a: { matches: "(" } } }\n',
    line: 3,
    column: 37,
    message: 'matches: not a regular expression: Invalid regular expression: /(/u: Unterminated group',
  },
  {
    name: 'accounts without ACTIVE',
    text: 'name: x\ngiven:\n  users:\n    - as: u\n      type: PERSON\n      name: U\n      enrollment: DRAFT\n      accounts: [{ as: a, currency: USD }]\nsteps:\n  - settle: true\n',
    line: 8,
    column: 17,
    message: 'accounts and deposit instructions need enrollment ACTIVE (this user\'s is DRAFT): accounts open when the enrollment is approved',
  },
  {
    name: 'a name given twice',
    text: 'name: x\ngiven:\n  users:\n    - { as: u, type: PERSON, name: U }\n    - { as: u, type: PERSON, name: V }\nsteps:\n  - settle: true\n',
    line: 5,
    column: 13,
    message: 'the name "u" is given twice; every given name and capture must be unique',
  },
  {
    name: 'a control path outside the control plane',
    text: 'name: x\nsteps:\n  - control: { method: POST, path: /v1/accounts }\n',
    line: 3,
    column: 36,
    message: 'path must be a /_emulator/... path',
  },
  {
    name: 'sessions do not nest',
    text: 'name: x\nsteps:\n  - control: { method: POST, path: /_emulator/sessions }\n',
    line: 3,
    column: 36,
    message: 'a scenario runs inside a session: /_emulator/sessions is not open to it',
  },
  {
    // docs/scenarios.md#paths: under the session's prefix, the URL parser would resolve them to the root's routes
    name: 'a request path with dot segments',
    text: 'name: x\nsteps:\n  - request: { method: POST, path: "/v1/../../../_emulator/clock", body: { advanceMs: 5000 } }\n',
    line: 3,
    column: 36,
    message: "path is not normalized: it has dot segments (. or ..), backslashes or characters the URL parser rewrites (URL-encode special characters); a scenario's calls stay in its own session",
  },
  {
    name: 'a control path with dot segments past the sessions rule',
    text: 'name: x\nsteps:\n  - control: { method: DELETE, path: "/_emulator/../../../_emulator/sessions?label=victim" }\n',
    line: 3,
    column: 38,
    message: "path is not normalized: it has dot segments (. or ..), backslashes or characters the URL parser rewrites (URL-encode special characters); a scenario's calls stay in its own session",
  },
  {
    name: 'a control path with encoded dots',
    text: 'name: x\nsteps:\n  - control: { method: POST, path: "/_emulator/%2e%2e/%2E%2E/%2e%2e/_emulator/clock" }\n',
    line: 3,
    column: 36,
    message: "path is not normalized: it has an encoded dot, slash or backslash (%2e, %2f, %5c); a scenario's calls stay in its own session",
  },
  {
    name: 'a control path with dot segments beside a reference',
    text: 'name: x\nsteps:\n  - id: one\n    settle: true\n  - control: { method: GET, path: "/_emulator/${steps.one.status}/../../clock" }\n',
    line: 5,
    column: 35,
    message: "path is not normalized: it has dot segments (. or ..), backslashes or characters the URL parser rewrites (URL-encode special characters); a scenario's calls stay in its own session",
  },
  {
    // docs/scenarios.md#matchers: a step's matches share one time budget; more than 50 is refused when the file is read
    name: 'too many matches in one step',
    text: `name: x\nsteps:\n  - request: { method: GET, path: /v1/accounts }\n    expect:\n      body:\n${Array.from({ length: 51 }, (_, i) => `        f${i}: { matches: "^a" }\n`).join('')}`,
    line: 56,
    column: 9,
    message: 'a step holds at most 50 matches checks (this one has 51): spread them over steps',
  },
  { name: 'too many steps', text: `name: x\nsteps:\n${'  - settle: true\n'.repeat(501)}`, line: 3, column: 3, message: 'steps holds at most 500 items' },
];

for (const broken of BROKEN) {
  t.test(`broken file: ${broken.name}`, async (t) => {
    const error = t.throws(() => loadScenario(broken.text, 'broken.yaml')) as ScenarioFileError;
    t.type(error, ScenarioFileError);
    t.equal(error.message, broken.message);
    t.same({ line: error.line, column: error.column }, { line: broken.line, column: broken.column });
    if (broken.path) t.equal(error.path, broken.path);
    t.equal(error.lines()[0], `broken.yaml:${broken.line}:${broken.column}: ${broken.message}`);
  });
}

t.test('too big: refused before it is parsed', async (t) => {
  const text = `name: x\nsteps:\n  - settle: true\ndescription: "${'a'.repeat(SCENARIO_LIMITS.bytes)}"\n`;
  const error = t.throws(() => loadScenario(text, 'big.yaml')) as ScenarioFileError;
  t.equal(error.message, 'the file is larger than 1048576 bytes (1 MiB), the most a scenario may be');
  t.same([error.line, error.column], [1, 1]);
});

t.test('a flood of brackets is refused by the lexer, without parsing it (the parser would exhaust the process)', async (t) => {
  const error = t.throws(() => loadScenario(`a: ${'['.repeat(1_000_000)}`, 'flood.yaml')) as ScenarioFileError;
  t.equal(error.message, 'the file nests more than 64 levels deep');
  t.same([error.line, error.column], [1, 68]);
});

t.test('aliases: a few are fine, an expanding tree of them is refused', async (t) => {
  const fine = loadScenario('name: x\nsteps:\n  - &s { settle: true }\n  - *s\n', 'alias.yaml');
  t.equal(fine.scenario.steps.length, 2);
  const lines = ['name: x', 'a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i < 9; i++) lines.push(`a${i}: &a${i} [${Array.from({ length: 10 }, () => `*a${i - 1}`).join(', ')}]`);
  lines.push('steps:\n  - settle: true');
  const error = t.throws(() => loadScenario(lines.join('\n'), 'laughs.yaml')) as ScenarioFileError;
  t.match(error.message, /^the file's aliases expand too far \(at most 100 uses of an anchor's content\)/);
});

t.test('several problems: one line each, in file order', async (t) => {
  const error = t.throws(() => loadScenario('name: X\nsteps:\n  - settle: 1\n    nope: 2\n', 'many.yaml')) as ScenarioFileError;
  t.same(error.lines(), [
    'many.yaml:1:7: name must be lower-case letters, digits and - (at most 64), starting with a letter or digit',
    'many.yaml:3:13: settle must be true (found 1)',
    'many.yaml:4:5: unknown field "nope" (allowed here: id, caption, note, request, advance, settle, fault, chaos, force, return, decide, snapshot, control, waitFor, capture, expect)',
  ]);
});

t.test('no file content gives a stack trace or anything but a ScenarioFileError', async (t) => {
  const samples = ['', ' ', '\0', '~', 'null', '[]', '"x"', '{', '}', ':', '- - -', '&a *a', '*x', '!!binary aGVsbG8=', 'name: x\nsteps: []', '%YAML 1.1\n---\nname: x', '--- a\n--- b', 'name: x\nsteps:\n  - request: { method: GET, path: "/v1/${" }', '\uFEFFname: x'];
  for (const sample of samples) {
    try {
      loadScenario(sample, 's.yaml');
      t.fail(`accepted ${JSON.stringify(sample)}`);
    } catch (error) {
      t.type(error, ScenarioFileError, JSON.stringify(sample));
      t.ok((error as ScenarioFileError).line >= 1);
    }
  }
});

const DEFAULT_FIXTURES = JSON.parse(readFileSync(path.join(import.meta.dirname, '..', '..', 'fixtures', 'default.json'), 'utf8'));

t.test('keys: a step a key may not call is a file error at its `as`; one that expects the 403 is not', async (t) => {
  const book = keyBookFromFixtures(DEFAULT_FIXTURES)!;
  t.equal(book.programmeId, 'prg_sandbox');
  const text = (status: number) =>
    `name: x\nsteps:\n  - request:\n      method: POST\n      path: /v1/beneficiaries\n      as: { key: pk_sandbox_readonly, user: usr_jane }\n      body: {}\n    expect: { status: ${status} }\n`;
  const bad = loadScenario(text(201).replace('user: usr_jane', 'user: "${x}"').replace('steps:\n', 'steps:\n  - request: { method: GET, path: /v1/users }\n    capture: { x: body.data.0.userId }\n'), 'keys.yaml');
  const error = t.throws(() => checkKeys(bad, book)) as ScenarioFileError;
  t.equal(
    error.lines()[0],
    'keys.yaml:8:11: the key pk_sandbox_readonly may not call POST /v1/beneficiaries: it needs the beneficiaries:write entitlement and the key has accounts:read, transactions:read, enrollment:read, beneficiaries:read, statements:read (expect status 403 to check the refusal)',
  );
  const refused = loadScenario(text(403).replace('user: usr_jane', 'user: "${x}"').replace('steps:\n', 'steps:\n  - request: { method: GET, path: /v1/users }\n    capture: { x: body.data.0.userId }\n'), 'keys.yaml');
  t.doesNotThrow(() => checkKeys(refused, book));
  const unknown = loadScenario('name: x\nsteps:\n  - request: { method: GET, path: /v1/users, as: { key: pk_nobody } }\n', 'keys.yaml');
  const unknownError = t.throws(() => checkKeys(unknown, book)) as ScenarioFileError;
  t.match(unknownError.message, /^the key pk_nobody is not one the run knows \(pk_sandbox_multi, pk_sandbox_single, pk_sandbox_readonly, pk_other_multi\)/);
  t.same([unknownError.line, unknownError.column], [3, 50]);
});

t.test('keys from a session: existence checked, entitlements left to the server', async (t) => {
  const book = keyBookFromSession({ programmeId: 'prg_sandbox', multi: { apiKey: 'pk_m', secret: 's' }, single: null });
  const loaded = loadScenario('name: x\nsteps:\n  - request: { method: POST, path: /v1/beneficiaries, as: programme, body: {} }\n', 'k.yaml');
  t.doesNotThrow(() => checkKeys(loaded, book));
  const other = loadScenario('name: x\nsteps:\n  - request: { method: GET, path: /v1/users, as: { key: pk_sandbox_readonly } }\n', 'k.yaml');
  t.throws(() => checkKeys(other, book), ScenarioFileError);
});

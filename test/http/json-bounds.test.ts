import t from 'tap';
import type { Test } from 'tap';
import { buildTestApp, json, type TestApp } from '../helper.js';
import { base64, countTransactions, postPayout } from '../helpers/funding.js';
import { jsonBoundPassed, jsonNestsDeeperThan, MAX_JSON_DEPTH, MAX_JSON_ENTRIES } from '../../src/lib/json-bounds.js';

// The bounds of every JSON body (docs/robustness.md#json-bounds): at most 64 levels and 50,000 entries; past either,
// a 400 with the error body before JSON.parse or any handler sees it. 10,000 levels used to answer 500 (a stack
// overflow in JSON.stringify when the fault rule or the act-as body was stored or listed); 20 MiB of distinct keys held
// the event loop for seconds in JSON.parse.

/** Arrays `levels` deep around `inner`: nest(2, 1) is [[1]]. Built as text: JSON.stringify would overflow too. */
function nest(levels: number, inner = '1'): string {
  return '['.repeat(levels) + inner + ']'.repeat(levels);
}

function expectTooDeep(t: Test, response: { statusCode: number; body: string }, what: string): void {
  t.equal(response.statusCode, 400, `${what}: ${response.body.slice(0, 300)}`);
  const body = json(response as never);
  t.match(body.message, /more than 64 levels deep/, `${what}: the message says what was wrong`);
  t.match(body.validationErrors, [{ type: 'InvalidFormat', fieldRef: 'body' }], `${what}: names the body`);
}

async function control(sandbox: TestApp, method: 'POST' | 'GET', url: string, payload?: string) {
  return sandbox.app.inject({ method, url, payload, headers: payload === undefined ? {} : { 'content-type': 'application/json' } });
}

t.test('the measure: levels of objects and arrays, brackets inside strings not counted', async (t) => {
  t.equal(MAX_JSON_DEPTH, 64);
  t.notOk(jsonNestsDeeperThan('{}', 1));
  t.ok(jsonNestsDeeperThan('{"a":[]}', 1));
  t.notOk(jsonNestsDeeperThan('{"a":[]}', 2));
  t.notOk(jsonNestsDeeperThan(nest(64)));
  t.ok(jsonNestsDeeperThan(nest(65)));
  t.ok(jsonNestsDeeperThan(nest(10_000)));
  t.notOk(jsonNestsDeeperThan(JSON.stringify({ a: '['.repeat(1000) })), 'brackets in a string');
  t.notOk(jsonNestsDeeperThan(JSON.stringify({ a: '\\"' + '['.repeat(1000) })), 'an escaped quote does not end the string');
  t.notOk(jsonNestsDeeperThan(JSON.stringify({ 'x"[[[': 1 })), 'brackets in a key');
  t.notOk(jsonNestsDeeperThan(`[${nest(63)},${nest(63)}]`), 'siblings do not add up');
  t.ok(jsonNestsDeeperThan(`[${nest(63)},${nest(64)}]`));
});

t.test('65 and 10,000 levels: 400 on the control plane and the API; nothing stored', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);

  for (const levels of [65, 10_000]) {
    // POST /_emulator/faults: match.body holds any JSON value; the document is 3 levels before it.
    const fault = await control(sandbox, 'POST', '/_emulator/faults', `{"match":{"body":{"a":${nest(levels - 3)}}},"effect":{"type":"drop"}}`);
    expectTooDeep(t, fault, `faults, ${levels} levels`);
    // POST /_emulator/act-as: body is sent on to the API.
    const actAs = await control(
      sandbox,
      'POST',
      '/_emulator/act-as',
      `{"userId":"usr_acme","method":"POST","path":"/v1/beneficiaries","body":${nest(levels - 1)}}`,
    );
    expectTooDeep(t, actAs, `act-as, ${levels} levels`);
    // A signed /v1 body: refused at parsing, before authentication and validation.
    const beneficiary = await sandbox.request('POST', '/v1/beneficiaries', `{"name":${nest(levels - 1)}}`);
    expectTooDeep(t, beneficiary, `beneficiaries, ${levels} levels`);
    // The payout's decoded JSON payload is a JSON document too.
    const before = countTransactions(sandbox);
    const payout = await postPayout(sandbox, { body: base64(`{"entityId":"acct_acme_usd","reference":${nest(levels - 1, '"x"')}}`) });
    expectTooDeep(t, payout, `payout json payload, ${levels} levels`);
    t.match(json(payout).message, /^The decoded payload nests/);
    t.equal(countTransactions(sandbox), before, 'no payout');
  }
  const rules = await control(sandbox, 'GET', '/_emulator/faults');
  t.equal(rules.statusCode, 200, 'the rules still list');
  t.same(json(rules).data, [], 'no rule was stored');
});

t.test('a session refuses the same bodies under its prefix, and its rules stay empty', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const created = await control(sandbox, 'POST', '/_emulator/sessions', '{}');
  t.equal(created.statusCode, 201, created.body.slice(0, 200));
  const prefix = `/_sessions/${json(created).id}`;
  for (const levels of [65, 10_000]) {
    const fault = await control(sandbox, 'POST', `${prefix}/_emulator/faults`, `{"match":{"body":{"a":${nest(levels - 3)}}},"effect":{"type":"drop"}}`);
    expectTooDeep(t, fault, `session faults, ${levels} levels`);
    const actAs = await control(sandbox, 'POST', `${prefix}/_emulator/act-as`, `{"userId":"usr_acme","method":"POST","path":"/v1/beneficiaries","body":${nest(levels - 1)}}`);
    expectTooDeep(t, actAs, `session act-as, ${levels} levels`);
    // signed over the path as sent, prefix included (docs/sessions.md)
    const beneficiary = await sandbox.request('POST', `${prefix}/v1/beneficiaries`, `{"name":${nest(levels - 1)}}`);
    expectTooDeep(t, beneficiary, `session beneficiaries, ${levels} levels`);
  }
  const rules = await control(sandbox, 'GET', `${prefix}/_emulator/faults`);
  t.equal(rules.statusCode, 200, 'the session still answers');
  t.same(json(rules).data, [], 'no rule was stored in the session');
  const accepted = await control(sandbox, 'POST', `${prefix}/_emulator/faults`, `{"match":{"body":{"a":${nest(61)}}},"effect":{"type":"drop"}}`);
  t.equal(accepted.statusCode, 201, '64 levels are accepted in a session too');
  const rootRules = await control(sandbox, 'GET', '/_emulator/faults');
  t.same(json(rootRules).data, [], 'the root has no rule: the session kept its own');
});

t.test('64 levels are accepted, stored and listed', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const created = await control(sandbox, 'POST', '/_emulator/faults', `{"match":{"body":{"a":${nest(61)}}},"effect":{"type":"drop"}}`);
  t.equal(created.statusCode, 201, created.body.slice(0, 200));
  const rules = await control(sandbox, 'GET', '/_emulator/faults');
  t.equal(rules.statusCode, 200);
  t.equal(json(rules).data.length, 1);
  const actAs = await control(sandbox, 'POST', '/_emulator/act-as', `{"userId":"usr_acme","method":"POST","path":"/v1/beneficiaries","body":{"name":${nest(62)}}}`);
  t.equal(actAs.statusCode, 200, 'act-as answers with the inner answer');
  t.equal(json(actAs).status, 400, 'the API refused the name for its type, not for its depth');
  // Strings full of brackets are text, not nesting.
  const brackets = await control(sandbox, 'POST', '/_emulator/faults', JSON.stringify({ match: { body: { a: '['.repeat(5000) } }, effect: { type: 'drop' } }));
  t.equal(brackets.statusCode, 201, brackets.body.slice(0, 200));
});

t.test('query strings are flat: bracketed keys are names, never objects', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const key = 'a' + '[a]'.repeat(65);
  const response = await sandbox.request('GET', `/v1/transactions?${key}=1`);
  t.equal(response.statusCode, 400, 'an unknown parameter of the transactions list');
  t.match(json(response).message, /a\[a\]/, 'named as the flat key it is');
  const accounts = await sandbox.request('GET', `/v1/accounts?${key}=1`);
  t.equal(accounts.statusCode, 200, 'ignored by a list that ignores unknown parameters');
});

/** An object of `count` distinct keys, as text. */
function keys(count: number): string {
  return `{${Array.from({ length: count }, (_, i) => `"k${i}":1`).join(',')}}`;
}

t.test('the measure of entries: members and elements at every level, commas in strings not counted', async (t) => {
  t.equal(MAX_JSON_ENTRIES, 50_000);
  t.equal(jsonBoundPassed('{}', 64, 0), undefined, 'an empty object holds no entry');
  t.equal(jsonBoundPassed('[ \n ]', 64, 0), undefined, 'nor an empty array with whitespace');
  t.equal(jsonBoundPassed('[1]', 64, 0), 'entries');
  t.equal(jsonBoundPassed('[1]', 64, 1), undefined);
  t.equal(jsonBoundPassed('{"a":[1,2],"b":{}}', 64, 4), undefined, 'a, its two elements, b');
  t.equal(jsonBoundPassed('{"a":[1,2],"b":{}}', 64, 3), 'entries');
  t.equal(jsonBoundPassed(JSON.stringify({ a: ','.repeat(1000) }), 64, 1), undefined, 'commas in a string');
  t.equal(jsonBoundPassed(JSON.stringify({ 'x\\",': ',' }), 64, 1), undefined, 'an escaped quote and a comma in a key');
  t.equal(jsonBoundPassed(keys(MAX_JSON_ENTRIES)), undefined, 'exactly the bound');
  t.equal(jsonBoundPassed(keys(MAX_JSON_ENTRIES + 1)), 'entries');
  t.equal(jsonBoundPassed(nest(65), 64, 100), 'depth', 'whichever is passed first: the depth (each level is an entry of the one around it)');
  t.equal(jsonBoundPassed(`[${'1,'.repeat(20)}${nest(65)}]`, 64, 10), 'entries', 'whichever is passed first: the entries');
});

t.test('more than 50,000 entries: 400 before parsing, on the API, the 20 MiB entries route, the control plane and the payout payload', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const expectTooMany = (response: { statusCode: number; body: string }, what: string) => {
    t.equal(response.statusCode, 400, `${what}: ${response.body.slice(0, 200)}`);
    const body = json(response as never);
    t.equal(body.message, 'The body holds more than 50,000 entries (object members and array elements); at most 50,000 are accepted', `${what}: the message`);
    t.same(body.validationErrors, [{ type: 'InvalidFormat', fieldRef: 'body', message: body.message }], `${what}: one item on body`);
  };
  const before = countTransactions(sandbox);
  expectTooMany(await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', keys(50_001)), 'a deposit');
  // 1,400,000 keys in 17 MB: JSON.parse alone took about 7 s on the project's machine
  expectTooMany(await sandbox.request('POST', '/v1/information-requests/ireq_none/entries', keys(1_400_000)), 'information request entries');
  expectTooMany(await sandbox.request('POST', '/v1/information-requests/ireq_none/entries', `[${'1,'.repeat(2_000_000)}1]`), 'two million numbers');
  expectTooMany(await control(sandbox, 'POST', '/_emulator/faults', `{"match":{"body":${keys(60_000)}},"effect":{"type":"drop"}}`), 'a fault rule');
  const payout = await postPayout(sandbox, { body: base64(`{"entityId":"acct_acme_usd","reference":"x","extra":${keys(50_000)}}`) });
  t.equal(payout.statusCode, 400);
  t.match(json(payout).message, /^The decoded payload holds more than 50,000 entries/);
  t.equal(countTransactions(sandbox), before, 'nothing was written');
  t.same(json(await control(sandbox, 'GET', '/_emulator/faults')).data, [], 'no rule was stored');

  // at the bound the body is parsed and validated as usual: its unknown keys are the 400's items
  const atBound = await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', keys(50_000));
  t.equal(atBound.statusCode, 400);
  t.match(json(atBound).message, /^Invalid request: depositInstructionId is required \(and 50001 more; the first 50 are listed\)$/);
});

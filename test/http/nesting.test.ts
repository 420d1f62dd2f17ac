import t from 'tap';
import type { Test } from 'tap';
import { buildTestApp, json, type TestApp } from '../helper.js';
import { base64, countTransactions, postPayout } from '../helpers/funding.js';
import { jsonNestsDeeperThan, MAX_JSON_DEPTH } from '../../src/lib/json-depth.js';

// One nesting limit for every JSON body (docs/robustness.md#nesting-limit): at most 64 levels, deeper is a 400 with
// the error body before any handler sees it. 10,000 levels used to answer 500 (a stack overflow in JSON.stringify
// when the fault rule or the act-as body was stored or listed).

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

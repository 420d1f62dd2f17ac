import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { buildTestApp } from '../helper.js';
import { startServer } from '../../src/server.js';
import { internalCallHeaders } from '../../src/faults/internal-call.js';
import { loadScenario } from '../../src/scenarios/scenario.load.js';
import { keyBookFromFixtures, keyBookFromSession } from '../../src/scenarios/scenario.keys.js';
import { buildGiven, runScenario, runStep, startRun, ScenarioRunError, type ScenarioResult } from '../../src/scenarios/scenario.run.js';
import { httpTransport, injectTransport } from '../../src/scenarios/scenario.transport.js';

// The scenario engine (docs/decisions.md#scenario-engine) against real sandboxes: in process over app.inject, and over
// HTTP to a real listener's session. One story uses every action and every matcher; the same file and seed give the
// same ids and answers in two fresh sessions; a failed expectation reports its line, column, request and answer.

const FIXTURES = JSON.parse(readFileSync(path.join(import.meta.dirname, '..', '..', 'fixtures', 'default.json'), 'utf8'));
const KEYS = keyBookFromFixtures(FIXTURES)!;

const EVERY_ACTION = `name: every-action
seed: "scenario-engine"
clock: 2026-03-01T12:00:00Z
given:
  users:
    - as: northwind
      type: BUSINESS
      name: Northwind Traders Inc
      accounts:
        - { as: usd, currency: USD, balance: "10000.00" }
      depositInstructions:
        - { as: ach, account: usd, rail: US.USD.ACH }
      beneficiaries:
        - as: initech
          body:
            type: BUSINESS
            businessName: Initech LLC
            relationshipToUser: THIRD_PARTY
            instruments:
              - { type: BANK_ACCOUNT, currency: USD, country: US, accountHolderName: Initech LLC, accountNumber: "987654321012", routingNumber: "021000021" }
    - as: jo
      type: PERSON
      name: Jo Doe
      enrollment: PENDING_REVIEW
    - as: drafty
      type: PERSON
      name: Dee Draft
      enrollment: DRAFT
steps:
  - id: pay
    caption: Northwind pays Initech 100.00 USD
    request:
      method: POST
      path: /v1/payout-origination/json
      as: northwind
      base64: { entityId: "\${usd.id}", beneficiaryId: "\${initech.id}", amount: "100.00", currency: USD, reference: INV-1 }
      idempotencyKey: pay-00000001
    capture: { payout: body, payoutId: body.transactionId }
    expect:
      status: 202
      body: { status: RECEIVED, transactionId: { matches: "^txn_" } }
      headers: { Content-Type: { contains: application/json } }
  - expect:
      balance: { account: usd, available: { lt: "10000.00" }, current: "10000.00" }
      webhooks: { events: [transaction_created], transaction: "\${payoutId}" }
  - advance: 1s
  - settle: true
  - advance: 3000
  - waitFor: { events: [transaction_created, transaction_status_updated], transaction: "\${payoutId}" }
  - id: read
    request: { method: GET, path: "/v1/transactions/\${payout.transactionId}", as: northwind }
    expect:
      body:
        status: COMPLETED
        id: "\${steps.pay.body.transactionId}"
        netDebitAmount: { gt: 99 }
        debitAmount: { gte: "100.00" }
        category: { exists: true }
        nothingHere: { exists: false }
        externalId: { equals: INV-1 }
        debitAmount.length: { lte: 10 }
  - return: { transaction: "\${payoutId}", reasonCode: R01 }
    expect: { status: 201, body: { type: REFUND } }
  - id: deposit
    request:
      method: POST
      path: "/v1/sandbox/accounts/\${usd.id}/deposits"
      as: { user: northwind }
      body: { depositInstructionId: "\${ach.id}", amount: "50.00", counterpartyName: Contoso, reference: NW-1 }
    expect: { status: 202, body: { message: { contains: txn_ } } }
  - force: { transaction: "\${steps.deposit.transactionId}", status: FAILED, statusCode: RAIL_REJECTED }
    expect: { status: [200, 201] }
  - decide: { informationRequest: "\${jo.informationRequestId}", decision: APPROVED }
    expect: { body: { status: COMPLETED } }
  - request: { method: GET, path: /v1/enrollment, as: jo }
    expect: { body: { status: ACTIVE } }
  - request: { method: GET, path: /v1/enrollment, as: drafty }
    expect: { body: { status: INACTIVE, informationRequest.status: DRAFT } }
  - snapshot: after-story
  - control: { method: GET, path: /_emulator/clock }
    capture: { now: body.now }
    expect: { body: { now: { matches: "^2026-03-01T12:00:0" } } }
  - chaos: { duplicate: { times: 1 } }
  - chaos: off
  - fault: { match: { method: GET, path: /v1/users }, effect: { type: status, status: 503 }, times: 1 }
  - request: { method: GET, path: /v1/users, as: programme }
    expect: { status: [200, 503] }
  - request: { method: GET, path: "/v1/accounts/\${usd.id}/statement?format=csv", as: northwind }
    expect: { status: [200, 404, 400] }
`;

function ids(result: ScenarioResult): unknown {
  return {
    given: Object.fromEntries(Object.entries(result.state.given).map(([name, value]) => [name, value.id])),
    steps: result.steps.map((step) => ({ passed: step.passed, status: step.answer?.status, transactionId: step.transactionId ?? null })),
    captures: result.state.captures,
  };
}

t.test('in process: every action and matcher, given built through the API', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const loaded = loadScenario(EVERY_ACTION, 'every.yaml');
  const seen: number[] = [];
  const result = await runScenario(injectTransport(sandbox.app, '', internalCallHeaders()), loaded, KEYS, { onStep: (step) => seen.push(step.index) });
  t.same(result.failure, undefined, JSON.stringify(result.failure));
  t.ok(result.passed);
  t.same(seen, loaded.scenario.steps.map((_step, index) => index));
  t.match(result.state.given.northwind, { id: /^usr_/, type: 'BUSINESS', enrollmentStatus: 'INACTIVE' });
  t.match(result.state.given.usd, { id: /^acct_/, balances: { available: '10000.00' } });
  t.match(result.state.given.ach, { id: /^di_/, rail: { type: 'US.USD.ACH' } });
  t.match(result.state.given.initech, { id: /^ben_/ });
  t.equal(result.steps[0]!.transactionId, result.state.captures.payoutId);
  t.equal(result.steps[0]!.caption, 'Northwind pays Initech 100.00 USD');
  t.same(JSON.parse(JSON.stringify(result.state)), result.state, 'the run state is plain JSON');
});

t.test('over HTTP to a real listener: a session each, the same ids and answers for the same file and seed', async (t) => {
  const server = await startServer({ config: { port: 0, host: '127.0.0.1', logLevel: 'silent', db: ':memory:' } });
  t.teardown(() => server.close());
  const loaded = loadScenario(EVERY_ACTION, 'every.yaml');
  const runs: ScenarioResult[] = [];
  for (let run = 0; run < 2; run++) {
    const created = await fetch(`${server.url}/_emulator/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ seed: loaded.scenario.seed, clock: loaded.scenario.clock }),
    });
    t.equal(created.status, 201);
    const session = (await created.json()) as { baseUrl: string; credentials: Parameters<typeof keyBookFromSession>[0] };
    const transport = httpTransport(session.baseUrl);
    t.match(transport.prefix, /^\/_sessions\/ses_/);
    const result = await runScenario(transport, loaded, keyBookFromSession(session.credentials));
    t.same(result.failure, undefined, JSON.stringify(result.failure));
    runs.push(result);
  }
  // over HTTP the fault rule fires (no internal header): the 503 is accepted by the step's expect
  t.equal(runs[0]!.steps.at(-2)!.answer!.status, 503);
  t.same(ids(runs[1]!), ids(runs[0]!), 'the same ids and statuses in both sessions');
});

t.test('a failed expectation: its line and column, the request and the answer; the run stops there', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const text = `name: fails
given:
  users:
    - { as: acme, type: BUSINESS, name: Acme, accounts: [{ as: usd, currency: USD, balance: "25.00" }] }
steps:
  - request: { method: GET, path: "/v1/accounts/\${usd.id}", as: acme }
    expect:
      status: 200
      body:
        balances.available: "99.00"
  - settle: true
`;
  const loaded = loadScenario(text, 'fails.yaml');
  const transport = injectTransport(sandbox.app, '', internalCallHeaders());
  const result = await runScenario(transport, loaded, KEYS);
  t.notOk(result.passed);
  t.same(result.failure, { step: 0, message: 'body.balances.available: expected "99.00", found "25.00"', line: 10, column: 9 });
  t.equal(result.steps.length, 1);
  t.match(result.steps[0]!.request, { method: 'GET', path: /^\/v1\/accounts\/acct_/ });
  t.match(result.steps[0]!.answer, { status: 200, body: { balances: { available: '25.00' } } });
  t.ok(result.state.failed);
  await t.rejects(runStep(transport, loaded, result.state, 1), /the run has failed/);
});

t.test('step by step: state between steps is plain JSON, steps run in order, given first', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const loaded = loadScenario('name: steps\nsteps:\n  - settle: true\n  - request: { method: POST, path: /v1/transactions }\n', 'steps.yaml');
  const transport = injectTransport(sandbox.app, '', internalCallHeaders());
  let state = startRun(loaded, KEYS);
  await t.rejects(runStep(transport, loaded, state, 0), /buildGiven must run before the first step/);
  state = JSON.parse(JSON.stringify(await buildGiven(transport, loaded, state)));
  await t.rejects(runStep(transport, loaded, state, 1), /step 2 is not the next step \(1\)/);
  const first = await runStep(transport, loaded, state, 0);
  t.ok(first.result.passed);
  const second = await runStep(transport, loaded, JSON.parse(JSON.stringify(first.state)), 1);
  t.notOk(second.result.passed);
  t.match(second.result.failure, { message: /^POST \/v1\/transactions answered 405: .* \(give expect.status to accept it\)$/, line: 4, column: 5 });
});

t.test('given that cannot be built: a ScenarioRunError at the user', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const loaded = loadScenario('name: g\ngiven:\n  users:\n    - { as: p, type: PERSON, name: Pat Doe, accounts: [{ as: eur, currency: EUR }] }\nsteps:\n  - settle: true\n', 'g.yaml');
  const transport = injectTransport(sandbox.app, '', internalCallHeaders());
  const error = (await buildGiven(transport, loaded, startRun(loaded, KEYS)).catch((caught: unknown) => caught)) as ScenarioRunError;
  t.type(error, ScenarioRunError);
  t.same([error.line, error.column], [4, 7]);
  t.match(error.message, /^given user p: p's activation opened no EUR account \(it opened: USD/);
  const receiverless = loadScenario('name: r\nwebhooks: { receiver: true }\nsteps:\n  - settle: true\n', 'r.yaml');
  const noReceiver = (await buildGiven(transport, receiverless, startRun(receiverless, KEYS)).catch((caught: unknown) => caught)) as ScenarioRunError;
  t.type(noReceiver, ScenarioRunError);
  t.same([noReceiver.line, noReceiver.column], [2, 11], 'at the webhooks field');
  t.match(noReceiver.message, /needs a webhook receiver, and this runner has none: remove it/);
});

t.test('a refused request fails on its status, before any capture of its answer', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const text = `name: refused
steps:
  - request: { method: GET, path: /v1/accounts/acct_nope, as: programme }
    capture:
      account: body.id
    expect:
      status: 200
`;
  const loaded = loadScenario(text, 'refused.yaml');
  const result = await runScenario(injectTransport(sandbox.app, '', internalCallHeaders()), loaded, KEYS);
  t.notOk(result.passed);
  t.match(result.failure, { step: 0, message: /^expected status 200, got 400: /, line: 7, column: 7 });
});

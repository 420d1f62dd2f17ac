import t, { type Test } from 'tap';
import type { LightMyRequestResponse } from 'fastify';
import { errorBodySchema } from '../../src/core/errors.js';
import { CREDENTIALS, buildTestApp, json, type Identity, type TestApp } from '../helper.js';
import { base64, countTransactions, fund, postPayout } from '../helpers/funding.js';

// Errors as the interface words them (docs/decisions.md#validation-error-code, #one-mode-per-request,
// #unknown-body-fields, #users-create, #blank-names; docs/errors.md#messages; interface 7.1).

const MULTI: Identity = { apiKey: CREDENTIALS.multi.apiKey, secret: CREDENTIALS.multi.secret };

/** A 400 fully described by validationErrors: the body has items and no errorCode. */
function described(t: Test, response: LightMyRequestResponse, fieldRef: string | RegExp, label: string): Record<string, any> {
  t.equal(response.statusCode, 400, `${label}: 400 (${response.body.slice(0, 160)})`);
  const body = json(response);
  t.ok(errorBodySchema.strict().safeParse(body).success, `${label}: the interface 7.1 body`);
  t.notOk('errorCode' in body, `${label}: no errorCode when validationErrors describe the failure`);
  t.ok(Array.isArray(body.validationErrors) && body.validationErrors.length > 0, `${label}: validationErrors`);
  const refs = (body.validationErrors as Array<{ fieldRef?: string }>).map((item) => item.fieldRef ?? '');
  t.ok(refs.some((ref) => (typeof fieldRef === 'string' ? ref === fieldRef : fieldRef.test(ref))), `${label}: an item names ${String(fieldRef)} (got ${refs.join(', ')})`);
  return body;
}

async function countRows(sandbox: TestApp, table: string): Promise<number> {
  return (sandbox.ctx.db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
}

async function bearerToken(sandbox: TestApp): Promise<string> {
  const issued = await sandbox.request('POST', '/v1/auth/token', {});
  if (issued.statusCode !== 200) throw new Error(`token: ${issued.statusCode} ${issued.body}`);
  return json(issued).accessToken as string;
}

t.test('a 400 described by validationErrors carries no errorCode, on every kind of validation', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  described(t, await sandbox.request('GET', '/v1/accounts?pageSize=0'), 'pageSize', 'query range');
  described(t, await sandbox.request('GET', '/v1/transactions?sortBy=nope'), 'sortBy', 'query enum');
  described(t, await sandbox.request('POST', '/v1/auth/users', { externalId: 'e', type: 'ROBOT', name: 'R' }, MULTI), 'type', 'body enum');
  described(t, await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'x', amount: '-1' }), 'amount', 'service-level field');
  const malformed = await sandbox.app.inject({
    method: 'POST',
    url: '/v1/auth/users',
    payload: '{"externalId":',
    headers: { ...sandbox.sign('POST', '/v1/auth/users', '{"externalId":', MULTI), 'content-type': 'application/json' },
  });
  described(t, malformed, 'body', 'malformed JSON');
  described(t, await sandbox.request('GET', '/v1/accounts//statement?startDate=2026-01-01&endDate=2026-01-31'), 'accountId', 'empty path segment');
  described(t, await sandbox.request('POST', '/v1/transaction-intents', { idempotencyKey: 'k' }), /credit|debitAmount|creditAmount/, 'cross-field rule');

  // Codes that say more than the items keep their code; conflicts and auth failures keep theirs.
  const header = await sandbox.request('GET', '/v1/accounts', undefined, MULTI);
  t.equal(json(header).errorCode, 'USER_ID_HEADER_REQUIRED');
  const unknown = await sandbox.request('GET', '/v1/accounts/acct_nope');
  t.equal(json(unknown).errorCode, 'NOT_FOUND');
});

t.test('HMAC and bearer credentials in one request: 400 INVALID_REQUEST, nothing done', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const token = await bearerToken(sandbox);
  const both = (method: string, url: string, body?: unknown, extra: Record<string, string> = {}) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return sandbox.app.inject({
      method: method as 'GET',
      url,
      payload,
      headers: { ...sandbox.sign(method, url, payload ?? ''), authorization: `Bearer ${token}`, ...(payload ? { 'content-type': 'application/json' } : {}), ...extra },
    });
  };
  for (const [method, url, body] of [
    ['GET', '/v1/accounts', undefined],
    ['GET', '/v1/transactions', undefined],
    ['POST', '/v1/auth/token', {}],
    ['POST', '/v1/accounts/acct_acme_usd/deposit-instructions', { name: 'Both', idempotencyKey: 'both-1' }],
  ] as const) {
    const response = await both(method, url, body);
    t.equal(response.statusCode, 400, `${method} ${url}: ${response.body}`);
    const error = json(response);
    t.same(Object.keys(error).sort(), ['errorCode', 'message'], 'no validationErrors item describes it');
    t.equal(error.errorCode, 'INVALID_REQUEST');
    t.match(error.message, /one kind of credentials/);
  }
  t.equal(await countRows(sandbox, "deposit_instructions WHERE name = 'Both'"), 0, 'the instruction was not created');

  // Each HMAC credential header alone next to a bearer token counts; the programme and user headers do not.
  for (const name of ['x-service-api-key', 'x-service-timestamp', 'x-service-signature']) {
    const response = await sandbox.app.inject({ method: 'GET', url: '/v1/accounts', headers: { authorization: `Bearer ${token}`, [name]: 'x' } });
    t.equal(response.statusCode, 400, `${name} with a bearer token`);
    t.equal(json(response).errorCode, 'INVALID_REQUEST');
  }
  const withProgramme = await sandbox.app.inject({ method: 'GET', url: '/v1/accounts', headers: { authorization: `Bearer ${token}`, 'x-service-program-id': 'prg_sandbox' } });
  t.equal(withProgramme.statusCode, 200, 'X-Service-Program-Id is not a credential');
  // A bad bearer token with HMAC headers is refused for the mix, before either is checked.
  const badToken = await sandbox.app.inject({ method: 'GET', url: '/v1/accounts', headers: { ...sandbox.sign('GET', '/v1/accounts'), authorization: 'Bearer nope' } });
  t.equal(badToken.statusCode, 400);

  // The payout endpoint (its own HMAC variant) refuses the mix too.
  fund(sandbox.ctx, 'acct_acme_usd', '1000.00');
  const before = countTransactions(sandbox);
  const payout = await postPayout(sandbox, {
    body: base64(JSON.stringify({ entityId: 'acct_acme_usd', beneficiaryId: 'ben_globex', amount: '5.00', currency: 'USD', reference: 'both' })),
    headers: { authorization: `Bearer ${token}` },
  });
  t.equal(payout.statusCode, 400, payout.body);
  t.equal(json(payout).errorCode, 'INVALID_REQUEST');
  t.equal(countTransactions(sandbox), before, 'no payout transaction');
  // Either alone still works.
  t.equal((await sandbox.request('GET', '/v1/accounts')).statusCode, 200);
  t.equal((await sandbox.request('GET', '/v1/accounts', undefined, { bearer: token })).statusCode, 200);
});

t.test('unknown fields are refused on intent, beneficiary and payout bodies, nested ones included', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  fund(sandbox.ctx, 'acct_acme_usd', '1000.00');
  const intent = { idempotencyKey: 'unknown-1', debitAccountId: 'acct_acme_usd', credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_eur' }, debitAmount: '10.00' };
  const intents = await countRows(sandbox, 'transaction_intents');

  let body = described(t, await sandbox.request('POST', '/v1/transaction-intents', { ...intent, memo: 'typo' }), 'memo', 'intent top level');
  t.match(body.validationErrors, [{ type: 'InvalidValue', fieldRef: 'memo', message: 'memo is not an accepted field' }]);
  described(t, await sandbox.request('POST', '/v1/transaction-intents', { ...intent, credit: { ...intent.credit, currency: 'EUR' } }), 'credit.currency', 'intent credit');
  described(
    t,
    await sandbox.request('POST', '/v1/transaction-intents', {
      idempotencyKey: 'unknown-2',
      debit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_globex', instrumentId: 'bi_globex_usd', routingNumber: '021000021' },
      credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_usd' },
      creditAmount: '10.00',
    }),
    'debit.routingNumber',
    'intent debit',
  );
  t.equal(await countRows(sandbox, 'transaction_intents'), intents, 'no intent created');
  const created = await sandbox.request('POST', '/v1/transaction-intents', intent);
  t.equal(created.statusCode, 201, created.body);
  described(t, await sandbox.request('POST', `/v1/transaction-intents/${json(created).id}/commit`, { idempotencyKey: 'unknown-1', confirm: true }), 'confirm', 'commit');
  t.equal(json(await sandbox.request('GET', `/v1/transaction-intents/${json(created).id}`)).status, 'CREATED', 'not committed');

  const beneficiaries = await countRows(sandbox, 'beneficiaries');
  const bank = { type: 'BANK_ACCOUNT', currency: 'USD', country: 'US', accountHolderName: 'Initech LLC', accountNumber: '987654321012', routingNumber: '021000021' };
  described(t, await sandbox.request('POST', '/v1/beneficiaries', { type: 'BUSINESS', businessName: 'Initech', nickname: 'I', instruments: [bank] }), 'nickname', 'beneficiary top level');
  described(t, await sandbox.request('POST', '/v1/beneficiaries', { type: 'BUSINESS', businessName: 'Initech', instruments: [{ ...bank, swift: 'X' }] }), 'instruments.0.swift', 'beneficiary instrument');
  described(
    t,
    await sandbox.request('POST', '/v1/beneficiaries', {
      type: 'PERSON',
      firstName: 'Ann',
      lastName: 'Lee',
      address: { line1: 'x', city: 'y', postalCode: '1', country: 'US', state: 'CA' },
      instruments: [bank],
    }),
    'address.state',
    'beneficiary address',
  );
  t.equal(await countRows(sandbox, 'beneficiaries'), beneficiaries, 'no beneficiary created');
  t.equal((await sandbox.request('POST', '/v1/beneficiaries', { type: 'BUSINESS', businessName: 'Initech', instruments: [bank] })).statusCode, 201);

  const before = countTransactions(sandbox);
  const payload = { entityId: 'acct_acme_usd', beneficiaryId: 'ben_globex', amount: '5.00', currency: 'USD', reference: 'INV-1', priority: 'HIGH' };
  const payout = await postPayout(sandbox, { body: base64(JSON.stringify(payload)) });
  body = described(t, payout, 'priority', 'payout json payload');
  t.equal(countTransactions(sandbox), before, 'no payout transaction');
});

t.test('many unknown fields: at most 50 items, all counted in the message; a long name is echoed shortened', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const deposit = '/v1/sandbox/accounts/acct_acme_usd/deposits';
  const before = countTransactions(sandbox);
  // docs/errors.md#validation-errors
  const many = Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`k${i}`, 1]));
  let body = described(t, await sandbox.request('POST', deposit, many), 'k0', '5,000 unknown keys');
  t.equal(body.validationErrors.length, 50, 'the first 50 items');
  t.equal(body.message, 'Invalid request: depositInstructionId is required (and 5001 more; the first 50 are listed)', 'the message counts them all');
  t.same(body.validationErrors.slice(0, 3).map((item: { fieldRef: string }) => item.fieldRef), ['depositInstructionId', 'amount', 'k0'], 'in the order found');

  // at 50 there is nothing left out to announce
  const fifty = Object.fromEntries(Array.from({ length: 48 }, (_, i) => [`k${i}`, 1]));
  body = described(t, await sandbox.request('POST', deposit, fifty), 'k47', '48 unknown keys and two missing fields');
  t.equal(body.validationErrors.length, 50);
  t.equal(body.message, 'Invalid request: depositInstructionId is required (and 49 more)');

  const long = 'x'.repeat(100_000);
  const answer = await sandbox.request('POST', deposit, { [long]: 1 });
  body = described(t, answer, `${'x'.repeat(100)}... (100000 characters)`, 'a key of 100,000 characters');
  t.equal(body.validationErrors[2].message, `${'x'.repeat(100)}... (100000 characters) is not an accepted field`);
  t.ok(answer.body.length < 1_000, `the answer stays small (${answer.body.length} bytes)`);

  // a nested unknown key in a path the schema knows
  body = described(
    t,
    await sandbox.request('POST', '/v1/transaction-intents', { idempotencyKey: 'long-key', debitAccountId: 'acct_acme_usd', credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_eur', [long]: 1 }, debitAmount: '1.00' }),
    `credit.${'x'.repeat(100)}... (100000 characters)`,
    'a long nested key',
  );
  t.equal(countTransactions(sandbox), before, 'nothing was written');
});

t.test('POST /v1/auth/users: the same externalId with other values is a 409', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const ann = { externalId: 'ext-ann', type: 'PERSON', name: 'Ann Lee', email: 'ann@example.com' };
  const created = await sandbox.request('POST', '/v1/auth/users', ann, MULTI);
  t.equal(created.statusCode, 201);
  const userId = json(created).userId;

  const same = await sandbox.request('POST', '/v1/auth/users', ann, MULTI);
  t.equal(same.statusCode, 200, 'a replay with the same values');
  t.equal(json(same).userId, userId);
  t.equal((await sandbox.request('POST', '/v1/auth/users', { ...ann, name: '  Ann Lee  ' }, MULTI)).statusCode, 200, 'surrounding spaces do not make another name');
  t.equal((await sandbox.request('POST', '/v1/auth/users', { externalId: 'ext-ann', type: 'PERSON', name: 'Ann Lee' }, MULTI)).statusCode, 200, 'email left out');

  for (const [label, change, named] of [
    ['another type', { type: 'BUSINESS' }, /type PERSON/],
    ['another name', { name: 'Ann Smith' }, /name "Ann Lee"/],
    ['another email', { email: 'ann@other.example' }, /email ann@example.com/],
  ] as const) {
    const response = await sandbox.request('POST', '/v1/auth/users', { ...ann, ...change }, MULTI);
    t.equal(response.statusCode, 409, `${label}: ${response.body}`);
    const error = json(response);
    t.equal(error.errorCode, 'INVALID_REQUEST');
    t.match(error.message, named);
    t.match(error.message, userId);
  }
  t.equal(await countRows(sandbox, "users WHERE external_id = 'ext-ann'"), 1, 'one user, unchanged');
  const stored = sandbox.ctx.db.prepare("SELECT type, name, email FROM users WHERE external_id = 'ext-ann'").get();
  t.same(stored, { type: 'PERSON', name: 'Ann Lee', email: 'ann@example.com' });
  // The same externalId in another programme is another user.
  const other = await sandbox.request('POST', '/v1/auth/users', { ...ann, type: 'BUSINESS' }, { apiKey: CREDENTIALS.other.apiKey, secret: CREDENTIALS.other.secret, programmeId: 'prg_other' });
  t.equal(other.statusCode, 201);
});

t.test('whitespace-only names are refused on every name-like field', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const bank = { type: 'BANK_ACCOUNT', currency: 'USD', country: 'US', accountHolderName: 'Initech LLC', accountNumber: '987654321012', routingNumber: '021000021' };
  described(t, await sandbox.request('POST', '/v1/auth/users', { externalId: 'blank', type: 'PERSON', name: ' \t ' }, MULTI), 'name', 'user name');
  described(t, await sandbox.request('POST', '/v1/beneficiaries', { type: 'PERSON', firstName: '   ', lastName: 'Lee', instruments: [bank] }), 'firstName', 'beneficiary firstName');
  described(t, await sandbox.request('POST', '/v1/beneficiaries', { type: 'BUSINESS', businessName: '  ', instruments: [bank] }), 'businessName', 'beneficiary businessName');
  described(t, await sandbox.request('POST', '/v1/beneficiaries', { type: 'BUSINESS', businessName: 'I', instruments: [{ ...bank, accountHolderName: ' ' }] }), 'instruments.0.accountHolderName', 'accountHolderName');
  described(t, await sandbox.request('POST', '/v1/accounts/acct_acme_usd/deposit-instructions', { name: '    ', idempotencyKey: 'blank' }), 'name', 'deposit instruction name');
  const detail = json(await sandbox.request('GET', '/v1/accounts/acct_acme_usd'));
  const instruction = detail.depositInstructions[0].id;
  described(
    t,
    await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: instruction, amount: '1.00', counterpartyName: '  ' }),
    'counterpartyName',
    'simulated deposit counterpartyName',
  );
  const injected = await sandbox.app.inject({
    method: 'POST',
    url: '/_emulator/accounts/acct_acme_usd/transactions',
    payload: { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '1.00', debitParty: { partyType: 'PAYER', payer: { displayName: '  ' } } },
  });
  described(t, injected, 'debitParty.payer.displayName', 'injected payer name');
  t.equal(await countRows(sandbox, "users WHERE external_id = 'blank'"), 0);
  t.equal(await countRows(sandbox, "deposit_instructions WHERE idempotency_key = 'blank'"), 0);
  // A name with letters and surrounding spaces is fine.
  t.equal((await sandbox.request('POST', '/v1/accounts/acct_acme_usd/deposit-instructions', { name: ' Ops ', idempotencyKey: 'spaced' })).statusCode, 202);
});

t.test('messages are written for people, never zod wording', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const zodWords = /Invalid input|Too small|Too big|expected string|received array|Invalid option|Invalid string|Unrecognized key/;
  const cases: Array<[string, LightMyRequestResponse, string, RegExp]> = [
    ['repeated pageSize', await sandbox.request('GET', '/v1/transactions?pageSize=1&pageSize=2'), 'pageSize', /^pageSize was given more than once; send it once$/],
    ['repeated accountId', await sandbox.request('GET', '/v1/transactions?accountId=a&accountId=b'), 'accountId', /accountId was given more than once/],
    ['repeated pageIndex on users', await sandbox.request('GET', '/v1/users?pageIndex=1&pageIndex=2', undefined, MULTI), 'pageIndex', /pageIndex was given more than once/],
    ['repeated startDate', await sandbox.request('GET', '/v1/accounts/acct_acme_usd/statement?startDate=2026-01-01&startDate=2026-01-02&endDate=2026-01-31'), 'startDate', /startDate was given more than once/],
    ['empty externalId', await sandbox.request('POST', '/v1/auth/users', { externalId: '', type: 'PERSON', name: 'A' }, MULTI), 'externalId', /^externalId must not be empty$/],
    ['long externalId', await sandbox.request('POST', '/v1/auth/users', { externalId: 'x'.repeat(129), type: 'PERSON', name: 'A' }, MULTI), 'externalId', /^externalId must be at most 128 characters$/],
    ['enum', await sandbox.request('POST', '/v1/auth/users', { externalId: 'e', type: 'ROBOT', name: 'A' }, MULTI), 'type', /^type must be one of PERSON, BUSINESS$/],
    ['wrong type', await sandbox.request('POST', '/v1/auth/users', { externalId: 7, type: 'PERSON', name: 'A' }, MULTI), 'externalId', /^externalId must be a string, not a number$/],
    ['list for a string', await sandbox.request('POST', '/v1/auth/users', { externalId: ['e'], type: 'PERSON', name: 'A' }, MULTI), 'externalId', /^externalId must be a string, not a list$/],
    ['email', await sandbox.request('POST', '/v1/auth/users', { externalId: 'e', type: 'PERSON', name: 'A', email: 'nope' }, MULTI), 'email', /^email must be an email address$/],
    ['token scopes', await sandbox.request('POST', '/v1/auth/token', { scopes: [] }), 'scopes', /^scopes must hold at least 1 items?$/],
  ];
  for (const [label, response, fieldRef, message] of cases) {
    const body = described(t, response, fieldRef, label);
    const item = (body.validationErrors as Array<{ fieldRef?: string; message: string }>).find((entry) => entry.fieldRef === fieldRef)!;
    t.match(item.message, message, `${label}: ${item.message}`);
    t.notMatch(body.message, zodWords, `${label}: summary without zod wording`);
  }
  // A schema's own message is kept as written.
  const own = await sandbox.request('POST', '/v1/transaction-intents', { idempotencyKey: 'k', debitAccountId: 'acct_acme_usd', credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_eur' }, debitAmount: '1e3' });
  t.match(json(own).validationErrors, [{ fieldRef: 'debitAmount', message: /plain decimal string/ }]);
});

import t from 'tap';
import type { LightMyRequestResponse } from 'fastify';
import { advance, AS_JANE, buildTestApp, json, type Identity, type TestApp } from '../helper.js';
import { expectStatus } from '../helpers/money-in.js';
import { businessEntries, createUser, getDetail, personEntries, startEnrollment, submit, writeEntries } from '../helpers/onboarding.js';

// Control-plane routes and the interface values they make reachable (docs/control-plane.md): provider
// readiness (the 409 of interface 3.1), CANCELED information requests, API-key entitlements (403),
// MissingPathParameter and the UnexpectedVerificationError magic value.

const READ_ONLY: Identity = { apiKey: 'pk_sandbox_readonly', secret: 'sk_sandbox_readonly_secret', userId: 'usr_acme' };

function providerReady(sandbox: TestApp, accountId: string, body: unknown) {
  return sandbox.app.inject({ method: 'POST', url: `/_emulator/accounts/${accountId}/provider-ready`, payload: body as object });
}

function newInstruction(sandbox: TestApp, accountId: string, key: string) {
  return sandbox.request('POST', `/v1/accounts/${accountId}/deposit-instructions`, { name: 'GBP collections', idempotencyKey: key });
}

t.test('provider readiness: the 409 of interface 3.1 is produced and cleared', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const refused = await newInstruction(sandbox, 'acct_acme_gbp', 'gbp-1');
  t.equal(refused.statusCode, 409, 'the fixture GBP account has no ready provider');
  t.equal(json(refused).errorCode, 'INVALID_REQUEST');

  const ready = expectStatus(await providerReady(sandbox, 'acct_acme_gbp', { ready: true }), 200);
  t.match(ready, { accountId: 'acct_acme_gbp', providerReady: true, updatedAt: '2026-03-01T12:00:00.000Z' });
  t.equal(expectStatus(await newInstruction(sandbox, 'acct_acme_gbp', 'gbp-1'), 202).status, 'PENDING');
  const overview = expectStatus(await sandbox.app.inject({ method: 'GET', url: '/_emulator/overview' }), 200);
  const gbp = overview.programmes.flatMap((p: any) => p.users).flatMap((u: any) => u.accounts).find((a: any) => a.id === 'acct_acme_gbp');
  t.equal(gbp.providerReady, true, 'the dashboard overview agrees');

  t.equal(expectStatus(await providerReady(sandbox, 'acct_acme_usd', { ready: false }), 200).providerReady, false);
  t.equal((await newInstruction(sandbox, 'acct_acme_usd', 'usd-2')).statusCode, 409, 'a ready provider can be taken away');
  const again = expectStatus(await providerReady(sandbox, 'acct_acme_usd', { ready: false }), 200);
  t.equal(again.providerReady, false, 'idempotent');

  const unknown = await providerReady(sandbox, 'acct_nope', { ready: true });
  t.equal(unknown.statusCode, 404);
  t.equal(json(unknown).errorCode, 'NOT_FOUND');
  t.equal((await providerReady(sandbox, 'acct_acme_usdc_ethereum', { ready: true })).statusCode, 404, 'a sub-balance is not an account of the API');
  for (const body of [{}, { ready: 'yes' }, { ready: true, extra: 1 }]) {
    const bad = await providerReady(sandbox, 'acct_acme_gbp', body);
    t.equal(bad.statusCode, 400, JSON.stringify(body));
    t.ok(json(bad).validationErrors?.length, 'validationErrors say what is wrong');
  }
  t.equal((await providerReady(sandbox, 'acct_acme_gbp', undefined)).statusCode, 400, 'no body');
});

t.test('provider readiness of an onboarded user\'s template account: made ready early, it still receives its template instructions once', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const user = await createUser(sandbox, 'PERSON', 'Early Bird');
  const requestId = await startEnrollment(sandbox, user.as);
  t.equal((await writeEntries(sandbox, user.as, requestId, await personEntries('Early Bird'))).statusCode, 200);
  t.equal((await submit(sandbox, user.as, requestId)).statusCode, 200);
  await advance(sandbox, 5_000);
  const [account] = expectStatus(await sandbox.request('GET', '/v1/accounts', undefined, user.as), 200).data;
  t.equal(account.currency, 'USD', 'the PERSON template account');
  const early = await sandbox.request('POST', `/v1/accounts/${account.id}/deposit-instructions`, { name: 'Mine', idempotencyKey: 'early' }, user.as);
  t.equal(early.statusCode, 409, 'onboarding: provider not ready yet');
  expectStatus(await providerReady(sandbox, account.id, { ready: true }), 200);
  expectStatus(await sandbox.request('POST', `/v1/accounts/${account.id}/deposit-instructions`, { name: 'Mine', idempotencyKey: 'early' }, user.as), 202);
  await advance(sandbox, 2_000);
  const detail = expectStatus(await sandbox.request('GET', `/v1/accounts/${account.id}`, undefined, user.as), 200);
  const instructions = detail.depositInstructions.map((instruction: { rail: { type: string }; status: string }) => [instruction.rail.type, instruction.status]);
  t.same(instructions, [['US.USD.ACH', 'ACTIVE'], ['US.USD.ACH', 'ACTIVE']], 'the one requested early and the template\'s, each once');
  await advance(sandbox, 60_000);
  t.equal(expectStatus(await sandbox.request('GET', `/v1/accounts/${account.id}`, undefined, user.as), 200).depositInstructions.length, 2, 'no more later');
});

t.test('an information request is CANCELED from DRAFT, PROCESSING_SUBMISSION or PENDING_REVIEW; never once decided', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const cancel = (id: string) => sandbox.app.inject({ method: 'POST', url: `/_emulator/information-requests/${id}/cancel` });

  // DRAFT
  const draftUser = await createUser(sandbox, 'PERSON', 'Draft Person');
  const draftId = await startEnrollment(sandbox, draftUser.as);
  const canceled = expectStatus(await cancel(draftId), 200);
  t.match(canceled, { id: draftId, status: 'CANCELED', decision: null });
  const enrollment = expectStatus(await sandbox.request('GET', '/v1/enrollment', undefined, draftUser.as), 200);
  t.match(enrollment, { status: 'INACTIVE', informationRequest: { id: draftId, status: 'CANCELED', decision: null } }, 'the enrollment summary reflects it');
  const list = expectStatus(await sandbox.request('GET', '/v1/information-requests', undefined, draftUser.as), 200);
  t.match(list.data, [{ id: draftId, status: 'CANCELED' }]);
  const write = await writeEntries(sandbox, draftUser.as, draftId, [{ key: 'legalName', value: 'Draft Person' }]);
  t.equal(write.statusCode, 409);
  t.equal(json(write).errorCode, 'INFORMATION_REQUEST_NOT_EDITABLE', 'a canceled request takes no entries');
  const twice = await cancel(draftId);
  t.equal(twice.statusCode, 409, 'CANCELED is final');
  t.match(json(twice).message, /CANCELED/);

  // PENDING_REVIEW: the review job that was due does nothing once canceled.
  const reviewed = await createUser(sandbox, 'BUSINESS', 'Review Works LLC');
  const reviewId = await startEnrollment(sandbox, reviewed.as);
  t.equal((await writeEntries(sandbox, reviewed.as, reviewId, await businessEntries('Review Works LLC'))).statusCode, 200);
  t.equal((await submit(sandbox, reviewed.as, reviewId)).statusCode, 200);
  await advance(sandbox, 0);
  t.equal(json(await getDetail(sandbox, reviewed.as, reviewId)).status, 'PENDING_REVIEW');
  t.match(expectStatus(await cancel(reviewId), 200), { status: 'CANCELED', decision: null });
  await advance(sandbox, 60_000);
  t.match(json(await getDetail(sandbox, reviewed.as, reviewId)), { status: 'CANCELED', decision: null }, 'the due review skipped it');
  t.match(expectStatus(await sandbox.request('GET', '/v1/enrollment', undefined, reviewed.as), 200), { status: 'INACTIVE', reason: null });

  // PROCESSING_SUBMISSION
  const processing = await createUser(sandbox, 'BUSINESS', 'Processing Co LLC');
  const processingId = await startEnrollment(sandbox, processing.as);
  await writeEntries(sandbox, processing.as, processingId, await businessEntries('Processing Co LLC'));
  t.equal(json(await submit(sandbox, processing.as, processingId)).status, 'PROCESSING_SUBMISSION');
  t.equal(expectStatus(await cancel(processingId), 200).status, 'CANCELED');
  await advance(sandbox, 60_000);
  t.equal(json(await getDetail(sandbox, processing.as, processingId)).status, 'CANCELED');

  // COMPLETED (a fixture user's approved request)
  const done = await sandbox.request('GET', '/v1/enrollment', undefined, AS_JANE);
  const completedId = json(done).informationRequest.id as string;
  const refused = await cancel(completedId);
  t.equal(refused.statusCode, 409);
  t.match(json(refused).message, /COMPLETED \(decision APPROVED\)/);
  const unknown = await cancel('ir_nope');
  t.equal(unknown.statusCode, 404);
  t.equal(json(unknown).errorCode, 'NOT_FOUND');
});

t.test('entitlements: a read-only key reads, and gets 403 "API key lacks entitlement" on writes', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  t.equal((await sandbox.request('GET', '/v1/accounts', undefined, READ_ONLY)).statusCode, 200);
  t.equal((await sandbox.request('GET', '/v1/transactions', undefined, READ_ONLY)).statusCode, 200);
  t.equal((await sandbox.request('GET', '/v1/beneficiaries', undefined, READ_ONLY)).statusCode, 200);
  const writes: Array<[string, string, unknown, string]> = [
    ['POST', '/v1/accounts/acct_acme_usd/deposit-instructions', { name: 'x', idempotencyKey: 'k' }, 'accounts:write'],
    ['POST', '/v1/beneficiaries', { type: 'PERSON', firstName: 'A', lastName: 'B', instruments: [] }, 'beneficiaries:write'],
    ['POST', '/v1/transaction-intents', { idempotencyKey: 'k' }, 'transactions:write'],
    ['POST', '/v1/enrollment/activate', undefined, 'enrollment:write'],
  ];
  for (const [method, url, body, scope] of writes) {
    const response = await sandbox.request(method, url, body, READ_ONLY);
    t.equal(response.statusCode, 403, `${url}: ${response.body}`);
    t.equal(json(response).errorCode, 'FORBIDDEN');
    t.match(json(response).message, new RegExp(`^API key lacks entitlement: this endpoint needs ${scope}`));
  }
  t.equal((await sandbox.request('POST', '/v1/transaction-intents', { idempotencyKey: 'k' })).statusCode, 400, 'the full key reaches validation');

  // A token minted with the key holds only its entitlements; asking for more is the same 403.
  const token = expectStatus(await sandbox.request('POST', '/v1/auth/token', undefined, READ_ONLY), 200);
  t.same(token.scopes, ['accounts:read', 'transactions:read', 'enrollment:read', 'beneficiaries:read', 'statements:read']);
  t.equal((await sandbox.request('GET', '/v1/accounts', undefined, { bearer: token.accessToken })).statusCode, 200);
  const viaToken = await sandbox.request('POST', '/v1/accounts/acct_acme_usd/deposit-instructions', { name: 'x', idempotencyKey: 'k' }, { bearer: token.accessToken });
  t.equal(viaToken.statusCode, 403);
  const wider = await sandbox.request('POST', '/v1/auth/token', { scopes: ['accounts:read', 'accounts:write'] }, READ_ONLY);
  t.equal(wider.statusCode, 403);
  t.match(json(wider), { errorCode: 'FORBIDDEN', message: /^API key lacks entitlement: accounts:write/ });
  const narrower = expectStatus(await sandbox.request('POST', '/v1/auth/token', { scopes: ['statements:read'] }, READ_ONLY), 200);
  t.same(narrower.scopes, ['statements:read']);
});

t.test('MissingPathParameter: an empty path segment where an id goes', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const cases: Array<[string, string, unknown, string]> = [
    ['GET', '/v1/accounts//statement?startDate=2026-02-01&endDate=2026-02-02', undefined, 'accountId'],
    ['POST', '/v1/transaction-intents//commit', { idempotencyKey: 'k' }, 'transactionIntentId'],
    ['GET', '/v1/beneficiaries//instruments', undefined, 'beneficiaryId'],
    ['POST', '/v1/accounts//deposit-instructions', { name: 'x', idempotencyKey: 'k' }, 'accountId'],
  ];
  for (const [method, url, body, fieldRef] of cases) {
    const response = await sandbox.request(method, url, body);
    t.equal(response.statusCode, 400, url);
    t.match(json(response).validationErrors, [{ type: 'MissingPathParameter', fieldRef, message: new RegExp(`^${fieldRef} is required`) }], url);
  }
  const control = await sandbox.app.inject({ method: 'POST', url: '/_emulator/transactions//return', payload: { reasonCode: 'R01' } });
  t.match(json(control).validationErrors, [{ type: 'MissingPathParameter', fieldRef: 'transactionId' }], 'the control plane too');
  // A path parameter that is present but too long is still InvalidValue, not missing.
  const long = await sandbox.request('GET', `/v1/beneficiaries/${'b'.repeat(200)}/instruments`);
  t.equal(long.statusCode, 400);
  t.notMatch(json(long).validationErrors, [{ type: 'MissingPathParameter' }]);
});

t.test('UnexpectedVerificationError: the magic account number 9999999999 fails the downstream verification', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const beneficiary = (accountNumber: string, routingNumber = '021000021') => ({
    type: 'BUSINESS',
    businessName: 'Verify Me Inc',
    instruments: [
      { type: 'WALLET', network: 'ETHEREUM', address: '0x742d35cc6634c0532925a3b844bc454e4438f44e', currency: 'USDC' },
      { type: 'BANK_ACCOUNT', currency: 'USD', country: 'US', accountHolderName: 'Verify Me Inc', accountNumber, routingNumber },
    ],
  });
  const before = (await sandbox.request('GET', '/v1/beneficiaries')).body;
  const failed = await sandbox.request('POST', '/v1/beneficiaries', beneficiary('9999999999'));
  t.equal(failed.statusCode, 400);
  t.match(json(failed).validationErrors, [{ type: 'UnexpectedVerificationError', fieldRef: 'instruments.1.accountNumber', message: /could not be verified/ }]);
  t.equal(json(failed).validationErrors.length, 1);
  t.equal((await sandbox.request('GET', '/v1/beneficiaries')).body, before, 'nothing was created');
  // Local checks come first: a bad routing number is reported as such, not as a verification failure.
  const local = await sandbox.request('POST', '/v1/beneficiaries', beneficiary('9999999999', '123456789'));
  t.match(json(local).validationErrors, [{ type: 'InvalidValue', fieldRef: 'instruments.1.routingNumber' }]);
  t.notMatch(json(local).validationErrors, [{ type: 'UnexpectedVerificationError' }]);
  t.equal((await sandbox.request('POST', '/v1/beneficiaries', beneficiary('99999999990'))).statusCode, 201, 'only the exact value fails');
});

t.test('one account lookup: every control-plane route that names an account takes a top-level account, never a sub-balance', async (t) => {
  // docs/decisions.md#control-plane-accounts: a network sub-balance is a 404 as an unknown id is, as on /v1
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const routes: Array<{ name: string; send: (accountId: string) => Promise<LightMyRequestResponse>; ok: number }> = [
    { name: 'provider-ready', send: (id) => providerReady(sandbox, id, { ready: true }), ok: 200 },
    {
      name: 'transaction injection',
      send: (id) => sandbox.app.inject({ method: 'POST', url: `/_emulator/accounts/${id}/transactions`, payload: { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '1.00' } }),
      ok: 201,
    },
    { name: 'balance history', send: (id) => sandbox.app.inject({ method: 'GET', url: `/_emulator/accounts/${id}/balance-history` }), ok: 200 },
  ];
  for (const route of routes) {
    t.equal((await route.send('acct_acme_usd')).statusCode, route.ok, `${route.name}: a top-level account`);
    const subBalance = await route.send('acct_acme_usdc_ethereum');
    t.equal(subBalance.statusCode, 404, `${route.name}: a sub-balance is not an account of the API`);
    t.equal(json(subBalance).message, 'Account acct_acme_usdc_ethereum not found', `${route.name}: said as for an unknown id`);
    t.equal(json(await route.send('acct_nope')).message, 'Account acct_nope not found', `${route.name}: an unknown id`);
  }
});

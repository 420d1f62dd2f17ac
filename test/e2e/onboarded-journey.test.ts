import t from 'tap';
import { advance, buildTestApp, json, START } from '../helper.js';
import { createUser, personEntries, startEnrollment, submit, writeEntries } from '../helpers/onboarding.js';

// The whole journey of a user created through the API (docs/onboarding.md#accounts-of-onboarded-users):
// create, onboard, receive the programme's account, wait for its deposit-instruction provider, receive a
// deposit, pay a beneficiary, refund part of the deposit, read the statement. Everything over HTTP.

t.test('a user created with POST /v1/auth/users onboards, receives money, pays out, refunds and reads a statement', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const { userId, as } = await createUser(sandbox, 'PERSON', 'Nora Journey', 'nora-journey');

  // before activation: no account, and moving money is refused
  t.equal(json(await sandbox.request('GET', '/v1/accounts', undefined, as)).totalRecords, 0, 'no account before onboarding');

  // onboarding
  const requestId = await startEnrollment(sandbox, as);
  const written = await writeEntries(sandbox, as, requestId, await personEntries('Nora Journey'));
  t.equal(written.statusCode, 200, written.body);
  const submitted = await submit(sandbox, as, requestId);
  t.equal(submitted.statusCode, 200, submitted.body);
  t.equal(json(await sandbox.request('GET', '/v1/accounts', undefined, as)).totalRecords, 0, 'no account while under review');
  await advance(sandbox, 5_000);
  const enrollment = json(await sandbox.request('GET', '/v1/enrollment', undefined, as));
  t.equal(enrollment.status, 'ACTIVE', 'approved by the review');
  const activatedAtMs = Date.parse(START) + 5_000;

  // the programme's PERSON template: one USD account, provider not ready yet
  const accounts = json(await sandbox.request('GET', '/v1/accounts', undefined, as));
  t.equal(accounts.totalRecords, 1, 'one account from the PERSON template');
  const account = accounts.data[0];
  t.match(account, { id: /^acct_/, currency: 'USD', status: 'ACTIVE', displayName: 'USD account', depositReconciliationId: /^RECON-/ });
  const accountUrl = `/v1/accounts/${account.id}`;
  let detail = json(await sandbox.request('GET', accountUrl, undefined, as));
  t.same(detail.depositInstructions, [], 'no instruction before the provider is ready');
  t.same(detail.balances, { current: '0.00', available: '0.00' });
  const early = await sandbox.request('POST', `${accountUrl}/deposit-instructions`, { name: 'Extra', idempotencyKey: 'di-early' }, as);
  t.equal(early.statusCode, 409, 'interface 3.1: no ready provider while onboarding');
  t.match(json(early).message, /provider/);

  await advance(sandbox, 1_999);
  t.equal((await sandbox.request('POST', `${accountUrl}/deposit-instructions`, { name: 'Extra', idempotencyKey: 'di-early' }, as)).statusCode, 409, 'still 409 1 ms before');
  await advance(sandbox, 1);
  detail = json(await sandbox.request('GET', accountUrl, undefined, as));
  t.equal(detail.depositInstructions.length, 1, 'the template ACH instruction is issued when the provider is ready');
  const ach = detail.depositInstructions[0];
  t.match(ach, { id: /^di_/, status: 'ACTIVE', rail: { type: 'US.USD.ACH' }, createdAt: new Date(activatedAtMs + 2_000).toISOString() });
  const field = (key: string) => ach.fields.find((f: { key: string }) => f.key === key)?.value;
  t.match(field('routingNumber'), /^\d{9}$/);
  t.match(field('accountNumber'), /^40\d{10}$/);
  t.equal(field('accountHolderName'), 'Nora Journey');

  const extra = await sandbox.request('POST', `${accountUrl}/deposit-instructions`, { name: 'Extra', idempotencyKey: 'di-extra' }, as);
  t.equal(extra.statusCode, 202, extra.body);
  await advance(sandbox, 2_000);
  t.equal(json(await sandbox.request('GET', accountUrl, undefined, as)).depositInstructions.length, 2, 'a requested instruction is provisioned too');

  // receive a deposit
  const deposited = await sandbox.request('POST', `/v1/sandbox/accounts/${account.id}/deposits`, { amount: '500.00', depositInstructionId: ach.id, counterpartyName: 'Acme Payroll' }, as);
  t.equal(deposited.statusCode, 202, deposited.body);
  await advance(sandbox, 1_000);
  const deposits = json(await sandbox.request('GET', `/v1/transactions?accountId=${account.id}&type=DEPOSIT`, undefined, as));
  t.equal(deposits.totalRecords, 1);
  const deposit = deposits.data[0];
  t.match(deposit, { type: 'DEPOSIT', status: 'COMPLETED', creditAmount: '500.00', debitParty: { partyType: 'PAYER', payer: { displayName: 'Acme Payroll' } } });
  t.same(json(await sandbox.request('GET', accountUrl, undefined, as)).balances, { current: '500.00', available: '500.00' });

  // pay a beneficiary
  const beneficiary = await sandbox.request('POST', '/v1/beneficiaries', {
    type: 'BUSINESS',
    businessName: 'Corner Bakery LLC',
    relationshipToUser: 'THIRD_PARTY',
    instruments: [{ type: 'BANK_ACCOUNT', currency: 'USD', country: 'US', accountHolderName: 'Corner Bakery LLC', accountNumber: '987654321012', routingNumber: '021000021' }],
  }, as);
  t.equal(beneficiary.statusCode, 201, beneficiary.body);
  const { id: beneficiaryId, instruments } = json(beneficiary);
  const intent = await sandbox.request('POST', '/v1/transaction-intents', {
    idempotencyKey: 'journey-payout',
    debitAccountId: account.id,
    credit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId, instrumentId: instruments[0].id },
    creditAmount: '100.00',
    purpose: 'PAYMENT_FOR_SERVICES',
  }, as);
  t.equal(intent.statusCode, 201, intent.body);
  t.match(json(intent), { type: 'WITHDRAWAL', debitAmount: '100.50', fees: [{ amount: '0.50' }] });
  const committed = json(await sandbox.request('POST', `/v1/transaction-intents/${json(intent).id}/commit`, { idempotencyKey: 'journey-payout' }, as));
  t.equal(committed.status, 'COMMITTED');
  t.same(json(await sandbox.request('GET', accountUrl, undefined, as)).balances, { current: '500.00', available: '399.50' }, 'the payout is held at creation');
  await advance(sandbox, 4_000);
  t.equal(json(await sandbox.request('GET', `/v1/transactions/${committed.relatedTransactionId}`, undefined, as)).status, 'COMPLETED');

  // refund part of the deposit to its payer
  const refundIntent = await sandbox.request('POST', '/v1/transaction-intents', { idempotencyKey: 'journey-refund', debitAccountId: account.id, refundOf: deposit.id, debitAmount: '50.00' }, as);
  t.equal(refundIntent.statusCode, 201, refundIntent.body);
  t.match(json(refundIntent), { type: 'PARTIAL_REFUND', debitAmount: '50.00', creditAmount: '50.00', fees: [], creditRail: 'ACH' });
  const refundCommitted = json(await sandbox.request('POST', `/v1/transaction-intents/${json(refundIntent).id}/commit`, { idempotencyKey: 'journey-refund' }, as));
  t.equal(refundCommitted.status, 'COMMITTED');
  await advance(sandbox, 4_000);
  const refund = json(await sandbox.request('GET', `/v1/transactions/${refundCommitted.relatedTransactionId}`, undefined, as));
  t.match(refund, { type: 'PARTIAL_REFUND', status: 'COMPLETED', relatedTransactionId: deposit.id, creditRail: 'US.USD.ACH', creditParty: { partyType: 'PAYER', payer: { displayName: 'Acme Payroll' } } });
  t.same(json(await sandbox.request('GET', accountUrl, undefined, as)).balances, { current: '349.50', available: '349.50' }, '500 - 100.50 - 50');

  // the statement shows it all
  const day = START.slice(0, 10);
  const statementResponse = await sandbox.request('GET', `${accountUrl}/statement?startDate=${day}&endDate=${day}`, undefined, as);
  t.equal(statementResponse.statusCode, 200, statementResponse.body);
  const statement = json(statementResponse);
  t.match(statement, { accountId: account.id, holderName: 'Nora Journey', openingBalance: '0.00', totalCredits: '500.00', totalDebits: '150.50', closingBalance: '349.50' });
  const entries = statement.days.flatMap((d: { entries: unknown[] }) => d.entries) as Array<{ direction: string; amount: string; isFee: boolean; reference: string }>;
  t.same(
    entries.map((entry) => [entry.direction, entry.amount, entry.isFee]),
    [
      ['CREDIT', '500.00', false],
      ['DEBIT', '100.00', false],
      ['DEBIT', '0.50', true],
      ['DEBIT', '50.00', false],
    ],
    'deposit, payout and its fee, refund',
  );
  t.equal(entries[3]!.reference, refund.referenceNumber);
  t.equal(statement.depositInstructions.length, 2);

  // the user is listed as ACTIVE, with its id
  const users = json(await sandbox.request('GET', '/v1/users', undefined, { apiKey: 'pk_sandbox_multi', secret: 'sk_sandbox_multi_secret' }));
  t.ok(users.data.some((user: { id?: string; userId?: string; enrollmentStatus: string }) => (user.id ?? user.userId) === userId && user.enrollmentStatus === 'ACTIVE'));
});

import t, { type Test } from 'tap';
import { advance, AS_JANE, AS_OTHER, buildTestApp, json, type Identity, type TestApp } from '../../helper.js';

// The intent flows of docs/money-out.md#intent-flows over HTTP: transfers to another user of the
// programme (P2P), refunds of a deposit (REFUND / PARTIAL_REFUND) and direct debits from the user's own
// bank account (DEPOSIT / DIRECT_DEBIT): success, each refusal, idempotent retries, concurrent commits,
// webhooks (outbox events) and balances.


async function createIntent(sandbox: TestApp, body: Record<string, unknown>, as?: Identity) {
  return sandbox.request('POST', '/v1/transaction-intents', body, as);
}

async function commit(sandbox: TestApp, intentId: string, idempotencyKey: string, as?: Identity) {
  const response = await sandbox.request('POST', `/v1/transaction-intents/${intentId}/commit`, { idempotencyKey }, as);
  if (response.statusCode !== 200) throw new Error(`commit failed: ${response.statusCode} ${response.body}`);
  return json(response);
}

async function transaction(sandbox: TestApp, id: string, as?: Identity) {
  const response = await sandbox.request('GET', `/v1/transactions/${id}`, undefined, as);
  if (response.statusCode !== 200) throw new Error(`transaction read failed: ${response.statusCode} ${response.body}`);
  return json(response);
}

async function balances(sandbox: TestApp, accountId: string, as?: Identity): Promise<{ current: string; available: string }> {
  return json(await sandbox.request('GET', `/v1/accounts/${accountId}`, undefined, as)).balances;
}

/** Events written to the outbox for a transaction, in order (each one is a webhook delivery). */
function events(sandbox: TestApp, transactionId: string): Array<{ user: string; type: string; status: string }> {
  return (
    sandbox.ctx.db.prepare('SELECT user_id, event_type, payload FROM outbox WHERE resource_id = ? ORDER BY seq').all(transactionId) as Array<{
      user_id: string;
      event_type: string;
      payload: string;
    }>
  ).map((row) => ({ user: row.user_id, type: row.event_type, status: (JSON.parse(row.payload) as { status: string }).status }));
}

function fieldError(t: Test, response: { statusCode: number; body: string }, status: number, type: string, fieldRef: string, name: string) {
  t.equal(response.statusCode, status, `${name}: ${response.body}`);
  const body = JSON.parse(response.body) as { validationErrors?: Array<{ type: string; fieldRef: string }> };
  t.ok(body.validationErrors?.some((error) => error.type === type && error.fieldRef === fieldRef), `${name}: ${type} on ${fieldRef}`);
}

function transactionCount(sandbox: TestApp): number {
  return sandbox.ctx.db.prepare('SELECT COUNT(*) FROM transactions').pluck().get() as number;
}

async function simulateDeposit(sandbox: TestApp, amount: string, as: Identity = AS_JANE, counterpartyName = 'Initech Payroll'): Promise<string> {
  const before = new Set((sandbox.ctx.db.prepare("SELECT id FROM transactions WHERE type = 'DEPOSIT'").pluck().all() as string[]));
  const response = await sandbox.request('POST', '/v1/sandbox/accounts/acct_jane_usd/deposits', { amount, depositInstructionId: 'di_jane_usd_ach', counterpartyName }, as);
  if (response.statusCode !== 202) throw new Error(`deposit failed: ${response.statusCode} ${response.body}`);
  const ids = (sandbox.ctx.db.prepare("SELECT id FROM transactions WHERE type = 'DEPOSIT'").pluck().all() as string[]).filter((id) => !before.has(id));
  return ids[0]!;
}

// ---- P2P ----

t.test('P2P: a transfer to another user of the programme, credited to that user when it completes', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const acmeBefore = await balances(sandbox, 'acct_acme_usd');
  const janeBefore = await balances(sandbox, 'acct_jane_usd', AS_JANE);

  const body = { idempotencyKey: 'p2p-1', debitAccountId: 'acct_acme_usd', credit: { instrumentType: 'ACCOUNT', accountId: 'acct_jane_usd' }, creditAmount: '125.00', debitMemo: 'Lunch' };
  const created = await createIntent(sandbox, body);
  t.equal(created.statusCode, 201, created.body);
  const intent = json(created);
  t.match(intent, {
    type: 'TRANSFER',
    status: 'CREATED',
    debitAmount: '125.00',
    creditAmount: '125.00',
    fees: [],
    creditRail: null,
    creditInstrument: { instrumentType: 'ACCOUNT', account: { id: 'acct_jane_usd', currency: 'USD' } },
  });
  const retry = await createIntent(sandbox, body);
  t.equal(retry.statusCode, 200, 'same key, same body: 200');
  t.equal(json(retry).id, intent.id);
  t.equal((await createIntent(sandbox, { ...body, creditAmount: '126.00' })).statusCode, 409, 'same key, another body: 409');

  const committed = await commit(sandbox, intent.id, 'p2p-1');
  t.equal(committed.status, 'COMMITTED');
  const sent = await transaction(sandbox, committed.relatedTransactionId);
  t.match(sent, {
    type: 'TRANSFER',
    category: 'P2P',
    status: 'PENDING',
    debitAmount: '125.00',
    creditParty: { partyType: 'BENEFICIARY', beneficiary: { beneficiaryType: 'PERSON', person: { id: 'usr_jane', name: 'Jane Doe' } } },
    creditInstrument: { instrumentType: 'ACCOUNT', account: { id: 'acct_jane_usd' } },
    debitMemo: 'Lunch',
  });
  t.equal((await balances(sandbox, 'acct_acme_usd')).available, (Number(acmeBefore.available) - 125).toFixed(2), 'held at creation');
  t.same(await balances(sandbox, 'acct_jane_usd', AS_JANE), janeBefore, 'nothing credited while in flight');
  t.equal((await sandbox.request('GET', `/v1/transactions/${sent.id}`, undefined, AS_JANE)).statusCode, 403, 'the sender\'s transaction stays the sender\'s');

  await advance(sandbox, 4_000);
  t.equal((await transaction(sandbox, sent.id)).status, 'COMPLETED');
  const janeList = json(await sandbox.request('GET', '/v1/transactions?accountId=acct_jane_usd&type=TRANSFER', undefined, AS_JANE));
  t.equal(janeList.totalRecords, 1, 'the receiver sees one transfer');
  const received = janeList.data[0];
  t.match(received, {
    type: 'TRANSFER',
    category: 'P2P',
    status: 'COMPLETED',
    creditAmount: '125.00',
    relatedTransactionId: sent.id,
    debitParty: { partyType: 'PAYER', payer: { displayName: 'Acme Robotics LLC' } },
    creditParty: null,
    creditInstrument: { instrumentType: 'ACCOUNT', account: { id: 'acct_jane_usd' } },
  });
  t.same(await balances(sandbox, 'acct_jane_usd', AS_JANE), {
    current: (Number(janeBefore.current) + 125).toFixed(2),
    available: (Number(janeBefore.available) + 125).toFixed(2),
  }, 'the receiver is credited');
  t.same(await balances(sandbox, 'acct_acme_usd'), {
    current: (Number(acmeBefore.current) - 125).toFixed(2),
    available: (Number(acmeBefore.available) - 125).toFixed(2),
  });
  t.same(events(sandbox, sent.id), [
    { user: 'usr_acme', type: 'transaction_created', status: 'PENDING' },
    { user: 'usr_acme', type: 'transaction_status_updated', status: 'PROCESSING' },
    { user: 'usr_acme', type: 'transaction_status_updated', status: 'COMPLETED' },
  ]);
  t.same(events(sandbox, received.id), [
    { user: 'usr_jane', type: 'transaction_created', status: 'PENDING' },
    { user: 'usr_jane', type: 'transaction_status_updated', status: 'COMPLETED' },
  ], 'the receiver\'s webhooks name the receiving user');
});

t.test('P2P refusals and a rejected transfer', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const base = { debitAccountId: 'acct_acme_usd', creditAmount: '10.00' };
  const otherProgramme = await createIntent(sandbox, { ...base, idempotencyKey: 'x1', credit: { instrumentType: 'ACCOUNT', accountId: 'acct_other_usd' } });
  t.equal(otherProgramme.statusCode, 404, 'another programme\'s account is not found');
  const subBalance = await createIntent(sandbox, { ...base, idempotencyKey: 'x2', credit: { instrumentType: 'ACCOUNT', accountId: 'acct_nope' } });
  t.equal(subBalance.statusCode, 404);
  fieldError(t, await createIntent(sandbox, { ...base, idempotencyKey: 'x3', credit: { instrumentType: 'ACCOUNT', accountId: 'acct_jane_usd' }, creditRail: 'ACH' }), 400, 'InvalidValue', 'creditRail', 'rail on a P2P transfer');
  t.equal((await createIntent(sandbox, { ...base, idempotencyKey: 'x4', credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_usd' } }, AS_OTHER)).statusCode, 404, 'seen from another programme');

  // .91 cents: rejected at processing, the hold released, nobody credited
  const janeBefore = await balances(sandbox, 'acct_jane_usd', AS_JANE);
  const acmeBefore = await balances(sandbox, 'acct_acme_usd');
  const intent = json(await createIntent(sandbox, { ...base, idempotencyKey: 'x5', creditAmount: '10.91', credit: { instrumentType: 'ACCOUNT', accountId: 'acct_jane_usd' } }));
  const committed = await commit(sandbox, intent.id, 'x5');
  await advance(sandbox, 4_000);
  t.match(await transaction(sandbox, committed.relatedTransactionId), { status: 'FAILED', statusCode: 'RAIL_REJECTED', category: 'P2P' });
  t.same(await balances(sandbox, 'acct_acme_usd'), acmeBefore, 'hold released');
  t.same(await balances(sandbox, 'acct_jane_usd', AS_JANE), janeBefore, 'nothing credited');
  t.equal(json(await sandbox.request('GET', '/v1/transactions?accountId=acct_jane_usd&type=TRANSFER', undefined, AS_JANE)).totalRecords, 0);
});

t.test('P2P: 50 concurrent commits create one transfer and one credit', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const intent = json(await createIntent(sandbox, { idempotencyKey: 'p2p-c', debitAccountId: 'acct_acme_usd', credit: { instrumentType: 'ACCOUNT', accountId: 'acct_jane_usd' }, creditAmount: '5.00' }));
  const results = await Promise.all(Array.from({ length: 50 }, () => commit(sandbox, intent.id, 'p2p-c')));
  t.equal(new Set(results.map((result) => result.relatedTransactionId)).size, 1);
  await advance(sandbox, 4_000);
  t.equal(sandbox.ctx.db.prepare("SELECT COUNT(*) FROM transactions WHERE category = 'P2P'").pluck().get(), 2, 'one sent, one received');
});

// ---- refunds ----

t.test('refunds: partial, then the rest; never more than the deposit, in-flight refunds counted', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const depositId = await simulateDeposit(sandbox, '200.00');
  const refund = (key: string, extra: Record<string, unknown> = {}) => createIntent(sandbox, { idempotencyKey: key, debitAccountId: 'acct_jane_usd', refundOf: depositId, ...extra }, AS_JANE);

  fieldError(t, await refund('r0'), 400, 'InvalidValue', 'refundOf', 'a PENDING deposit');
  await advance(sandbox, 1_000);
  const before = await balances(sandbox, 'acct_jane_usd', AS_JANE);

  const first = await refund('r1', { debitAmount: '80.00', debitMemo: 'Overpaid' });
  t.equal(first.statusCode, 201, first.body);
  t.match(json(first), {
    type: 'PARTIAL_REFUND',
    debitAmount: '80.00',
    creditAmount: '80.00',
    fees: [],
    creditRail: 'ACH',
    debitInstrument: { instrumentType: 'ACCOUNT', account: { id: 'acct_jane_usd' } },
  });
  // contract section 14, interface 2.3: never null; a simulated deposit names only its payer, so the payer's bank
  // account is made from the deposit (docs/decisions.md#refund-party)
  const payerAccount = { instrumentType: 'BANK_ACCOUNT', bankAccount: { id: depositId, displayName: 'Initech Payroll', currency: 'USD', mask: depositId.slice(-4) } };
  t.same(json(first).creditInstrument, payerAccount);
  t.equal((await refund('r1', { debitAmount: '80.00', debitMemo: 'Overpaid' })).statusCode, 200, 'idempotent retry');
  t.equal((await refund('r1', { debitAmount: '81.00' })).statusCode, 409, 'same key, another body');
  const committed = await commit(sandbox, json(first).id, 'r1', AS_JANE);
  const partial = await transaction(sandbox, committed.relatedTransactionId, AS_JANE);
  t.match(partial, {
    type: 'PARTIAL_REFUND',
    status: 'PENDING',
    relatedTransactionId: depositId,
    debitAmount: '80.00',
    creditRail: 'US.USD.ACH',
    creditParty: { partyType: 'PAYER', payer: { displayName: 'Initech Payroll' } },
    fees: [],
  });
  t.same(partial.creditInstrument, payerAccount, 'the transaction carries the intent\'s instrument');
  t.equal((await balances(sandbox, 'acct_jane_usd', AS_JANE)).available, (Number(before.available) - 80).toFixed(2), 'held at creation');

  fieldError(t, await refund('r2', { debitAmount: '120.01' }), 400, 'InvalidValue', 'debitAmount', 'more than what is left, the in-flight refund counted');
  const rest = await refund('r3');
  t.equal(rest.statusCode, 201, rest.body);
  t.match(json(rest), { type: 'PARTIAL_REFUND', debitAmount: '120.00' }, 'default: what is still refundable');
  await commit(sandbox, json(rest).id, 'r3', AS_JANE);
  fieldError(t, await refund('r4'), 400, 'InvalidValue', 'refundOf', 'fully refunded');

  await advance(sandbox, 4_000);
  t.equal((await transaction(sandbox, partial.id, AS_JANE)).status, 'COMPLETED');
  t.same(await balances(sandbox, 'acct_jane_usd', AS_JANE), { current: (Number(before.current) - 200).toFixed(2), available: (Number(before.available) - 200).toFixed(2) });
  t.same(events(sandbox, partial.id).map((event) => event.status), ['PENDING', 'PROCESSING', 'COMPLETED'], 'transaction_created then status updates');
});

t.test('refunds: the whole deposit is a REFUND; a rejected refund frees the amount again', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const whole = await createIntent(sandbox, { idempotencyKey: 'w1', debitAccountId: 'acct_jane_usd', refundOf: 'txn_hist_jane_008' }, AS_JANE);
  t.equal(whole.statusCode, 201, whole.body);
  t.match(json(whole), { type: 'REFUND', debitAmount: '3200.00' }, 'a fixture-history deposit, refunded whole');
  t.match(json(whole).creditInstrument, { instrumentType: 'BANK_ACCOUNT', bankAccount: { id: 'txn_hist_jane_008', currency: 'USD', mask: '7781', displayName: 'Initech Payroll' } }, 'the payer\'s masked number');
  // a refund intent stored without an instrument (an earlier version) gets it when read
  sandbox.ctx.db.prepare('UPDATE transaction_intents SET credit_instrument = NULL WHERE id = ?').run(json(whole).id);
  const reread = await sandbox.request('GET', `/v1/transaction-intents/${json(whole).id}`, undefined, AS_JANE);
  t.same(json(reread).creditInstrument, json(whole).creditInstrument, 'filled on read');
  const explicit = await createIntent(sandbox, { idempotencyKey: 'w2', debitAccountId: 'acct_jane_usd', refundOf: 'txn_hist_jane_006', debitAmount: '3200.00' }, AS_JANE);
  t.match(json(explicit), { type: 'REFUND' }, 'the whole amount written out is a REFUND too');

  const depositId = await simulateDeposit(sandbox, '50.00');
  await advance(sandbox, 1_000);
  const before = await balances(sandbox, 'acct_jane_usd', AS_JANE);
  const rejected = json(await createIntent(sandbox, { idempotencyKey: 'w3', debitAccountId: 'acct_jane_usd', refundOf: depositId, debitAmount: '10.91' }, AS_JANE));
  const committed = await commit(sandbox, rejected.id, 'w3', AS_JANE);
  await advance(sandbox, 4_000);
  t.match(await transaction(sandbox, committed.relatedTransactionId, AS_JANE), { type: 'PARTIAL_REFUND', status: 'FAILED', statusCode: 'RAIL_REJECTED' });
  t.same(await balances(sandbox, 'acct_jane_usd', AS_JANE), before, 'the reversal released the hold');
  const again = await createIntent(sandbox, { idempotencyKey: 'w4', debitAccountId: 'acct_jane_usd', refundOf: depositId }, AS_JANE);
  t.match(json(again), { type: 'REFUND', debitAmount: '50.00' }, 'a failed refund does not count');
});

t.test('refunds: two intents priced against the same remainder; the second commit fails', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const depositId = await simulateDeposit(sandbox, '100.00');
  await advance(sandbox, 1_000);
  const a = json(await createIntent(sandbox, { idempotencyKey: 'a', debitAccountId: 'acct_jane_usd', refundOf: depositId, debitAmount: '60.00' }, AS_JANE));
  const b = json(await createIntent(sandbox, { idempotencyKey: 'b', debitAccountId: 'acct_jane_usd', refundOf: depositId, debitAmount: '60.00' }, AS_JANE));
  t.equal((await commit(sandbox, a.id, 'a', AS_JANE)).status, 'COMMITTED');
  const second = await commit(sandbox, b.id, 'b', AS_JANE);
  t.equal(second.status, 'FAILED');
  t.match(second.statusReason, /still refundable.*40\.00 USD/);
  t.notOk(second.relatedTransactionId, 'no transaction');

  // 50 concurrent commits of one refund intent: one transaction
  const c = json(await createIntent(sandbox, { idempotencyKey: 'c', debitAccountId: 'acct_jane_usd', refundOf: depositId }, AS_JANE));
  const count = transactionCount(sandbox);
  const results = await Promise.all(Array.from({ length: 50 }, () => commit(sandbox, c.id, 'c', AS_JANE)));
  t.equal(new Set(results.map((result) => result.relatedTransactionId)).size, 1);
  t.equal(transactionCount(sandbox), count + 1, 'exactly one refund transaction');
});

t.test('refunds: a stablecoin deposit goes back on its network, 1:1, and the statement names the payer', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const response = await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usdc/deposits', { amount: '75.000000', depositInstructionId: 'di_acme_usdc_eth', counterpartyName: 'Chain Payer' });
  t.equal(response.statusCode, 202, response.body);
  await advance(sandbox, 2_000);
  const deposit = json(await sandbox.request('GET', '/v1/transactions?accountId=acct_acme_usdc&type=DEPOSIT&status=COMPLETED')).data[0];
  t.match(deposit, { debitCurrency: 'USDC_ETH', debitRail: 'ETHEREUM.USDC' });
  const intent = await createIntent(sandbox, { idempotencyKey: 's1', debitAccountId: 'acct_acme_usdc', refundOf: deposit.id, debitAmount: '25.000000' });
  t.equal(intent.statusCode, 201, intent.body);
  t.match(json(intent), { type: 'PARTIAL_REFUND', debitCurrency: 'USDC', creditCurrency: 'USDC_ETH', creditAmount: '25.000000', creditRail: 'ETHEREUM', exchangeRate: '1' });
  const committed = await commit(sandbox, json(intent).id, 's1');
  await advance(sandbox, 4_000);
  const refund = await transaction(sandbox, committed.relatedTransactionId);
  t.match(refund, { status: 'COMPLETED', creditRail: 'ETHEREUM.USDC', creditParty: { partyType: 'PAYER', payer: { displayName: 'Chain Payer' } } });
  const wallet = { instrumentType: 'EXTERNAL_WALLET', externalWallet: { id: deposit.id, displayName: 'Chain Payer', currency: 'USDC_ETH', network: 'ETHEREUM', address: deposit.debitParty.payer.walletAddress } };
  t.match(deposit.debitParty.payer.walletAddress, /^0x[0-9a-f]{40}$/);
  t.same(json(intent).creditInstrument, wallet, 'the payer\'s wallet, on the deposit\'s network');
  t.same(refund.creditInstrument, wallet);
  const day = '2026-03-01';
  const statement = json(await sandbox.request('GET', `/v1/accounts/acct_acme_usdc/statement?startDate=${day}&endDate=${day}`));
  const entry = statement.days.flatMap((d: { entries: Array<{ reference: string }> }) => d.entries).find((e: { reference: string }) => e.reference === refund.referenceNumber);
  t.match(entry, { direction: 'DEBIT', amount: '25.000000', description: /Partial refund to Chain Payer/ });
});

t.test('refund refusals', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const base = { debitAccountId: 'acct_jane_usd', refundOf: 'txn_hist_jane_008' };
  const cases: Array<[string, Record<string, unknown>, number, string | null, string | null, Identity | undefined]> = [
    ['not a deposit', { refundOf: 'txn_hist_jane_007' }, 400, 'InvalidValue', 'refundOf', AS_JANE],
    ['another account\'s deposit', { refundOf: 'txn_hist_acme_usd_001' }, 400, 'InvalidValue', 'refundOf', AS_JANE],
    ['unknown transaction', { refundOf: 'txn_nope' }, 404, 'NotFound', 'refundOf', AS_JANE],
    ['both credit and refundOf', { credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_usd' } }, 400, 'InvalidValue', 'refundOf', AS_JANE],
    ['neither credit nor refundOf', { refundOf: undefined }, 400, 'MissingValue', 'credit', AS_JANE],
    ['creditAmount on a refund', { creditAmount: '10.00' }, 400, 'InvalidValue', 'creditAmount', AS_JANE],
    ['creditRail on a refund', { creditRail: 'WIRE' }, 400, 'InvalidValue', 'creditRail', AS_JANE],
    ['creditCurrency unlike the deposit', { creditCurrency: 'EUR' }, 400, 'InvalidValue', 'creditCurrency', AS_JANE],
    ['more than the deposit', { debitAmount: '3200.01' }, 400, 'InvalidValue', 'debitAmount', AS_JANE],
    ['zero', { debitAmount: '0.00' }, 400, 'InvalidValue', 'debitAmount', AS_JANE],
    ['debit with refundOf', { debitAccountId: undefined, debit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_john', instrumentId: 'bi_john_usd' } }, 400, 'InvalidValue', 'debit', AS_JANE],
    ['another programme\'s deposit', { debitAccountId: 'acct_other_usd' }, 404, null, null, AS_OTHER],
  ];
  for (const [name, change, status, type, fieldRef, as] of cases) {
    const response = await createIntent(sandbox, { idempotencyKey: name, ...base, ...change }, as);
    if (type && fieldRef) fieldError(t, response, status, type, fieldRef, name);
    else t.equal(response.statusCode, status, `${name}: ${response.body}`);
  }
  t.equal(json(await sandbox.request('GET', '/v1/transaction-intents', undefined, AS_JANE)).totalRecords, 0, 'no intent was created');
});

// ---- direct debits ----

async function selfBeneficiary(sandbox: TestApp, as: Identity = AS_JANE, relationshipToUser = 'SELF') {
  const response = await sandbox.request('POST', '/v1/beneficiaries', {
    type: 'PERSON',
    firstName: 'Jane',
    lastName: 'Doe',
    dateOfBirth: '1990-01-01',
    address: { line1: '1 Main Street', city: 'Springfield', region: 'IL', postalCode: '62701', country: 'US' },
    relationshipToUser,
    instruments: [
      { type: 'BANK_ACCOUNT', currency: 'USD', country: 'US', accountHolderName: 'Jane Doe', accountNumber: '555566667777', routingNumber: '021000021' },
      { type: 'BANK_ACCOUNT', currency: 'EUR', country: 'DE', accountHolderName: 'Jane Doe', iban: 'DE75512108001245126199', bic: 'DEUTDEFF' },
    ],
  }, as);
  if (response.statusCode !== 201) throw new Error(`beneficiary failed: ${response.statusCode} ${response.body}`);
  const created = json(response);
  return { beneficiaryId: created.id as string, usd: created.instruments[0].id as string, eur: created.instruments[1].id as string };
}

t.test('direct debit: a DEPOSIT pulled over ACH from the user\'s own bank account', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const own = await selfBeneficiary(sandbox);
  const before = await balances(sandbox, 'acct_jane_usd', AS_JANE);
  const body = { idempotencyKey: 'dd-1', debit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: own.beneficiaryId, instrumentId: own.usd }, credit: { instrumentType: 'ACCOUNT', accountId: 'acct_jane_usd' }, creditAmount: '250.00' };
  const created = await createIntent(sandbox, body, AS_JANE);
  t.equal(created.statusCode, 201, created.body);
  const intent = json(created);
  t.match(intent, {
    type: 'DEPOSIT',
    debitAmount: '250.00',
    creditAmount: '250.00',
    fees: [],
    debitInstrument: { instrumentType: 'BANK_ACCOUNT', bankAccount: { id: own.usd, mask: '7777' } },
    creditInstrument: { instrumentType: 'ACCOUNT', account: { id: 'acct_jane_usd' } },
  });
  t.equal((await createIntent(sandbox, body, AS_JANE)).statusCode, 200, 'idempotent retry');
  t.equal((await createIntent(sandbox, { ...body, creditAmount: '251.00' }, AS_JANE)).statusCode, 409);

  const results = await Promise.all(Array.from({ length: 50 }, () => commit(sandbox, intent.id, 'dd-1', AS_JANE)));
  t.equal(new Set(results.map((result) => result.relatedTransactionId)).size, 1, '50 concurrent commits: one transaction');
  const pulled = await transaction(sandbox, results[0].relatedTransactionId, AS_JANE);
  t.match(pulled, {
    type: 'DEPOSIT',
    category: 'DIRECT_DEBIT',
    status: 'PENDING',
    debitRail: 'US.USD.ACH',
    debitReference: /^\d{15}$/,
    debitParty: { partyType: 'PAYER', payer: { displayName: 'Jane Doe', accountNumber: '****7777', bankCode: '021000021' } },
    debitInstrument: { instrumentType: 'BANK_ACCOUNT' },
    creditInstrument: { instrumentType: 'ACCOUNT', account: { id: 'acct_jane_usd' } },
    depositReconciliationId: 'RECON-JANE-USD',
  });
  t.notOk('debitMemo' in pulled, 'an ACH debit carries no debitMemo');
  t.same(await balances(sandbox, 'acct_jane_usd', AS_JANE), before, 'nothing credited before completion');
  await advance(sandbox, 1_000);
  t.equal((await transaction(sandbox, pulled.id, AS_JANE)).status, 'COMPLETED', 'on the incoming timeline');
  t.same(await balances(sandbox, 'acct_jane_usd', AS_JANE), { current: (Number(before.current) + 250).toFixed(2), available: (Number(before.available) + 250).toFixed(2) });
  t.same(events(sandbox, pulled.id), [
    { user: 'usr_jane', type: 'transaction_created', status: 'PENDING' },
    { user: 'usr_jane', type: 'transaction_status_updated', status: 'COMPLETED' },
  ]);
});

t.test('direct debit: .91 cents come back returned (FAILED, R01); nothing is credited', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const own = await selfBeneficiary(sandbox);
  const before = await balances(sandbox, 'acct_jane_usd', AS_JANE);
  const intent = json(await createIntent(sandbox, { idempotencyKey: 'dd-91', debit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: own.beneficiaryId, instrumentId: own.usd }, credit: { instrumentType: 'ACCOUNT', accountId: 'acct_jane_usd' }, debitAmount: '40.91' }, AS_JANE));
  const committed = await commit(sandbox, intent.id, 'dd-91', AS_JANE);
  await advance(sandbox, 999);
  t.equal((await transaction(sandbox, committed.relatedTransactionId, AS_JANE)).status, 'PENDING');
  await advance(sandbox, 1);
  t.match(await transaction(sandbox, committed.relatedTransactionId, AS_JANE), { status: 'FAILED', statusCode: 'R01', statusReason: /R01/ });
  t.same(await balances(sandbox, 'acct_jane_usd', AS_JANE), before);
  t.same(events(sandbox, committed.relatedTransactionId).map((event) => event.status), ['PENDING', 'FAILED']);
});

t.test('direct debit refusals', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const own = await selfBeneficiary(sandbox);
  const third = await selfBeneficiary(sandbox, AS_JANE, 'THIRD_PARTY');
  const debit = { instrumentType: 'BANK_ACCOUNT', beneficiaryId: own.beneficiaryId, instrumentId: own.usd };
  const base = { debit, credit: { instrumentType: 'ACCOUNT', accountId: 'acct_jane_usd' }, creditAmount: '10.00' };
  const cases: Array<[string, Record<string, unknown>, number, string | null, string | null]> = [
    ['beneficiary not SELF', { debit: { ...debit, beneficiaryId: third.beneficiaryId, instrumentId: third.usd } }, 400, 'InvalidValue', 'debit.beneficiaryId'],
    ['not a US bank account', { debit: { ...debit, instrumentId: own.eur } }, 400, 'InvalidValue', 'debit.instrumentId'],
    ['both debit and debitAccountId', { debitAccountId: 'acct_jane_usd' }, 400, 'InvalidValue', 'debit'],
    ['neither debit nor debitAccountId', { debit: undefined }, 400, 'MissingValue', 'debitAccountId'],
    ['credit to a beneficiary', { credit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: own.beneficiaryId, instrumentId: own.usd } }, 400, 'InvalidValue', 'credit.instrumentType'],
    ['creditRail', { creditRail: 'ACH' }, 400, 'InvalidValue', 'creditRail'],
    ['both amounts', { debitAmount: '10.00' }, 400, 'InvalidValue', 'creditAmount'],
    ['wrong instrumentType', { debit: { ...debit, instrumentType: 'EXTERNAL_WALLET' } }, 400, null, null],
    ['another user\'s beneficiary', { debit: { ...debit, beneficiaryId: 'ben_globex', instrumentId: 'bi_globex_usd' } }, 403, null, null],
    ['another user\'s account', { credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_usd' } }, 403, null, null],
  ];
  for (const [name, change, status, type, fieldRef] of cases) {
    const response = await createIntent(sandbox, { idempotencyKey: name, ...base, ...change }, AS_JANE);
    if (type && fieldRef) fieldError(t, response, status, type, fieldRef, name);
    else t.equal(response.statusCode, status, `${name}: ${response.body}`);
  }
  const eurAccount = await createIntent(sandbox, { idempotencyKey: 'eur', ...base, credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_eur' } });
  t.equal(eurAccount.statusCode, 403, 'acme cannot pull from jane\'s beneficiary');
  t.equal(json(await sandbox.request('GET', '/v1/transaction-intents', undefined, AS_JANE)).totalRecords, 0, 'no intent was created');
});

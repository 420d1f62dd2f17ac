import t from 'tap';
import { advance, buildTestApp, json, type TestApp } from '../helper.js';
import { balances, eventsOf, expectStatus, getJson } from '../helpers/money-in.js';

// The control plane's transaction writes over HTTP (docs/control-plane.md#transactions): injection of any
// transaction into an account and returns of completed outgoing ones, through the same ledger, timeline and
// webhook code as the live flows.

function inject(sandbox: TestApp, accountId: string, body: unknown) {
  return sandbox.app.inject({ method: 'POST', url: `/_emulator/accounts/${accountId}/transactions`, payload: body as object });
}

function giveBack(sandbox: TestApp, transactionId: string, body: unknown) {
  return sandbox.app.inject({ method: 'POST', url: `/_emulator/transactions/${transactionId}/return`, payload: body as object });
}

function rowCount(sandbox: TestApp): { transactions: number; entries: number; outbox: number } {
  const count = (table: string) => (sandbox.ctx.db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
  return { transactions: count('transactions'), entries: count('ledger_entries'), outbox: count('outbox') };
}

t.test('an INCOMING injection with a target status is walked there at once and credits the account', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const before = await balances(sandbox, 'acct_acme_usd');
  const body = expectStatus(
    await inject(sandbox, 'acct_acme_usd', {
      type: 'DEPOSIT',
      direction: 'INCOMING',
      category: 'CASH_IN',
      creditAmount: '250.00',
      debitParty: { partyType: 'PAYER', payer: { displayName: 'Corner Store', institutionName: 'Cash network' } },
      purpose: 'MERCHANT_SETTLEMENT',
      debitReference: 'CASH-0001',
      status: 'COMPLETED',
    }),
    201,
  );
  t.match(body, {
    type: 'DEPOSIT',
    status: 'COMPLETED',
    category: 'CASH_IN',
    purpose: 'MERCHANT_SETTLEMENT',
    debitAmount: '250.00',
    creditAmount: '250.00',
    debitCurrency: 'USD',
    creditCurrency: 'USD',
    debitRail: 'US.USD.INTERNAL',
    debitReference: 'CASH-0001',
    depositReconciliationId: 'RECON-ACME-USD',
    exchangeRate: '1',
    creditInstrument: { instrumentType: 'ACCOUNT', account: { id: 'acct_acme_usd', currency: 'USD' } },
    debitParty: { partyType: 'PAYER', payer: { displayName: 'Corner Store' } },
  });
  t.ok(body.completedAt, 'completedAt set on COMPLETED');
  t.same(
    eventsOf(sandbox.ctx, body.id).map((e) => `${e.event_type}:${e.status}`),
    ['transaction_created:PENDING', 'transaction_status_updated:COMPLETED'],
    'every state write emitted its event',
  );
  const after = await balances(sandbox, 'acct_acme_usd');
  t.equal(Number(after.current) - Number(before.current), 250, 'current credited');
  t.equal(Number(after.available) - Number(before.available), 250, 'available credited');
  const listed = await getJson(sandbox, `/v1/transactions/${body.id}`);
  t.same(listed, body, 'GET /v1/transactions/{id} says what the control plane answered');
  // Held at its target: nothing is scheduled for it.
  await advance(sandbox, 60_000);
  t.equal(eventsOf(sandbox.ctx, body.id).length, 2);
});

t.test('an OUTGOING injection holds its debit, passes PROCESSING, and FAILED releases the hold with the statusCode given', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const before = await balances(sandbox, 'acct_acme_usd');
  const body = expectStatus(
    await inject(sandbox, 'acct_acme_usd', {
      type: 'WITHDRAWAL',
      direction: 'OUTGOING',
      category: 'AUTOPAY',
      debitAmount: '100.00',
      creditCurrency: 'EUR',
      creditAmount: '92.00',
      creditParty: { partyType: 'BENEFICIARY', beneficiary: { beneficiaryType: 'BUSINESS', business: { id: 'ben_x', name: 'Utility Co' } } },
      creditRail: 'EU.EUR.SEPA',
      debitRail: 'US.USD.ACH',
      purpose: 'PAYMENT_OF_PROPERTY_RENTAL',
      status: 'FAILED',
      statusCode: 'ACCOUNT_CLOSED',
      statusReason: 'Beneficiary account closed',
    }),
    201,
  );
  t.match(body, {
    type: 'WITHDRAWAL',
    status: 'FAILED',
    statusCode: 'ACCOUNT_CLOSED',
    statusReason: 'Beneficiary account closed',
    category: 'AUTOPAY',
    debitAmount: '100.00',
    creditAmount: '92.00',
    creditCurrency: 'EUR',
    exchangeRate: '0.92',
    debitInstrument: { instrumentType: 'ACCOUNT', account: { id: 'acct_acme_usd' } },
  });
  t.notOk('completedAt' in body);
  t.same(eventsOf(sandbox.ctx, body.id).map((e) => e.status), ['PENDING', 'PROCESSING', 'FAILED']);
  t.same(await balances(sandbox, 'acct_acme_usd'), before, 'the hold was released');
});

t.test('an OUTGOING injection to PROCESSING holds funds and stays there until forced on', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const before = await balances(sandbox, 'acct_acme_usd');
  const body = expectStatus(
    await inject(sandbox, 'acct_acme_usd', { type: 'TRANSFER', direction: 'OUTGOING', category: 'AUTOSWEEP', debitAmount: '40.00', status: 'PROCESSING' }),
    201,
  );
  t.equal(body.status, 'PROCESSING');
  const held = await balances(sandbox, 'acct_acme_usd');
  t.equal(Number(before.available) - Number(held.available), 40, 'available held');
  t.equal(held.current, before.current, 'current unchanged while in flight');
  await advance(sandbox, 3_600_000);
  t.equal((await getJson(sandbox, `/v1/transactions/${body.id}`)).status, 'PROCESSING', 'held at the target');
  const forced = await sandbox.app.inject({ method: 'POST', url: `/_emulator/transactions/${body.id}/status`, payload: { status: 'COMPLETED' } });
  t.equal(expectStatus(forced, 200).status, 'COMPLETED');
  const settled = await balances(sandbox, 'acct_acme_usd');
  t.equal(Number(before.current) - Number(settled.current), 40, 'debited on completion');
});

t.test('without a target status the injection follows the rail timeline on the emulated clock', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const outgoing = expectStatus(await inject(sandbox, 'acct_acme_usd', { type: 'WITHDRAWAL', direction: 'OUTGOING', debitAmount: '10.91' }), 201);
  const incoming = expectStatus(
    await inject(sandbox, 'acct_jane_usd', { type: 'DEPOSIT', direction: 'INCOMING', category: 'REWARD', creditAmount: '5.00', depositInstructionId: 'di_jane_usd_ach' }),
    201,
  );
  t.equal(outgoing.status, 'PENDING');
  t.equal(incoming.status, 'PENDING');
  t.match(incoming, {
    debitRail: 'US.USD.ACH',
    creditInstrument: { instrumentType: 'VIRTUAL_ACCOUNT', virtualAccount: { id: 'di_jane_usd_ach', displayName: 'Jane USD ACH', currency: 'USD', mask: '4321' } },
  });
  await advance(sandbox, 5_000);
  t.equal((await getJson(sandbox, `/v1/transactions/${outgoing.id}`)).status, 'COMPLETED', 'magic cents never apply to an injection');
  t.equal((await getJson(sandbox, `/v1/transactions/${incoming.id}`, { apiKey: 'pk_sandbox_multi', secret: 'sk_sandbox_multi_secret', userId: 'usr_jane' })).status, 'COMPLETED');
  t.same(eventsOf(sandbox.ctx, outgoing.id).map((e) => e.status), ['PENDING', 'PROCESSING', 'COMPLETED']);
  t.same(eventsOf(sandbox.ctx, incoming.id).map((e) => e.status), ['PENDING', 'COMPLETED']);
});

t.test('an injection held at PENDING carries its statusCode and statusReason from creation on', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const before = await balances(sandbox, 'acct_acme_usd');
  const body = expectStatus(
    await inject(sandbox, 'acct_acme_usd', { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '3.00', status: 'PENDING', statusCode: 'AWAITING_FUNDS', statusReason: 'Cheque clearing' }),
    201,
  );
  t.match(body, { status: 'PENDING', statusCode: 'AWAITING_FUNDS', statusReason: 'Cheque clearing' });
  t.same(await getJson(sandbox, `/v1/transactions/${body.id}`), body);
  const events = sandbox.ctx.db.prepare('SELECT payload FROM outbox WHERE resource_id = ?').all(body.id) as Array<{ payload: string }>;
  t.equal(events.length, 1, 'transaction_created only');
  t.match(JSON.parse(events[0]!.payload), { status: 'PENDING', statusCode: 'AWAITING_FUNDS', statusReason: 'Cheque clearing' }, 'the webhook says the same');
  await advance(sandbox, 60_000);
  t.equal((await getJson(sandbox, `/v1/transactions/${body.id}`)).status, 'PENDING', 'held');
  t.same(await balances(sandbox, 'acct_acme_usd'), before, 'an incoming transaction credits nothing before it completes');
});

t.test('injection refusals: 400 with the interface body, 404, 409, and nothing written', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const start = rowCount(sandbox);
  const cases: Array<[string, unknown, number, string | undefined, string | undefined]> = [
    ['missing type', { direction: 'INCOMING', creditAmount: '1.00' }, 400, 'MissingValue', 'type'],
    ['unknown type', { type: 'GIFT', direction: 'INCOMING', creditAmount: '1.00' }, 400, 'InvalidValue', 'type'],
    ['unknown category', { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '1.00', category: 'BONUS' }, 400, 'InvalidValue', 'category'],
    ['unknown purpose', { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '1.00', purpose: 'FUN' }, 400, 'InvalidValue', 'purpose'],
    ['unknown field', { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '1.00', colour: 'red' }, 400, 'InvalidValue', 'colour'],
    ['own amount missing', { type: 'DEPOSIT', direction: 'INCOMING' }, 400, 'MissingValue', 'creditAmount'],
    ['outgoing amount missing', { type: 'WITHDRAWAL', direction: 'OUTGOING', creditAmount: '5.00' }, 400, 'MissingValue', 'debitAmount'],
    ['too many decimals', { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '1.001' }, 400, 'InvalidFormat', 'creditAmount'],
    ['negative', { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '-1.00' }, 400, 'InvalidFormat', 'creditAmount'],
    ['zero', { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '0.00' }, 400, 'InvalidValue', 'creditAmount'],
    ['over the ledger', { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '90071992547409.92' }, 400, 'InvalidValue', 'creditAmount'],
    ['wrong own currency', { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '1.00', creditCurrency: 'EUR' }, 400, 'InvalidValue', 'creditCurrency'],
    ['unknown other currency', { type: 'WITHDRAWAL', direction: 'OUTGOING', debitAmount: '1.00', creditCurrency: 'XYZ', creditAmount: '1.00' }, 400, 'InvalidValue', 'creditCurrency'],
    ['cross currency without amount', { type: 'WITHDRAWAL', direction: 'OUTGOING', debitAmount: '1.00', creditCurrency: 'EUR' }, 400, 'MissingValue', 'creditAmount'],
    ['bad rail', { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '1.00', debitRail: 'ach' }, 400, 'InvalidFormat', 'debitRail'],
    ['bad party', { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '1.00', debitParty: { partyType: 'ALIEN' } }, 400, undefined, undefined],
    ['instruction on outgoing', { type: 'WITHDRAWAL', direction: 'OUTGOING', debitAmount: '1.00', depositInstructionId: 'di_acme_usd_ach' }, 400, 'InvalidValue', 'depositInstructionId'],
    ['instruction of another account', { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '1.00', depositInstructionId: 'di_jane_usd_ach' }, 400, 'NotFound', 'depositInstructionId'],
    ['unknown related', { type: 'REFUND', direction: 'INCOMING', creditAmount: '1.00', relatedTransactionId: 'txn_nope' }, 400, 'NotFound', 'relatedTransactionId'],
    ['statusCode without status', { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '1.00', statusCode: 'X' }, 400, 'InvalidValue', 'statusCode'],
    ['bad statusCode', { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '1.00', status: 'FAILED', statusCode: 'lower' }, 400, 'InvalidFormat', 'statusCode'],
    ['whitespace memo', { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '1.00', debitMemo: '   ' }, 400, undefined, 'debitMemo'],
  ];
  for (const [name, body, status, type, fieldRef] of cases) {
    const response = await inject(sandbox, 'acct_acme_usd', body);
    t.equal(response.statusCode, status, `${name}: ${response.body}`);
    const error = json(response);
    t.type(error.message, 'string', name);
    if (type || fieldRef) t.match(error.validationErrors, [{ ...(type ? { type } : {}), ...(fieldRef ? { fieldRef } : {}) }], name);
  }
  const missingBody = await sandbox.app.inject({ method: 'POST', url: '/_emulator/accounts/acct_acme_usd/transactions' });
  t.equal(missingBody.statusCode, 400);
  t.match(json(missingBody).validationErrors, [{ type: 'MissingRequestBody' }]);

  const unknownAccount = await inject(sandbox, 'acct_nope', { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '1.00' });
  t.equal(unknownAccount.statusCode, 404);
  t.equal(json(unknownAccount).errorCode, 'NOT_FOUND');
  const subBalance = await inject(sandbox, 'acct_acme_usdc_ethereum', { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '1.00' });
  t.equal(subBalance.statusCode, 404, 'a sub-balance is not an account of the API');

  const overdraw = await inject(sandbox, 'acct_jane_usd', { type: 'WITHDRAWAL', direction: 'OUTGOING', debitAmount: '99999999.00', status: 'COMPLETED' });
  t.equal(overdraw.statusCode, 409);
  t.equal(json(overdraw).errorCode, 'INVALID_REQUEST');
  t.match(json(overdraw).message, /available/);
  t.same(rowCount(sandbox), start, 'no refused injection wrote a transaction, an entry or an event');
});

t.test('returns: REFUND of the whole amount sent, PARTIAL_REFUNDs up to it, refusals', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  // A completed payout with a fee, through the live intent flow.
  const intent = expectStatus(
    await sandbox.request('POST', '/v1/transaction-intents', {
      idempotencyKey: 'ret-1',
      debitAccountId: 'acct_acme_usd',
      credit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_globex', instrumentId: 'bi_globex_usd' },
      creditAmount: '300.00',
      creditRail: 'ACH',
    }),
    201,
  );
  const committed = expectStatus(await sandbox.request('POST', `/v1/transaction-intents/${intent.id}/commit`, { idempotencyKey: 'ret-1' }), 200);
  const payoutId = committed.relatedTransactionId as string;

  const early = await giveBack(sandbox, payoutId, { reasonCode: 'R01' });
  t.equal(early.statusCode, 409, 'a transaction still in flight cannot be returned');
  t.match(json(early).message, /PENDING/);
  await advance(sandbox, 5_000);
  const payout = await getJson(sandbox, `/v1/transactions/${payoutId}`);
  t.equal(payout.status, 'COMPLETED');
  t.equal(payout.netDebitAmount, '300.00');
  const before = await balances(sandbox, 'acct_acme_usd');

  const tooMuch = await giveBack(sandbox, payoutId, { reasonCode: 'R01', amount: '300.01' });
  t.equal(tooMuch.statusCode, 400);
  t.match(json(tooMuch).validationErrors, [{ type: 'InvalidValue', fieldRef: 'amount' }]);
  const badCode = await giveBack(sandbox, payoutId, { reasonCode: 'insufficient' });
  t.equal(badCode.statusCode, 400);
  t.match(json(badCode).validationErrors, [{ fieldRef: 'reasonCode' }]);
  const badAmount = await giveBack(sandbox, payoutId, { reasonCode: 'R01', amount: '1.234' });
  t.match(json(badAmount).validationErrors, [{ type: 'InvalidFormat', fieldRef: 'amount' }]);

  const partial = expectStatus(await giveBack(sandbox, payoutId, { reasonCode: 'AC04', amount: '100.00' }), 201);
  t.match(partial, {
    type: 'PARTIAL_REFUND',
    status: 'PENDING',
    statusCode: 'AC04',
    relatedTransactionId: payoutId,
    purpose: 'RETURN_OF_FUNDS',
    debitAmount: '100.00',
    creditAmount: '100.00',
    debitRail: payout.creditRail ?? payout.debitRail,
    debitReference: payout.referenceNumber,
    debitParty: { partyType: 'BENEFICIARY', beneficiary: { business: { id: 'ben_globex' } } },
    debitInstrument: payout.creditInstrument,
    creditInstrument: { instrumentType: 'ACCOUNT', account: { id: 'acct_acme_usd' } },
  });
  t.match(partial.statusReason, /AC04 \(Closed account number\)/);
  await advance(sandbox, 1_000);
  const settledPartial = await getJson(sandbox, `/v1/transactions/${partial.id}`);
  t.equal(settledPartial.status, 'COMPLETED');
  t.equal(settledPartial.statusCode, 'AC04', 'the return code stays after completion');
  t.same(eventsOf(sandbox.ctx, partial.id).map((e) => `${e.event_type}:${e.status}`), ['transaction_created:PENDING', 'transaction_status_updated:COMPLETED']);
  const afterPartial = await balances(sandbox, 'acct_acme_usd');
  t.equal(Math.round((Number(afterPartial.current) - Number(before.current)) * 100), 10000, 'credited back 100.00');

  const rest = expectStatus(await giveBack(sandbox, payoutId, { reasonCode: 'R01' }), 201);
  t.equal(rest.type, 'PARTIAL_REFUND', 'the rest after a partial return is still partial');
  t.equal(rest.creditAmount, '200.00', 'default: all that is still returnable');
  const none = await giveBack(sandbox, payoutId, { reasonCode: 'R01' });
  t.equal(none.statusCode, 409, 'returned in full (even while the last return is in flight)');
  t.match(json(none).message, /returned in full/);
  await advance(sandbox, 1_000);
  const final = await balances(sandbox, 'acct_acme_usd');
  t.equal(Math.round((Number(final.current) - Number(before.current)) * 100), 30000, 'the fee is not returned');
  t.equal(final.current, final.available);

  // A whole return in one go is a REFUND.
  const whole = expectStatus(await inject(sandbox, 'acct_acme_usd', { type: 'WITHDRAWAL', direction: 'OUTGOING', debitAmount: '50.00', status: 'COMPLETED' }), 201);
  const refund = expectStatus(await giveBack(sandbox, whole.id, { reasonCode: 'R02' }), 201);
  t.match(refund, { type: 'REFUND', creditAmount: '50.00', statusCode: 'R02', relatedTransactionId: whole.id });

  const incoming = expectStatus(await inject(sandbox, 'acct_acme_usd', { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '5.00', status: 'COMPLETED' }), 201);
  const ofIncoming = await giveBack(sandbox, incoming.id, { reasonCode: 'R01' });
  t.equal(ofIncoming.statusCode, 409, 'an incoming transaction cannot be returned');
  const failed = expectStatus(await inject(sandbox, 'acct_acme_usd', { type: 'WITHDRAWAL', direction: 'OUTGOING', debitAmount: '5.00', status: 'FAILED' }), 201);
  t.equal((await giveBack(sandbox, failed.id, { reasonCode: 'R01' })).statusCode, 409, 'a FAILED transaction cannot be returned');
  // A transfer between own accounts reached no outside bank.
  const transferIntent = expectStatus(
    await sandbox.request('POST', '/v1/transaction-intents', {
      idempotencyKey: 'ret-own',
      debitAccountId: 'acct_acme_usd',
      credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_eur' },
      creditAmount: '10.00',
    }),
    201,
  );
  const transferId = expectStatus(await sandbox.request('POST', `/v1/transaction-intents/${transferIntent.id}/commit`, { idempotencyKey: 'ret-own' }), 200).relatedTransactionId;
  await advance(sandbox, 5_000);
  // (its USD side may carry magic cents and hold in PROCESSING: settle it either way)
  if ((await getJson(sandbox, `/v1/transactions/${transferId}`)).status !== 'COMPLETED') {
    await sandbox.app.inject({ method: 'POST', url: `/_emulator/transactions/${transferId}/status`, payload: { status: 'COMPLETED' } });
  }
  t.equal((await getJson(sandbox, `/v1/transactions/${transferId}`)).status, 'COMPLETED');
  const ofTransfer = await giveBack(sandbox, transferId, { reasonCode: 'R01' });
  t.equal(ofTransfer.statusCode, 409, 'an own-account transfer cannot be returned');
  t.match(json(ofTransfer).message, /between accounts of the programme/);
  const unknown = await giveBack(sandbox, 'txn_nope', { reasonCode: 'R01' });
  t.equal(unknown.statusCode, 404);
  t.equal(json(unknown).errorCode, 'NOT_FOUND');
});

t.test('a failed return frees its amount to be returned again', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const sent = expectStatus(await inject(sandbox, 'acct_acme_usd', { type: 'WITHDRAWAL', direction: 'OUTGOING', debitAmount: '20.00', status: 'COMPLETED' }), 201);
  const first = expectStatus(await giveBack(sandbox, sent.id, { reasonCode: 'R03' }), 201);
  const forced = await sandbox.app.inject({ method: 'POST', url: `/_emulator/transactions/${first.id}/status`, payload: { status: 'FAILED' } });
  t.equal(forced.statusCode, 200);
  const again = expectStatus(await giveBack(sandbox, sent.id, { reasonCode: 'R03' }), 201);
  t.equal(again.type, 'REFUND');
});

t.test('concurrent returns of the whole amount: exactly one is accepted', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(() => sandbox.close());
  const sent = expectStatus(await inject(sandbox, 'acct_acme_usd', { type: 'WITHDRAWAL', direction: 'OUTGOING', debitAmount: '75.00', status: 'COMPLETED' }), 201);
  const answers = await Promise.all(Array.from({ length: 8 }, () => giveBack(sandbox, sent.id, { reasonCode: 'R01' })));
  t.same(answers.map((answer) => answer.statusCode).sort(), [201, 409, 409, 409, 409, 409, 409, 409]);
  const returns = sandbox.ctx.db.prepare('SELECT COUNT(*) AS n FROM transactions WHERE related_transaction_id = ?').get(sent.id) as { n: number };
  t.equal(returns.n, 1);
});

t.test('an injected transaction is deterministic: the same requests on a fresh sandbox give the same bytes', async (t) => {
  const bodies: string[] = [];
  for (let run = 0; run < 2; run += 1) {
    const sandbox = await buildTestApp();
    const first = await inject(sandbox, 'acct_acme_usd', { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '1.00', status: 'COMPLETED' });
    const back = await giveBack(sandbox, (await inject(sandbox, 'acct_acme_usd', { type: 'WITHDRAWAL', direction: 'OUTGOING', debitAmount: '3.00', status: 'COMPLETED' })).json().id, { reasonCode: 'R02' });
    bodies.push(first.body + back.body);
    await sandbox.close();
  }
  t.equal(bodies[0], bodies[1]);
});

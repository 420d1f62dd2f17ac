import t from 'tap';
import { prepared } from '../../../src/db/connection.js';
import { quote } from '../../../src/domains/fees-fx/fees-fx.service.js';
import { advance, AS_ACME_MULTI, AS_JANE, buildTestApp, json, START, type Identity, type TestApp } from '../../helper.js';
import { balances, cents, countTransactions, fund, transaction, transactionsOfIntent } from '../../helpers/funding.js';

// Transaction intents (docs/money-out.md#transaction-intents; interface 2.3, 3.2, 4.4) with fees and FX from the
// fixtures.

const TO_MUELLER = { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_mueller', instrumentId: 'bi_mueller_eur' };
const TO_GLOBEX = { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_globex', instrumentId: 'bi_globex_usd' };
const FIFTEEN_MINUTES = 15 * 60 * 1000;

let keys = 0;
function intentBody(overrides: Record<string, unknown> = {}) {
  keys += 1;
  return { idempotencyKey: `intent-key-${keys}`, debitAccountId: 'acct_acme_usd', credit: TO_GLOBEX, creditAmount: '100.00', ...overrides };
}

async function createIntent(sandbox: TestApp, body: Record<string, unknown>, as?: Identity) {
  const response = await sandbox.request('POST', '/v1/transaction-intents', body, as);
  if (response.statusCode !== 201) throw new Error(`intent not created: ${response.statusCode} ${response.body}`);
  return json(response);
}

async function commit(sandbox: TestApp, id: string, idempotencyKey: string, as?: Identity) {
  return sandbox.request('POST', `/v1/transaction-intents/${id}/commit`, { idempotencyKey }, as);
}

t.test('transfer between own accounts (USD -> EUR): preview, commit, settle', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  fund(sandbox.ctx, 'acct_acme_usd', '2000.00');
  const usdBefore = await balances(sandbox, 'acct_acme_usd');
  const eurBefore = await balances(sandbox, 'acct_acme_eur');

  const body = intentBody({
    credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_eur' },
    creditAmount: undefined,
    debitAmount: '500.00',
    purpose: 'TRANSFER_TO_OWN_ACCOUNT',
    debitMemo: 'Fund EUR operations',
  });
  const intent = await createIntent(sandbox, body);
  t.match(intent, {
    id: /^ti_/,
    type: 'TRANSFER',
    status: 'CREATED',
    debitAmount: '500.00',
    debitCurrency: 'USD',
    creditAmount: '457.70',
    creditCurrency: 'EUR',
    exchangeRate: '0.9154',
    fees: [],
    creditRail: null,
    purpose: 'TRANSFER_TO_OWN_ACCOUNT',
    debitMemo: 'Fund EUR operations',
    debitInstrument: { instrumentType: 'ACCOUNT', account: { id: 'acct_acme_usd', currency: 'USD' } },
    creditInstrument: { instrumentType: 'ACCOUNT', account: { id: 'acct_acme_eur', currency: 'EUR' } },
    createdAt: START,
    expiresAt: '2026-03-01T12:15:00.000Z',
  });
  t.notOk('relatedTransactionId' in intent, 'no transaction before commit');
  t.same(await balances(sandbox, 'acct_acme_usd'), usdBefore, 'no funds move before commit (interface 4.4)');

  const committed = await commit(sandbox, intent.id, body.idempotencyKey);
  t.equal(committed.statusCode, 200, committed.body);
  const result = json(committed);
  t.equal(result.status, 'COMMITTED');
  t.match(result.relatedTransactionId, /^txn_/);

  const txn = transaction(sandbox, result.relatedTransactionId);
  t.match(txn, {
    type: 'TRANSFER',
    status: 'PENDING',
    debitAmount: '500.00',
    netDebitAmount: '500.00',
    creditAmount: '457.70',
    creditCurrency: 'EUR',
    exchangeRate: '0.9154',
    baseExchangeRate: '0.92',
    fxSpread: '0.005',
    fees: [],
    creditParty: null,
    purpose: 'TRANSFER_TO_OWN_ACCOUNT',
    debitMemo: 'Fund EUR operations',
    creditInstrument: { instrumentType: 'ACCOUNT', account: { id: 'acct_acme_eur' } },
  });

  const usdHeld = await balances(sandbox, 'acct_acme_usd');
  t.equal(cents(usdHeld.available), cents(usdBefore.available) - 50000n, 'the debit is held at commit');
  t.equal(usdHeld.current, usdBefore.current, 'current moves only when the transfer completes');
  t.same(await balances(sandbox, 'acct_acme_eur'), eurBefore, 'the target is credited only on completion');

  await advance(sandbox, 4000);
  t.equal(transaction(sandbox, result.relatedTransactionId).status, 'COMPLETED', 'rail timeline: PENDING -> PROCESSING -> COMPLETED');
  const usdAfter = await balances(sandbox, 'acct_acme_usd');
  const eurAfter = await balances(sandbox, 'acct_acme_eur');
  t.equal(cents(usdAfter.current), cents(usdBefore.current) - 50000n);
  t.equal(cents(eurAfter.current), cents(eurBefore.current) + 45770n);
  t.equal(cents(eurAfter.available), cents(eurBefore.available) + 45770n);
});

t.test('USD -> EUR withdrawal to a beneficiary: fees and FX to the cent', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  fund(sandbox.ctx, 'acct_acme_usd', '5000.00');
  const before = await balances(sandbox, 'acct_acme_usd');

  // 1000.00 EUR at 0.92 x (1 - 0.005) = 0.9154 -> 1092.4186... -> 1092.42 USD; SEPA fee 0.50 EUR / 0.92 = 0.5434... -> 0.54 USD
  const body = intentBody({ credit: TO_MUELLER, creditAmount: '1000.00', purpose: 'PAYMENT_FOR_SERVICES', debitMemo: 'Invoice 2026-17' });
  const intent = await createIntent(sandbox, body);
  t.match(intent, {
    type: 'WITHDRAWAL',
    debitAmount: '1092.96',
    debitCurrency: 'USD',
    creditAmount: '1000.00',
    creditCurrency: 'EUR',
    exchangeRate: '0.9154',
    fees: [{ type: 'PROCESSING', label: 'SEPA processing fee', amount: '0.54', currency: 'USD' }],
    creditRail: 'SEPA',
    creditInstrument: { instrumentType: 'BANK_ACCOUNT', bankAccount: { id: 'bi_mueller_eur', currency: 'EUR', mask: '2051' } },
  });
  t.equal(intent.fees.length, 1);

  const result = json(await commit(sandbox, intent.id, body.idempotencyKey));
  t.equal(result.status, 'COMMITTED');
  const txn = transaction(sandbox, result.relatedTransactionId);
  t.match(txn, {
    type: 'WITHDRAWAL',
    status: 'PENDING',
    debitAmount: '1092.96',
    netDebitAmount: '1092.42',
    debitCurrency: 'USD',
    creditAmount: '1000.00',
    creditCurrency: 'EUR',
    exchangeRate: '0.9154',
    baseExchangeRate: '0.92',
    fxSpread: '0.005',
    fees: [{ type: 'PROCESSING', label: 'SEPA processing fee', amount: '0.54', currency: 'USD' }],
    creditRail: 'EU.EUR.SEPA',
    creditParty: { partyType: 'BENEFICIARY', beneficiary: { beneficiaryType: 'BUSINESS', business: { id: 'ben_mueller', name: 'Müller Maschinenbau GmbH' } } },
    creditInstrument: { instrumentType: 'BANK_ACCOUNT', bankAccount: { id: 'bi_mueller_eur', mask: '2051' } },
    debitInstrument: { instrumentType: 'ACCOUNT', account: { id: 'acct_acme_usd' } },
    purpose: 'PAYMENT_FOR_SERVICES',
    debitMemo: 'Invoice 2026-17',
  });
  t.equal(cents((await balances(sandbox, 'acct_acme_usd')).available), cents(before.available) - 109296n, 'principal and fee held');

  await advance(sandbox, 4000);
  t.equal(transaction(sandbox, result.relatedTransactionId).status, 'COMPLETED');
  const after = await balances(sandbox, 'acct_acme_usd');
  t.equal(cents(after.current), cents(before.current) - 109296n, 'settled: principal and fee left the account');
  t.equal(after.current, after.available);

  // The same payment priced from the debit side comes out at the same figures.
  const fromDebit = await createIntent(sandbox, intentBody({ credit: TO_MUELLER, creditAmount: undefined, debitAmount: '1092.96' }));
  t.match(fromDebit, { debitAmount: '1092.96', creditAmount: '1000.00', fees: [{ amount: '0.54' }] });

  // SWIFT pinned: 25.00 USD fixed + 10 basis points of 1092.42 (1.09) = 26.09
  const swift = await createIntent(sandbox, intentBody({ credit: TO_MUELLER, creditAmount: '1000.00', creditRail: 'SWIFT' }));
  t.match(swift, { creditRail: 'SWIFT', debitAmount: '1118.51', fees: [{ label: 'SWIFT processing fee', amount: '26.09', currency: 'USD' }] });
  const swiftFromDebit = await createIntent(sandbox, intentBody({ credit: TO_MUELLER, creditAmount: undefined, debitAmount: '1118.51', creditRail: 'SWIFT' }));
  t.match(swiftFromDebit, { debitAmount: '1118.51', creditAmount: '1000.00', fees: [{ amount: '26.09' }] });
});

t.test('FX: inverses and crosses via USD are exact, rounded half up to 10 decimals', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const priced = (debitCurrency: string, creditCurrency: string, side: 'DEBIT' | 'CREDIT', minor: bigint) =>
    quote(sandbox.ctx, { debitCurrency, creditCurrency, feeRail: null, amount: { side, minor }, fieldRefs: { amount: 'amount', currency: 'currency' } });

  t.match(priced('EUR', 'USD', 'DEBIT', 10000n), { baseExchangeRate: '1.0869565217', exchangeRate: '1.0815217391', creditAmountMinor: 10815n });
  // EUR -> GBP = 0.79 / 0.92 = 0.858695652173913...
  t.match(priced('EUR', 'GBP', 'CREDIT', 10000n), { baseExchangeRate: '0.8586956522', exchangeRate: '0.8544021739', principalMinor: 11704n, debitAmountMinor: 11704n });
  // JPY has no decimals: 100.00 USD at 150.49375 -> 15049.375; 15049 and 15050 JPY are both priced at
  // 100.00 USD, and the debit credits the largest (docs/decisions.md#amounts-both-directions; was 15049)
  t.match(priced('USD', 'JPY', 'DEBIT', 10000n), { exchangeRate: '150.49375', creditAmountMinor: 15050n });
  t.match(priced('USD', 'JPY', 'CREDIT', 15050n), { principalMinor: 10000n });
  t.match(priced('USD', 'USD', 'DEBIT', 10000n), { exchangeRate: '1', baseExchangeRate: '1', fxSpread: '0', creditAmountMinor: 10000n });
  let noRate: unknown;
  try {
    priced('USD', 'USDC_ETH', 'DEBIT', 10000n);
  } catch (error) {
    noRate = error;
  }
  t.match(noRate, { statusCode: 400, validationErrors: [{ type: 'InvalidValue', fieldRef: 'currency' }] }, 'no rate: a field-level 400');

  // over HTTP, the cross rate on an own-account transfer
  fund(sandbox.ctx, 'acct_acme_eur', '1000.00');
  const intent = await createIntent(sandbox, intentBody({ debitAccountId: 'acct_acme_eur', credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_gbp' }, creditAmount: '100.00' }));
  t.match(intent, { debitAmount: '117.04', debitCurrency: 'EUR', creditAmount: '100.00', creditCurrency: 'GBP', exchangeRate: '0.8544021739' });
});

t.test('stablecoin withdrawal to a wallet: network fee, rail from the instrument', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  fund(sandbox.ctx, 'acct_acme_usdc', '100.000000');
  const body = intentBody({
    debitAccountId: 'acct_acme_usdc',
    credit: { instrumentType: 'EXTERNAL_WALLET', beneficiaryId: 'ben_nakamoto', instrumentId: 'bi_nakamoto_base' },
    creditAmount: '25',
  });
  const intent = await createIntent(sandbox, body);
  t.match(intent, { debitAmount: '25.100000', creditAmount: '25.000000', exchangeRate: '1', creditRail: 'BASE', fees: [{ label: 'Base network fee', amount: '0.100000', currency: 'USDC' }] });
  const result = json(await commit(sandbox, intent.id, body.idempotencyKey));
  t.match(transaction(sandbox, result.relatedTransactionId), {
    creditRail: 'BASE.USDC',
    creditInstrument: { instrumentType: 'EXTERNAL_WALLET', externalWallet: { id: 'bi_nakamoto_base', network: 'BASE', address: '0x742d35cc6634c0532925a3b844bc454e4438f44e' } },
  });
});

t.test('commit with the wrong key: 409, nothing moves', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  fund(sandbox.ctx, 'acct_acme_usd', '1000.00');
  const body = intentBody();
  const intent = await createIntent(sandbox, body);
  const wrong = await commit(sandbox, intent.id, 'not-the-creation-key');
  t.equal(wrong.statusCode, 409);
  t.equal(json(wrong).errorCode, 'INVALID_REQUEST');
  t.match(json(wrong).message, /idempotencyKey does not match/);
  t.equal(json(await sandbox.request('GET', `/v1/transaction-intents/${intent.id}`)).status, 'CREATED');
  t.same(transactionsOfIntent(sandbox, intent.id), []);
  const missing = await sandbox.request('POST', `/v1/transaction-intents/${intent.id}/commit`, {});
  t.equal(missing.statusCode, 400, 'the body of interface 2.14 is required');
});

t.test('commit twice: the same intent, one transaction', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  fund(sandbox.ctx, 'acct_acme_usd', '1000.00');
  const body = intentBody();
  const intent = await createIntent(sandbox, body);
  const first = await commit(sandbox, intent.id, body.idempotencyKey);
  const second = await commit(sandbox, intent.id, body.idempotencyKey);
  t.equal(first.statusCode, 200);
  t.equal(second.statusCode, 200);
  t.same(json(second), json(first));
  t.equal(transactionsOfIntent(sandbox, intent.id).length, 1);
  t.same(transactionsOfIntent(sandbox, intent.id), [json(first).relatedTransactionId]);
  const wrongAfter = await commit(sandbox, intent.id, 'another-key');
  t.equal(wrongAfter.statusCode, 409, 'the key is checked on a committed intent too');
});

t.test('50 concurrent commits over HTTP with the same key create exactly one transaction', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  fund(sandbox.ctx, 'acct_acme_usd', '1000.00');
  const body = intentBody();
  const intent = await createIntent(sandbox, body);
  const address = await sandbox.app.listen({ port: 0, host: '127.0.0.1' });
  const url = `/v1/transaction-intents/${intent.id}/commit`;
  const payload = JSON.stringify({ idempotencyKey: body.idempotencyKey });
  const responses = await Promise.all(
    Array.from({ length: 50 }, async () => {
      const response = await fetch(`${address}${url}`, {
        method: 'POST',
        headers: { ...sandbox.sign('POST', url, payload), 'content-type': 'application/json' },
        body: payload,
      });
      return { status: response.status, body: (await response.json()) as { status: string; relatedTransactionId?: string } };
    }),
  );
  t.same(new Set(responses.map((response) => response.status)), new Set([200]), 'every commit answers 200');
  t.same(new Set(responses.map((response) => response.body.status)), new Set(['COMMITTED']));
  const related = new Set(responses.map((response) => response.body.relatedTransactionId));
  t.equal(related.size, 1, 'every answer names the same transaction');
  t.equal(transactionsOfIntent(sandbox, intent.id).length, 1, 'exactly one transaction');
});

t.test('expiry after 15 minutes: by the job, and lazily on read', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  fund(sandbox.ctx, 'acct_acme_usd', '1000.00');
  const body = intentBody();
  const intent = await createIntent(sandbox, body);

  await advance(sandbox, FIFTEEN_MINUTES - 1);
  t.equal(json(await sandbox.request('GET', `/v1/transaction-intents/${intent.id}`)).status, 'CREATED', 'one millisecond before expiresAt');
  await advance(sandbox, 1);
  const status = (prepared<{ status: string }>(sandbox.ctx.db, 'SELECT status FROM transaction_intents WHERE id = ?').get(intent.id)!).status;
  t.equal(status, 'EXPIRED', 'the expiry job ran when the clock reached expiresAt');
  const expired = json(await sandbox.request('GET', `/v1/transaction-intents/${intent.id}`));
  t.match(expired, { status: 'EXPIRED', updatedAt: intent.expiresAt, statusReason: /Expired/ });
  const late = await commit(sandbox, intent.id, body.idempotencyKey);
  t.equal(late.statusCode, 409);
  t.match(json(late).message, /expired/);
  t.same(transactionsOfIntent(sandbox, intent.id), []);

  // lazily: the clock jumps past expiresAt without running jobs
  const second = await createIntent(sandbox, intentBody());
  sandbox.ctx.clock.freezeAt(sandbox.ctx.clock.nowMs() + FIFTEEN_MINUTES + 5000);
  const read = json(await sandbox.request('GET', `/v1/transaction-intents/${second.id}`));
  t.match(read, { status: 'EXPIRED', updatedAt: second.expiresAt });
  const third = await createIntent(sandbox, intentBody());
  sandbox.ctx.clock.freezeAt(sandbox.ctx.clock.nowMs() + FIFTEEN_MINUTES);
  const list = json(await sandbox.request('GET', '/v1/transaction-intents'));
  t.equal(list.data.find((item: { id: string }) => item.id === third.id).status, 'EXPIRED', 'the list applies expiry too');
});

t.test('cancel, then commit: 409', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  fund(sandbox.ctx, 'acct_acme_usd', '1000.00');
  const body = intentBody();
  const intent = await createIntent(sandbox, body);
  const canceled = await sandbox.request('POST', `/v1/transaction-intents/${intent.id}/cancel`);
  t.equal(canceled.statusCode, 200, canceled.body);
  t.match(json(canceled), { status: 'CANCELED', statusReason: /Canceled/ });
  const committed = await commit(sandbox, intent.id, body.idempotencyKey);
  t.equal(committed.statusCode, 409);
  t.match(json(committed).message, /canceled/);
  t.equal((await sandbox.request('POST', `/v1/transaction-intents/${intent.id}/cancel`)).statusCode, 409, 'cancel is only for CREATED');
  t.same(transactionsOfIntent(sandbox, intent.id), []);

  const done = intentBody();
  const other = await createIntent(sandbox, done);
  await commit(sandbox, other.id, done.idempotencyKey);
  t.equal((await sandbox.request('POST', `/v1/transaction-intents/${other.id}/cancel`)).statusCode, 409, 'a committed intent cannot be canceled');
});

t.test('insufficient funds: 200 with the intent FAILED and no transaction', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const before = await balances(sandbox, 'acct_jane_usd', AS_JANE);
  const transactionsBefore = countTransactions(sandbox);
  const tooMuch = ((cents(before.available) + 100000n) / 100n).toString();
  const body = intentBody({ debitAccountId: 'acct_jane_usd', credit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_john', instrumentId: 'bi_john_usd' }, creditAmount: `${tooMuch}.00` });
  const intent = await createIntent(sandbox, body, AS_JANE);
  const response = await commit(sandbox, intent.id, body.idempotencyKey, AS_JANE);
  t.equal(response.statusCode, 200);
  const failed = json(response);
  t.equal(failed.status, 'FAILED');
  t.match(failed.statusReason, /^Insufficient funds: available \d+\.\d{2} USD is less than the \d+\.\d{2} USD required$/);
  t.notOk('relatedTransactionId' in failed);
  t.equal(countTransactions(sandbox), transactionsBefore, 'no transaction');
  t.same(await balances(sandbox, 'acct_jane_usd', AS_JANE), before, 'nothing held');
  t.same(json(await commit(sandbox, intent.id, body.idempotencyKey, AS_JANE)), failed, 'a repeated commit returns the same FAILED intent');
});

t.test('creation idempotency: same key and body 200, another body 409, keys are per user', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const body = intentBody({ purpose: 'SALARY' });
  const first = await sandbox.request('POST', '/v1/transaction-intents', body);
  t.equal(first.statusCode, 201);
  const reordered = Object.fromEntries(Object.entries(body).reverse());
  const again = await sandbox.request('POST', '/v1/transaction-intents', reordered);
  t.equal(again.statusCode, 200, 'same key, same body (key order does not matter)');
  t.same(json(again), json(first));
  const changed = await sandbox.request('POST', '/v1/transaction-intents', { ...body, creditAmount: '100.01' });
  t.equal(changed.statusCode, 409);
  t.equal(json(changed).errorCode, 'INVALID_REQUEST');
  const jane = await sandbox.request(
    'POST',
    '/v1/transaction-intents',
    { ...body, debitAccountId: 'acct_jane_usd', credit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_john', instrumentId: 'bi_john_usd' } },
    AS_JANE,
  );
  t.equal(jane.statusCode, 201, 'another user may use the same key');
  const multi = await sandbox.request('POST', '/v1/transaction-intents', body, AS_ACME_MULTI);
  t.equal(multi.statusCode, 200, 'the key belongs to the user, whichever API key signs');
});

t.test('a .91 amount fails at processing with RAIL_REJECTED and releases the hold', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  fund(sandbox.ctx, 'acct_acme_usd', '1000.00');
  const before = await balances(sandbox, 'acct_acme_usd');
  const body = intentBody({ creditAmount: '100.91' });
  const intent = await createIntent(sandbox, body);
  t.match(intent, { debitAmount: '101.41', fees: [{ label: 'ACH processing fee', amount: '0.50' }], creditRail: 'ACH' });
  const result = json(await commit(sandbox, intent.id, body.idempotencyKey));
  t.match(transaction(sandbox, result.relatedTransactionId), { creditRail: 'US.USD.ACH', creditParty: { beneficiary: { business: { id: 'ben_globex' } } } });
  t.equal(cents((await balances(sandbox, 'acct_acme_usd')).available), cents(before.available) - 10141n);
  await advance(sandbox, 1000);
  t.equal(transaction(sandbox, result.relatedTransactionId).status, 'PROCESSING');
  await advance(sandbox, 3000);
  t.match(transaction(sandbox, result.relatedTransactionId), { status: 'FAILED', statusCode: 'RAIL_REJECTED' });
  t.same(await balances(sandbox, 'acct_acme_usd'), before, 'funds released');
});

t.test('enrollment gate: an INACTIVE user cannot commit', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  fund(sandbox.ctx, 'acct_acme_usd', '1000.00');
  const body = intentBody();
  const intent = await createIntent(sandbox, body);
  prepared(sandbox.ctx.db, "UPDATE users SET enrollment_status = 'INACTIVE' WHERE id = 'usr_acme'").run();
  const refused = await commit(sandbox, intent.id, body.idempotencyKey);
  t.equal(refused.statusCode, 403);
  t.match(json(refused), { errorCode: 'FORBIDDEN', message: /enrollment of user usr_\w+ is not active/ });
  t.equal(json(await sandbox.request('GET', `/v1/transaction-intents/${intent.id}`)).status, 'CREATED');
});

t.test('list, get, ownership', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const a = await createIntent(sandbox, intentBody());
  await advance(sandbox, 1000);
  const b = await createIntent(sandbox, intentBody());
  const list = json(await sandbox.request('GET', '/v1/transaction-intents?pageSize=1'));
  t.match(list, { pageIndex: 0, pageSize: 1, totalRecords: 2 });
  t.same(list.data.map((i: { id: string }) => i.id), [b.id], 'newest first');
  t.same(json(await sandbox.request('GET', '/v1/transaction-intents?pageSize=1&pageIndex=1')).data.map((i: { id: string }) => i.id), [a.id]);
  t.equal((await sandbox.request('GET', `/v1/transaction-intents/${a.id}`, undefined, AS_JANE)).statusCode, 403);
  t.equal((await sandbox.request('GET', '/v1/transaction-intents/ti_unknown')).statusCode, 404);
  t.equal(json(await sandbox.request('GET', '/v1/transaction-intents', undefined, AS_JANE)).totalRecords, 0);
});

const INVALID: Array<{ name: string; body: Record<string, unknown>; status: number; fieldRef?: string; type?: string }> = [
  { name: 'both amounts', body: { debitAmount: '10.00', creditAmount: '10.00' }, status: 400, fieldRef: 'creditAmount', type: 'InvalidValue' },
  { name: 'no amount', body: { creditAmount: undefined }, status: 400, fieldRef: 'creditAmount', type: 'MissingValue' },
  { name: 'too many decimals', body: { creditAmount: '10.001' }, status: 400, fieldRef: 'creditAmount', type: 'InvalidFormat' },
  { name: 'negative amount', body: { creditAmount: '-5.00' }, status: 400, fieldRef: 'creditAmount', type: 'InvalidFormat' },
  { name: 'zero amount', body: { creditAmount: '0.00' }, status: 400, fieldRef: 'creditAmount', type: 'InvalidValue' },
  { name: 'amount beyond the sandbox limit', body: { creditAmount: '99999999999999999999.00' }, status: 400, fieldRef: 'creditAmount', type: 'InvalidValue' },
  { name: 'converted amount beyond the limit', body: { debitAccountId: 'acct_acme_usd', credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_usdc' }, creditAmount: undefined, debitAmount: '9000000000000.00' }, status: 400, fieldRef: 'debitAmount', type: 'InvalidValue' },
  { name: 'debit amount below the fees', body: { creditAmount: undefined, debitAmount: '0.50' }, status: 400, fieldRef: 'debitAmount', type: 'InvalidValue' },
  { name: 'rail the instrument cannot use', body: { credit: TO_MUELLER, creditRail: 'ACH' }, status: 400, fieldRef: 'creditRail', type: 'InvalidValue' },
  { name: 'unknown rail', body: { creditRail: 'CARRIER_PIGEON' }, status: 400, fieldRef: 'creditRail', type: 'InvalidValue' },
  { name: 'instrumentType does not match the instrument', body: { credit: { ...TO_GLOBEX, instrumentType: 'EXTERNAL_WALLET' } }, status: 400, fieldRef: 'credit.instrumentType', type: 'InvalidValue' },
  { name: 'creditCurrency differs from the instrument', body: { creditCurrency: 'EUR' }, status: 400, fieldRef: 'creditCurrency', type: 'InvalidValue' },
  { name: 'unknown purpose', body: { purpose: 'BRIBES' }, status: 400, fieldRef: 'purpose', type: 'InvalidValue' },
  { name: 'memo over 140 characters', body: { debitMemo: 'x'.repeat(141) }, status: 400, fieldRef: 'debitMemo', type: 'InvalidValue' },
  { name: 'transfer to the same account', body: { credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_usd' } }, status: 400, fieldRef: 'credit.accountId', type: 'InvalidValue' },
  { name: 'rail on an own-account transfer', body: { credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_eur' }, creditRail: 'ACH' }, status: 400, fieldRef: 'creditRail', type: 'InvalidValue' },
  { name: 'missing idempotencyKey', body: { idempotencyKey: undefined }, status: 400, fieldRef: 'idempotencyKey', type: 'MissingValue' },
  { name: 'another user\'s debit account', body: { debitAccountId: 'acct_jane_usd' }, status: 403 },
  { name: 'another user\'s beneficiary', body: { credit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_john', instrumentId: 'bi_john_usd' } }, status: 403 },
  { name: 'unknown beneficiary', body: { credit: { ...TO_GLOBEX, beneficiaryId: 'ben_nope' } }, status: 404 },
  { name: 'instrument of another beneficiary', body: { credit: { ...TO_GLOBEX, instrumentId: 'bi_mueller_eur' } }, status: 404 },
  { name: 'unknown debit account', body: { debitAccountId: 'acct_nope' }, status: 404 },
];

t.test('invalid intent requests', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  for (const rule of INVALID) {
    const response = await sandbox.request('POST', '/v1/transaction-intents', intentBody(rule.body));
    t.equal(response.statusCode, rule.status, `${rule.name}: ${response.body}`);
    if (rule.fieldRef) {
      t.ok(
        json(response).validationErrors?.some((error: { fieldRef: string; type: string }) => error.fieldRef === rule.fieldRef && error.type === rule.type),
        `${rule.name}: ${rule.type} on ${rule.fieldRef}, got ${response.body}`,
      );
    }
  }
  t.equal(json(await sandbox.request('GET', '/v1/transaction-intents')).totalRecords, 0, 'no intent was created');
  t.equal((await sandbox.request('POST', '/v1/transaction-intents', intentBody())).statusCode, 201, 'the base body is valid');
});

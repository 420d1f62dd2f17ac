import t from 'tap';
import { advance, buildTestApp, CREDENTIALS, json, type Identity, type TestApp } from '../helper.js';
import { getJson } from '../helpers/money-in.js';
import { base64, fund, postPayout } from '../helpers/funding.js';

// Transaction field details a real integration reads (docs/decisions.md#debit-rail, #same-currency-rates,
// #on-chain-deposit-reference, #ach-debit-memo, #amounts-both-directions; interface 2.4).

const JANE: Identity = { apiKey: CREDENTIALS.multi.apiKey, secret: CREDENTIALS.multi.secret, userId: 'usr_jane' };
const PROGRAMME: Identity = { apiKey: CREDENTIALS.multi.apiKey, secret: CREDENTIALS.multi.secret };
const RAIL_FORM = /^([A-Z]{2}\.[A-Z0-9_]+\.[A-Z_]+|[A-Z]+\.[A-Z0-9_]+)$/;

let keys = 0;
async function committed(sandbox: TestApp, body: Record<string, unknown>, as?: Identity): Promise<any> {
  keys += 1;
  const idempotencyKey = `fields-${keys}`;
  const created = await sandbox.request('POST', '/v1/transaction-intents', { idempotencyKey, ...body }, as);
  if (created.statusCode !== 201) throw new Error(`intent: ${created.statusCode} ${created.body}`);
  const commit = json(await sandbox.request('POST', `/v1/transaction-intents/${json(created).id}/commit`, { idempotencyKey }, as));
  if (commit.status !== 'COMMITTED') throw new Error(`commit: ${JSON.stringify(commit)}`);
  return getJson(sandbox, `/v1/transactions/${commit.relatedTransactionId}`, as);
}

async function instructionOf(sandbox: TestApp, accountId: string, railType: string, as?: Identity): Promise<string> {
  const detail = await getJson(sandbox, `/v1/accounts/${accountId}`, as);
  return detail.depositInstructions.find((item: { rail: { type: string } }) => item.rail.type === railType).id;
}

/** The one transaction of the account that `action` created (the clock is frozen: found by id, not by time). */
async function createdBy(sandbox: TestApp, accountId: string, action: () => Promise<unknown>, as?: Identity, type?: string): Promise<any> {
  const list = async () => (await getJson(sandbox, `/v1/transactions?accountId=${accountId}&pageSize=200${type ? `&type=${type}` : ''}`, as)).data as Array<{ id: string }>;
  const before = new Set((await list()).map((row) => row.id));
  await action();
  const added = (await list()).filter((row) => !before.has(row.id));
  if (added.length !== 1) throw new Error(`expected one new transaction on ${accountId}, got ${added.length}`);
  return added[0];
}

async function deposited(sandbox: TestApp, accountId: string, body: Record<string, unknown>, as?: Identity, type?: string): Promise<any> {
  return createdBy(
    sandbox,
    accountId,
    async () => {
      const response = await sandbox.request('POST', `/v1/sandbox/accounts/${accountId}/deposits`, body, as);
      if (response.statusCode !== 202) throw new Error(`deposit: ${response.statusCode} ${response.body}`);
    },
    as,
    type,
  );
}

t.test('debitRail is never null, on every flow, live and from the fixture history', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  fund(sandbox.ctx, 'acct_acme_usd', '5000.00');
  const payout = await postPayout(sandbox, {
    body: base64(JSON.stringify({ entityId: 'acct_acme_usd', beneficiaryId: 'ben_globex', amount: '10.00', currency: 'USD', reference: 'R-1' })),
  });
  const payoutTxn = await getJson(sandbox, `/v1/transactions/${json(payout).transactionId}`);
  t.equal(payoutTxn.debitRail, 'US.USD.INTERNAL', 'a payout is debited on the account\'s own books');
  t.equal(payoutTxn.creditRail, 'US.USD.ACH');
  const own = await committed(sandbox, { debitAccountId: 'acct_acme_usd', credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_eur' }, creditAmount: '10.00' });
  t.equal(own.debitRail, 'US.USD.INTERNAL', 'own transfer');
  const p2p = await committed(sandbox, { debitAccountId: 'acct_acme_usd', credit: { instrumentType: 'ACCOUNT', accountId: 'acct_jane_usd' }, creditAmount: '5.00' });
  t.equal(p2p.debitRail, 'US.USD.INTERNAL', 'P2P, sender');
  const received = await createdBy(sandbox, 'acct_jane_usd', () => advance(sandbox, 10_000), JANE);
  t.match(received, { category: 'P2P', debitRail: 'US.USD.INTERNAL' }, 'P2P, receiver');
  const usdc = await committed(sandbox, {
    debitAccountId: 'acct_acme_usdc',
    credit: { instrumentType: 'EXTERNAL_WALLET', beneficiaryId: 'ben_nakamoto', instrumentId: 'bi_nakamoto_base' },
    creditAmount: '1.000000',
  });
  t.equal(usdc.debitRail, 'INTERNAL.USDC', 'an account without a country: INTERNAL.<CURRENCY>');

  for (const [label, as, url] of [
    ['acme', undefined, '/v1/transactions?pageSize=200'],
    ['jane', JANE, '/v1/transactions?pageSize=200'],
    ['programme', PROGRAMME, '/v1/transactions?pageSize=200'],
  ] as const) {
    const rows = (await getJson(sandbox, url, as)).data as Array<{ id: string; debitRail: unknown }>;
    t.ok(rows.length > 5, `${label}: transactions listed`);
    const bad = rows.filter((row) => typeof row.debitRail !== 'string' || !RAIL_FORM.test(row.debitRail));
    t.same(bad, [], `${label}: every debitRail is a rail string`);
  }
  const history = await getJson(sandbox, '/v1/transactions/txn_hist_acme_usd_003');
  t.match(history, { type: 'WITHDRAWAL', debitRail: 'US.USD.INTERNAL', creditRail: 'US.USD.ACH' }, 'fixture-history withdrawal');
});

t.test('same-currency rates read "1", "1", "0" on live and fixture-history transactions; cross-currency keep theirs', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  fund(sandbox.ctx, 'acct_acme_usd', '5000.00');
  const ach = await instructionOf(sandbox, 'acct_acme_usd', 'US.USD.ACH');
  const deposit = await deposited(sandbox, 'acct_acme_usd', { depositInstructionId: ach, amount: '12.00' });
  const withdrawal = await committed(sandbox, { debitAccountId: 'acct_acme_usd', credit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_globex', instrumentId: 'bi_globex_usd' }, creditAmount: '20.00' });
  const injected = json(await sandbox.app.inject({ method: 'POST', url: '/_emulator/accounts/acct_acme_usd/transactions', payload: { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '3.00' } }));
  const rates = (row: any) => [row.exchangeRate, row.baseExchangeRate, row.fxSpread];
  for (const [label, row] of [
    ['live simulated deposit', deposit],
    ['live withdrawal', withdrawal],
    ['injected deposit', injected],
    ['fixture-history deposit', await getJson(sandbox, '/v1/transactions/txn_hist_acme_usd_001')],
    ['fixture-history withdrawal', await getJson(sandbox, '/v1/transactions/txn_hist_acme_usd_003')],
  ] as const) {
    t.same(rates(row), ['1', '1', '0'], label);
  }
  const fx = await committed(sandbox, { debitAccountId: 'acct_acme_usd', credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_eur' }, creditAmount: '10.00' });
  t.same(rates(fx), ['0.9154', '0.92', '0.005'], 'a conversion keeps its rates');
  t.same(rates(await getJson(sandbox, '/v1/transactions/txn_hist_acme_fx_001')), ['0.9154', '0.92', '0.005'], 'fixture-history conversion');
});

t.test('an on-chain deposit reports its chain hash in debitReference and the caller\'s reference in debitMemo', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const eth = await instructionOf(sandbox, 'acct_acme_usdc', 'ETHEREUM.USDC');
  const withReference = await deposited(sandbox, 'acct_acme_usdc', { depositInstructionId: eth, amount: '15.000000', reference: 'INV-CHAIN-7' }, undefined, 'DEPOSIT');
  t.match(withReference, { debitRail: 'ETHEREUM.USDC', debitCurrency: 'USDC_ETH', debitReference: /^0x[0-9a-f]{64}$/, debitMemo: 'INV-CHAIN-7' });
  const without = await deposited(sandbox, 'acct_acme_usdc', { depositInstructionId: eth, amount: '16.000000' }, undefined, 'DEPOSIT');
  t.match(without.debitReference, /^0x[0-9a-f]{64}$/);
  t.not(without.debitReference, withReference.debitReference, 'a hash of its own');
  t.notOk('debitMemo' in without, 'no reference: no debitMemo (absent, interface 2.4)');
  const history = await getJson(sandbox, '/v1/transactions/txn_hist_acme_usdc_001');
  t.match(history.debitReference, /^0x[0-9a-f]{64}$/, 'fixture-history on-chain deposit');
});

t.test('an ACH debit carries no debitMemo', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const ach = await instructionOf(sandbox, 'acct_acme_usd', 'US.USD.ACH');
  const achDeposit = await deposited(sandbox, 'acct_acme_usd', { depositInstructionId: ach, amount: '20.00', reference: 'ACH-REF-1' });
  t.match(achDeposit, { debitRail: 'US.USD.ACH', debitReference: 'ACH-REF-1' });
  t.notOk('debitMemo' in achDeposit, 'simulated ACH deposit');
  const fedwire = await instructionOf(sandbox, 'acct_acme_usd', 'US.USD.FEDWIRE');
  t.match(await deposited(sandbox, 'acct_acme_usd', { depositInstructionId: fedwire, amount: '20.00', reference: 'WIRE-REF-1' }), { debitRail: 'US.USD.FEDWIRE', debitMemo: 'WIRE-REF-1' }, 'a wire carries it');

  // a direct debit (an ACH pull) written with a debitMemo
  const self = json(
    await sandbox.request('POST', '/v1/beneficiaries', {
      type: 'BUSINESS',
      businessName: 'Acme Robotics LLC',
      relationshipToUser: 'SELF',
      instruments: [{ type: 'BANK_ACCOUNT', currency: 'USD', country: 'US', accountHolderName: 'Acme Robotics LLC', accountNumber: '123456789012', routingNumber: '021000021' }],
    }),
  );
  const pull = await committed(sandbox, {
    debit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: self.id, instrumentId: self.instruments[0].id },
    credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_usd' },
    creditAmount: '30.00',
    debitMemo: 'top-up',
  });
  t.match(pull, { category: 'DIRECT_DEBIT', debitRail: 'US.USD.ACH' });
  t.notOk('debitMemo' in pull, 'direct debit');

  const injected = await sandbox.app.inject({
    method: 'POST',
    url: '/_emulator/accounts/acct_acme_usd/transactions',
    payload: { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '1.00', debitRail: 'US.USD.ACH', debitMemo: 'memo' },
  });
  t.equal(injected.statusCode, 400, 'an injected ACH debit with a memo is refused');
  t.match(json(injected).validationErrors, [{ type: 'InvalidValue', fieldRef: 'debitMemo' }]);
});

t.test('a 0-decimal currency quote reproduces itself in both directions (1000 JPY -> 31.65 USD -> 1000 JPY)', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const created = await sandbox.request('POST', '/v1/beneficiaries', {
    type: 'BUSINESS',
    businessName: 'Kaisha KK',
    address: { line1: '1-1 Marunouchi', city: 'Tokyo', postalCode: '100-0005', country: 'JP' },
    instruments: [{ type: 'BANK_ACCOUNT', currency: 'JPY', country: 'JP', accountHolderName: 'Kaisha KK', accountNumber: '1234567', bic: 'BOTKJPJT' }],
  });
  t.equal(created.statusCode, 201, created.body);
  const beneficiary = json(created);
  const credit = { instrumentType: 'BANK_ACCOUNT', beneficiaryId: beneficiary.id, instrumentId: beneficiary.instruments[0].id };
  const price = async (side: 'creditAmount' | 'debitAmount', amount: string) => {
    keys += 1;
    const response = await sandbox.request('POST', '/v1/transaction-intents', { idempotencyKey: `jpy-${keys}`, debitAccountId: 'acct_acme_usd', credit, [side]: amount });
    if (response.statusCode !== 201) throw new Error(`${side} ${amount}: ${response.statusCode} ${response.body}`);
    return json(response) as { debitAmount: string; creditAmount: string };
  };
  const forward = await price('creditAmount', '1000');
  t.match(forward, { creditAmount: '1000', debitAmount: '31.65' });
  const back = await price('debitAmount', '31.65');
  t.match(back, { debitAmount: '31.65', creditAmount: '1000' }, 'not 999');

  // Every credit priced in a range: its debit prices back to a credit that costs that same debit, and a
  // credit that is the most its debit buys comes back unchanged.
  for (let yen = 990; yen <= 1010; yen += 1) {
    const there = await price('creditAmount', String(yen));
    const again = await price('debitAmount', there.debitAmount);
    t.equal((await price('creditAmount', again.creditAmount)).debitAmount, there.debitAmount, `${yen} JPY -> ${there.debitAmount} USD -> ${again.creditAmount} JPY costs the same`);
    t.ok(Number(again.creditAmount) >= yen, `${yen} JPY: the debit buys at least what was asked (${again.creditAmount})`);
  }
  // Same-precision pairs are unchanged: 1092.96 USD credits 1000.00 EUR
  const eur = await sandbox.request('POST', '/v1/transaction-intents', {
    idempotencyKey: 'eur-both',
    debitAccountId: 'acct_acme_usd',
    credit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_mueller', instrumentId: 'bi_mueller_eur' },
    debitAmount: '1092.96',
  });
  t.match(json(eur), { creditAmount: '1000.00' });
});

import t, { type Test } from 'tap';
import { readFileSync } from 'node:fs';
import { RAIL_STEP_JOB } from '../../../src/domains/transactions/transactions.rail.js';
import { formatAmount, parseAmount } from '../../../src/lib/money.js';
import { advance, buildTestApp, json, type Identity, type TestApp } from '../../helper.js';
import { base64, fund, postPayout } from '../../helpers/funding.js';
import { balances, eventsOf, getJson } from '../../helpers/money-in.js';

// Nothing accepted is left stuck (docs/decisions.md#amount-bounds, #failed-jobs): a credit the ledger
// could not hold is refused at request time, a scheduled step that fails moves its transaction to FAILED
// with PROCESSING_ERROR, and the control plane lists failed jobs.

const MAX = BigInt(Number.MAX_SAFE_INTEGER); // 2^53 - 1 minor units

function inject(sandbox: TestApp, accountId: string, body: unknown) {
  return sandbox.app.inject({ method: 'POST', url: `/_emulator/accounts/${accountId}/transactions`, payload: body as object });
}

function counts(sandbox: TestApp): { transactions: number; entries: number; outbox: number; intents: number } {
  const count = (table: string) => (sandbox.ctx.db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
  return { transactions: count('transactions'), entries: count('ledger_entries'), outbox: count('outbox'), intents: count('transaction_intents') };
}

/** A 400 InvalidValue on `fieldRef` that says the ledger cannot hold it. */
function refusedForBound(t: Test, response: { statusCode: number; body: string }, fieldRef: string, label: string): void {
  t.equal(response.statusCode, 400, `${label}: 400 (${response.body.slice(0, 200)})`);
  const body = JSON.parse(response.body);
  t.match(body.validationErrors, [{ type: 'InvalidValue', fieldRef, message: /beyond what the ledger holds/ }], `${label}: InvalidValue on ${fieldRef}`);
  t.notOk('errorCode' in body, `${label}: described by validationErrors`);
}

/** Credit the account (completed, through the control plane) until its balance is `leave` minor units below the bound. */
async function fillTo(sandbox: TestApp, accountId: string, currency: string, precision: number, leave = 0n, as?: Identity): Promise<void> {
  const current = parseAmount((await balances(sandbox, accountId, as)).current, precision);
  const room = MAX - current - leave;
  const response = await inject(sandbox, accountId, { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: formatAmount(room, precision), creditCurrency: currency, status: 'COMPLETED' });
  if (response.statusCode !== 201) throw new Error(`fillTo: ${response.statusCode} ${response.body}`);
}

t.test('simulated deposits: the balance a deposit would produce must fit the ledger, in-flight deposits counted', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const url = '/v1/sandbox/accounts/acct_jane_usd/deposits';
  const detail = await getJson(sandbox, '/v1/accounts/acct_jane_usd', { apiKey: 'pk_sandbox_multi', secret: 'sk_sandbox_multi_secret', userId: 'usr_jane' });
  const as = { apiKey: 'pk_sandbox_multi', secret: 'sk_sandbox_multi_secret', userId: 'usr_jane' };
  const instruction = detail.depositInstructions[0].id;
  const current = parseAmount(detail.balances.current, 2);
  const room = formatAmount(MAX - current, 2);

  const first = await sandbox.request('POST', url, { depositInstructionId: instruction, amount: room }, as);
  t.equal(first.statusCode, 202, `exactly up to the bound is accepted: ${first.body}`);
  const before = counts(sandbox);
  refusedForBound(t, await sandbox.request('POST', url, { depositInstructionId: instruction, amount: '0.01' }, as), 'amount', 'while the first is PENDING');
  t.same(counts(sandbox), before, 'nothing written');
  await advance(sandbox, 2000);
  t.equal((await balances(sandbox, 'acct_jane_usd', as)).current, formatAmount(MAX, 2), 'the accepted deposit settled at the bound');
  refusedForBound(t, await sandbox.request('POST', url, { depositInstructionId: instruction, amount: '0.01' }, as), 'amount', 'once it completed');

  // the scenario of the issue: the largest single amount, twice
  const other = await buildTestApp();
  t.teardown(other.close);
  const big = { depositInstructionId: 'di_acme_usd_ach', amount: '90071992547409.91' };
  const acmeDetail = await getJson(other, '/v1/accounts/acct_acme_usd');
  big.depositInstructionId = acmeDetail.depositInstructions.find((item: { rail: { type: string } }) => item.rail.type.endsWith('.ACH')).id;
  refusedForBound(t, await other.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', big), 'amount', 'the largest amount on top of the opening balance');
  await advance(other, 10_000);
  const jobs = json(await other.app.inject({ method: 'GET', url: '/_emulator/jobs?status=FAILED' }));
  t.equal(jobs.totalRecords, 0, 'no failed job');
});

t.test('stablecoin deposits: the sub-balance and the account it is swept into count together', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const detail = await getJson(sandbox, '/v1/accounts/acct_acme_usdc');
  const instruction = detail.depositInstructions.find((item: { rail: { type: string } }) => item.rail.type === 'ETHEREUM.USDC').id;
  const room = MAX - parseAmount(detail.balances.current, 6);
  const url = '/v1/sandbox/accounts/acct_acme_usdc/deposits';
  t.equal((await sandbox.request('POST', url, { depositInstructionId: instruction, amount: formatAmount(room - 5_000_000n, 6) })).statusCode, 202);
  refusedForBound(t, await sandbox.request('POST', url, { depositInstructionId: instruction, amount: '5.000001' }), 'amount', 'pending in the sub-balance');
  await advance(sandbox, 1000); // the deposit completes in the sub-balance; its sweep is pending
  refusedForBound(t, await sandbox.request('POST', url, { depositInstructionId: instruction, amount: '5.000001' }), 'amount', 'settled in the sub-balance, sweep in flight');
  await advance(sandbox, 5000);
  t.equal((await balances(sandbox, 'acct_acme_usdc')).current, formatAmount(MAX - 5_000_000n, 6), 'swept');
  t.equal((await sandbox.request('POST', url, { depositInstructionId: instruction, amount: '5.000000' })).statusCode, 202, 'what is left still fits');
});

t.test('intents: own transfers, P2P transfers and direct debits are refused when the credit would not fit; checked again at commit', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  fund(sandbox.ctx, 'acct_acme_usd', '1000.00');
  await fillTo(sandbox, 'acct_acme_eur', 'EUR', 2);
  const before = counts(sandbox);
  const toEur = { idempotencyKey: 'to-eur', debitAccountId: 'acct_acme_usd', credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_eur' } };
  refusedForBound(t, await sandbox.request('POST', '/v1/transaction-intents', { ...toEur, creditAmount: '1.00' }), 'creditAmount', 'own transfer by creditAmount');
  refusedForBound(t, await sandbox.request('POST', '/v1/transaction-intents', { ...toEur, debitAmount: '1.00' }), 'debitAmount', 'own transfer by debitAmount');
  t.same(counts(sandbox), before, 'no intent created');

  // P2P: jane's account is full
  await fillTo(sandbox, 'acct_jane_usd', 'USD', 2, 100n, { apiKey: 'pk_sandbox_multi', secret: 'sk_sandbox_multi_secret', userId: 'usr_jane' });
  const p2p = { idempotencyKey: 'p2p', debitAccountId: 'acct_acme_usd', credit: { instrumentType: 'ACCOUNT', accountId: 'acct_jane_usd' } };
  refusedForBound(t, await sandbox.request('POST', '/v1/transaction-intents', { ...p2p, creditAmount: '1.01' }), 'creditAmount', 'P2P transfer');
  const fits = await sandbox.request('POST', '/v1/transaction-intents', { ...p2p, creditAmount: '1.00' });
  t.equal(fits.statusCode, 201, 'exactly what is left fits');
  // a deposit to jane lands first: the commit is refused and changes nothing
  await inject(sandbox, 'acct_jane_usd', { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '0.50', status: 'COMPLETED' });
  const beforeCommit = counts(sandbox);
  const commit = await sandbox.request('POST', `/v1/transaction-intents/${json(fits).id}/commit`, { idempotencyKey: 'p2p' });
  refusedForBound(t, commit, 'creditAmount', 'commit after the balance moved');
  t.same(counts(sandbox), beforeCommit, 'nothing written by the refused commit');
  t.equal(json(await sandbox.request('GET', `/v1/transaction-intents/${json(fits).id}`)).status, 'CREATED', 'the intent can still be committed later');

  // direct debit into a full USD account
  await fillTo(sandbox, 'acct_acme_usd', 'USD', 2);
  const self = await sandbox.request('POST', '/v1/beneficiaries', {
    type: 'BUSINESS',
    businessName: 'Acme Robotics LLC',
    relationshipToUser: 'SELF',
    instruments: [{ type: 'BANK_ACCOUNT', currency: 'USD', country: 'US', accountHolderName: 'Acme Robotics LLC', accountNumber: '123456789012', routingNumber: '021000021' }],
  });
  t.equal(self.statusCode, 201, self.body);
  const selfBody = json(self);
  refusedForBound(
    t,
    await sandbox.request('POST', '/v1/transaction-intents', {
      idempotencyKey: 'dd',
      debit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: selfBody.id, instrumentId: selfBody.instruments[0].id },
      credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_usd' },
      creditAmount: '0.01',
    }),
    'creditAmount',
    'direct debit',
  );
});

t.test('control plane: injection counts credits in flight; a return that would not fit is refused', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const current = parseAmount((await balances(sandbox, 'acct_acme_usd')).current, 2);
  const pending = await inject(sandbox, 'acct_acme_usd', { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: formatAmount(MAX - current, 2) });
  t.equal(pending.statusCode, 201, 'up to the bound, left PENDING on the timeline');
  refusedForBound(t, await inject(sandbox, 'acct_acme_usd', { type: 'DEPOSIT', direction: 'INCOMING', creditAmount: '0.01' }), 'creditAmount', 'a second injection');

  // a completed withdrawal, then the account filled: returning it would overflow
  const other = await buildTestApp();
  t.teardown(other.close);
  const withdrawal = await inject(other, 'acct_acme_usd', { type: 'WITHDRAWAL', direction: 'OUTGOING', debitAmount: '10.00', status: 'COMPLETED' });
  t.equal(withdrawal.statusCode, 201, withdrawal.body);
  await fillTo(other, 'acct_acme_usd', 'USD', 2, 500n);
  const before = counts(other);
  const refused = await other.app.inject({ method: 'POST', url: `/_emulator/transactions/${json(withdrawal).id}/return`, payload: { reasonCode: 'R01' } });
  refusedForBound(t, refused, 'amount', 'a whole return');
  t.same(counts(other), before, 'nothing written');
  const partial = await other.app.inject({ method: 'POST', url: `/_emulator/transactions/${json(withdrawal).id}/return`, payload: { reasonCode: 'R01', amount: '5.00' } });
  t.equal(partial.statusCode, 201, 'what fits is returned');
});

t.test('a rail step that fails moves its transaction to FAILED with PROCESSING_ERROR; the control plane lists the job', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  fund(sandbox.ctx, 'acct_acme_usd', '1000.00');
  const before = await balances(sandbox, 'acct_acme_usd');
  const response = await postPayout(sandbox, {
    body: base64(JSON.stringify({ entityId: 'acct_acme_usd', beneficiaryId: 'ben_globex', amount: '100.00', currency: 'USD', reference: 'INV-STUCK' })),
  });
  t.equal(response.statusCode, 202, response.body);
  const id = json(response).transactionId;
  t.not((await balances(sandbox, 'acct_acme_usd')).available, before.available, 'held');

  // the step that would move it to PROCESSING throws (a bug, or data the emulator cannot handle)
  const real = sandbox.ctx.jobHandlers[RAIL_STEP_JOB]!;
  sandbox.ctx.jobHandlers = {
    ...sandbox.ctx.jobHandlers,
    [RAIL_STEP_JOB]: (ctx, payload) => {
      if (payload.transactionId === id) throw new Error('simulated fault in the rail step');
      real(ctx, payload);
    },
  };
  await advance(sandbox, 10_000);
  const failed = await getJson(sandbox, `/v1/transactions/${id}`);
  t.match(failed, { status: 'FAILED', statusCode: 'PROCESSING_ERROR', statusReason: /GET \/_emulator\/jobs\?status=FAILED/ });
  t.same(await balances(sandbox, 'acct_acme_usd'), before, 'the hold was released');
  t.same(
    eventsOf(sandbox.ctx, id).map((event) => `${event.event_type}:${event.status}`),
    ['transaction_created:PENDING', 'transaction_status_updated:FAILED'],
    'a webhook event tells the integration',
  );

  const jobs = await sandbox.app.inject({ method: 'GET', url: '/_emulator/jobs?status=FAILED' });
  t.equal(jobs.statusCode, 200);
  const list = json(jobs);
  t.equal(list.totalRecords, 1);
  t.match(list.data[0], { type: RAIL_STEP_JOB, status: 'FAILED', transactionId: id, lastError: 'simulated fault in the rail step', attempts: 1, payload: { transactionId: id, to: 'PROCESSING' } });
  t.match(list.data[0].dueAt, /^2026-03-01T12:00:01.000Z$/);
  const byTransaction = json(await sandbox.app.inject({ method: 'GET', url: `/_emulator/jobs?transactionId=${id}` }));
  t.same(byTransaction.data.map((job: { status: string }) => job.status), ['FAILED'], 'no further step was scheduled');
  const done = json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/jobs?status=DONE&type=transaction.rail-step&pageSize=1' }));
  t.match(done, { pageIndex: 0, pageSize: 1 });
  t.ok(done.totalRecords >= 1, 'the other rail steps ran');

  // An incoming deposit whose completion fails is FAILED too, and credits nothing.
  const jane = { apiKey: 'pk_sandbox_multi', secret: 'sk_sandbox_multi_secret', userId: 'usr_jane' };
  const janeBefore = await balances(sandbox, 'acct_jane_usd', jane);
  const instruction = (await getJson(sandbox, '/v1/accounts/acct_jane_usd', jane)).depositInstructions[0].id;
  sandbox.ctx.jobHandlers = { ...sandbox.ctx.jobHandlers, [RAIL_STEP_JOB]: () => { throw new Error('simulated fault'); } };
  t.equal((await sandbox.request('POST', '/v1/sandbox/accounts/acct_jane_usd/deposits', { depositInstructionId: instruction, amount: '25.00' }, jane)).statusCode, 202);
  await advance(sandbox, 5000);
  const deposits = (await getJson(sandbox, '/v1/transactions?accountId=acct_jane_usd&sortBy=CREATED_AT&sortDirection=DESC&pageSize=1', jane)).data;
  t.match(deposits[0], { type: 'DEPOSIT', status: 'FAILED', statusCode: 'PROCESSING_ERROR' });
  t.same(await balances(sandbox, 'acct_jane_usd', jane), janeBefore, 'nothing credited');
});

t.test('when the failure handling fails too, nothing is half-written: the job alone is recorded FAILED', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  fund(sandbox.ctx, 'acct_acme_usd', '1000.00');
  const response = await postPayout(sandbox, {
    body: base64(JSON.stringify({ entityId: 'acct_acme_usd', beneficiaryId: 'ben_globex', amount: '50.00', currency: 'USD', reference: 'INV-HALF' })),
  });
  const id = json(response).transactionId;
  const held = await balances(sandbox, 'acct_acme_usd');
  const realFailure = sandbox.ctx.jobFailureHandlers![RAIL_STEP_JOB]!;
  sandbox.ctx.jobHandlers = { ...sandbox.ctx.jobHandlers, [RAIL_STEP_JOB]: () => { throw new Error('step fault'); } };
  // the failure handler makes its writes (FAILED, hold released, event) and then throws: all of it is undone
  sandbox.ctx.jobFailureHandlers = {
    ...sandbox.ctx.jobFailureHandlers,
    [RAIL_STEP_JOB]: (ctx, payload, error) => {
      realFailure(ctx, payload, error);
      throw new Error('handler fault');
    },
  };
  const before = counts(sandbox);
  await advance(sandbox, 2000);
  t.equal((await getJson(sandbox, `/v1/transactions/${id}`)).status, 'PENDING', 'the transaction is as it was');
  t.same(await balances(sandbox, 'acct_acme_usd'), held, 'the hold is as it was');
  t.same({ ...counts(sandbox) }, before, 'no entry and no event written');
  const jobs = json(await sandbox.app.inject({ method: 'GET', url: `/_emulator/jobs?status=FAILED&transactionId=${id}` }));
  t.equal(jobs.totalRecords, 1);
  t.match(jobs.data[0].lastError, /^step fault; then its failure handling failed: handler fault$/);
  // the control plane can still settle it by hand
  const forced = await sandbox.app.inject({ method: 'POST', url: `/_emulator/transactions/${id}/status`, payload: { status: 'FAILED', statusCode: 'PROCESSING_ERROR' } });
  t.equal(forced.statusCode, 200);
});

t.test('GET /_emulator/jobs: query validation', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  for (const [query, fieldRef] of [
    ['status=BROKEN', 'status'],
    ['pageSize=0', 'pageSize'],
    ['pageSize=201', 'pageSize'],
    ['status=FAILED&status=DONE', 'status'],
    ['nope=1', 'nope'],
  ] as const) {
    const response = await sandbox.app.inject({ method: 'GET', url: `/_emulator/jobs?${query}` });
    t.equal(response.statusCode, 400, query);
    t.match(json(response).validationErrors, [{ fieldRef }], `${query} names ${fieldRef}`);
  }
  const all = json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/jobs' }));
  t.match(all, { pageIndex: 0, pageSize: 50 });
  t.equal(all.data.length, Math.min(50, all.totalRecords));
  const ids = all.data.map((job: { id: number }) => job.id);
  t.same(ids, [...ids].sort((a: number, b: number) => b - a), 'newest first');
});

t.test('amounts the ledger cannot hold are refused on payouts (json and pacs.008) and intents, converted side included', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  fund(sandbox.ctx, 'acct_acme_usd', '1000.00');
  const before = counts(sandbox);
  const tooLarge = '10000000000000.01'; // 10^15 + 1 minor units
  const payout = await postPayout(sandbox, {
    body: base64(JSON.stringify({ entityId: 'acct_acme_usd', beneficiaryId: 'ben_globex', amount: tooLarge, currency: 'USD', reference: 'BIG' })),
  });
  t.equal(payout.statusCode, 400, payout.body);
  t.match(json(payout).validationErrors, [{ type: 'InvalidValue', fieldRef: 'amount', message: /too large/ }]);

  const xml = readFileSync(new URL('../../../fixtures/pacs008-usd-ach.xml', import.meta.url), 'utf8').replace(/(<IntrBkSttlmAmt[^>]*>)[^<]*</, `$1${tooLarge}<`);
  const pacs = await postPayout(sandbox, { format: 'pacs008', body: base64(xml) });
  t.equal(pacs.statusCode, 400, pacs.body);
  t.match(json(pacs).validationErrors, [{ type: 'InvalidValue', fieldRef: /IntrBkSttlmAmt$/ }]);

  const toGlobex = { debitAccountId: 'acct_acme_usd', credit: { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_globex', instrumentId: 'bi_globex_usd' } };
  const intent = await sandbox.request('POST', '/v1/transaction-intents', { idempotencyKey: 'big-1', ...toGlobex, creditAmount: tooLarge });
  t.equal(intent.statusCode, 400, intent.body);
  t.match(json(intent).validationErrors, [{ type: 'InvalidValue', fieldRef: 'creditAmount' }]);
  // USD -> EUR by debitAmount: the debit fits, the converted credit is checked too (here it is smaller)
  const fits = await sandbox.request('POST', '/v1/transaction-intents', { idempotencyKey: 'big-2', debitAccountId: 'acct_acme_usd', credit: { instrumentType: 'ACCOUNT', accountId: 'acct_acme_eur' }, debitAmount: '10000000000000.00' });
  t.equal(fits.statusCode, 201, 'the largest debit prices (its commit then fails for funds, not for the ledger)');
  t.same({ ...counts(sandbox), intents: before.intents }, before, 'no refused request wrote anything');
});

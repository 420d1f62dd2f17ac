import t from 'tap';
import { advance, AS_JANE, AS_OTHER, buildTestApp } from '../../helper.js';
import { balances, eventsOf, expectStatus, getJson, listAll } from '../../helpers/money-in.js';

// Interface 4.13 / 2.16, docs/money-in.md#simulated-deposits: the sandbox deposit simulator.

const url = (accountId: string) => `/v1/sandbox/accounts/${accountId}/deposits`;

t.test('a fiat ACH deposit: 202, PENDING with the request mapped onto it, COMPLETED after the timeline', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const opening = await balances(sandbox, 'acct_acme_usd');

  const answer = await sandbox.request('POST', url('acct_acme_usd'), {
    depositInstructionId: 'di_acme_usd_ach',
    amount: '1250.75',
    reference: 'INV-2026-0311',
    counterpartyName: 'Northwind Traders',
  });
  const accepted = expectStatus(answer, 202);
  t.same(Object.keys(accepted), ['message'], 'interface 2.16: the answer carries a message');
  const id = /(txn_[a-z0-9]+)/.exec(accepted.message)![1]!;
  t.equal(answer.headers.location, `/v1/transactions/${id}`, 'docs/money-in.md#simulated-deposits: Location names the transaction the message names');
  t.equal(expectStatus(await sandbox.request('GET', answer.headers.location as string), 200).id, id, 'and it can be read there');

  const listed = await getJson(sandbox, '/v1/transactions?accountId=acct_acme_usd&pageSize=1');
  const deposit = listed.data[0];
  t.equal(deposit.id, id, 'newest first, and the message names the transaction');
  t.match(deposit, {
    type: 'DEPOSIT',
    status: 'PENDING',
    debitAmount: '1250.75',
    debitCurrency: 'USD',
    creditAmount: '1250.75',
    creditCurrency: 'USD',
    debitRail: 'US.USD.ACH',
    debitReference: 'INV-2026-0311',
    depositReconciliationId: 'RECON-ACME-USD',
    debitParty: { partyType: 'PAYER', payer: { displayName: 'Northwind Traders' } },
    creditParty: null,
    creditInstrument: { instrumentType: 'ACCOUNT', account: { id: 'acct_acme_usd', displayName: 'Acme Operating (USD)', currency: 'USD' } },
    fees: [],
    category: null,
    createdAt: '2026-03-01T12:00:00.000Z',
  });
  t.notOk('debitMemo' in deposit, 'ACH carries no debitMemo (interface 2.4)');
  t.notOk('completedAt' in deposit, 'no completedAt while in flight');
  t.notOk('netDebitAmount' in deposit, 'no net figure: absent, not zero');
  t.notOk('counterpartyName' in deposit);
  t.same(await balances(sandbox, 'acct_acme_usd'), opening, 'an incoming credit posts only on completion');

  await advance(sandbox, 999);
  t.equal((await getJson(sandbox, `/v1/transactions/${id}`)).status, 'PENDING');
  await advance(sandbox, 1);
  const settled = await getJson(sandbox, `/v1/transactions/${id}`);
  t.equal(settled.status, 'COMPLETED');
  t.equal(settled.completedAt, '2026-03-01T12:00:01.000Z');
  t.equal(settled.updatedAt, '2026-03-01T12:00:01.000Z');
  const closing = await balances(sandbox, 'acct_acme_usd');
  t.equal(closing.current, (Number(opening.current) + 1250.75).toFixed(2));
  t.equal(closing.available, closing.current);

  t.same(eventsOf(sandbox.ctx, id), [
    { event_type: 'transaction_created', status: 'PENDING' },
    { event_type: 'transaction_status_updated', status: 'COMPLETED' },
  ], 'one event per creation and per status write, in order');
});

t.test('wire and SEPA deposits carry the reference as debitMemo too; defaults without reference or counterparty', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  expectStatus(await sandbox.request('POST', url('acct_acme_usd'), { depositInstructionId: 'di_acme_usd_wire', amount: '10', reference: 'Invoice 77' }), 202);
  let latest = (await getJson(sandbox, '/v1/transactions?pageSize=1')).data[0];
  t.equal(latest.debitRail, 'US.USD.FEDWIRE');
  t.equal(latest.debitReference, 'Invoice 77');
  t.equal(latest.debitMemo, 'Invoice 77');
  t.equal(latest.debitAmount, '10.00', 'formatted with the currency precision');
  t.equal(latest.debitParty.payer.displayName, 'Service Sandbox', 'no counterpartyName: the deposit comes from the service');

  expectStatus(await sandbox.request('POST', url('acct_acme_eur'), { depositInstructionId: 'di_acme_eur_sepa', amount: '99.5', reference: null, counterpartyName: null }), 202);
  latest = (await getJson(sandbox, '/v1/transactions?pageSize=1&accountId=acct_acme_eur')).data[0];
  t.equal(latest.debitRail, 'EU.EUR.SEPA');
  t.equal(latest.debitCurrency, 'EUR');
  t.match(latest.debitReference, /^SIM[0-9A-Z]{10}$/, 'a generated reference');
  t.notOk('debitMemo' in latest, 'no memo without a reference');

  expectStatus(await sandbox.request('POST', url('acct_jane_usd'), { depositInstructionId: 'di_jane_usd_ach', amount: '5.00' }, AS_JANE), 202);
  latest = (await getJson(sandbox, '/v1/transactions?pageSize=1', AS_JANE)).data[0];
  t.match(latest.debitReference, /^\d{15}$/, 'an ACH trace number by default');
  t.equal(latest.depositReconciliationId, 'RECON-JANE-USD');
});

t.test('a stablecoin deposit: DEPOSIT into the sub-balance, then the INTERNAL_SWEEP; the balance moves after the sweep', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const opening = await balances(sandbox, 'acct_acme_usdc');
  const before = (await listAll(sandbox, 'accountId=acct_acme_usdc')).length;

  const accepted = expectStatus(
    await sandbox.request('POST', url('acct_acme_usdc'), { depositInstructionId: 'di_acme_usdc_eth', amount: '250.5', counterpartyName: 'Coinbase Prime' }),
    202,
  );
  const depositId = /(txn_[a-z0-9]+)/.exec(accepted.message)![1]!;
  let deposit = await getJson(sandbox, `/v1/transactions/${depositId}`);
  t.match(deposit, {
    type: 'DEPOSIT',
    status: 'PENDING',
    debitCurrency: 'USDC_ETH',
    creditCurrency: 'USDC_ETH',
    debitAmount: '250.500000',
    debitRail: 'ETHEREUM.USDC',
    depositReconciliationId: 'RECON-ACME-USDC',
    relatedTransactionId: null,
    debitParty: { partyType: 'PAYER', payer: { displayName: 'Coinbase Prime', walletAddress: /^0x[0-9a-f]{40}$/ } },
  });
  t.match(deposit.debitReference, /^0x[0-9a-f]{64}$/, 'a deterministic chain hash');

  await advance(sandbox, 1000);
  deposit = await getJson(sandbox, `/v1/transactions/${depositId}`);
  t.equal(deposit.status, 'COMPLETED');
  const sweepId = deposit.relatedTransactionId;
  t.match(sweepId, /^txn_/, 'the deposit names its sweep');
  // the deposit's COMPLETED event says what the REST answer says, the link to its sweep included
  const completedEvents = sandbox.ctx.db
    .prepare("SELECT payload FROM outbox WHERE resource_id = ? AND event_type = 'transaction_status_updated' ORDER BY seq")
    .all(depositId) as Array<{ payload: string }>;
  const completedEvent = completedEvents.map((row) => JSON.parse(row.payload) as Record<string, unknown>).find((payload) => payload.status === 'COMPLETED');
  t.ok(completedEvent, 'a COMPLETED event was written');
  t.equal(completedEvent?.relatedTransactionId, sweepId, 'the COMPLETED webhook names the sweep');
  let sweep = await getJson(sandbox, `/v1/transactions/${sweepId}`);
  t.match(sweep, {
    type: 'TRANSFER',
    category: 'INTERNAL_SWEEP',
    status: 'PENDING',
    relatedTransactionId: depositId,
    debitCurrency: 'USDC_ETH',
    creditCurrency: 'USDC',
    debitAmount: '250.500000',
    creditAmount: '250.500000',
    creditInstrument: { instrumentType: 'ACCOUNT', account: { id: 'acct_acme_usdc', currency: 'USDC' } },
  });
  t.same(await balances(sandbox, 'acct_acme_usdc'), opening, 'the parent does not move while the sweep is in flight');

  const listed = await listAll(sandbox, 'accountId=acct_acme_usdc');
  t.equal(listed.length, before + 2, 'both transactions are listed under the parent');
  t.ok(listed.some((item) => item.id === depositId) && listed.some((item) => item.id === sweepId));

  await advance(sandbox, 1000);
  sweep = await getJson(sandbox, `/v1/transactions/${sweepId}`);
  t.equal(sweep.status, 'COMPLETED');
  const closing = await balances(sandbox, 'acct_acme_usdc');
  t.equal(closing.current, (Number(opening.current) + 250.5).toFixed(6));
  t.equal(closing.available, closing.current);

  t.same(eventsOf(sandbox.ctx, depositId).map((e) => e.status), ['PENDING', 'COMPLETED']);
  t.same(eventsOf(sandbox.ctx, sweepId).map((e) => e.status), ['PENDING', 'COMPLETED']);
  const order = (sandbox.ctx.db.prepare("SELECT resource_id, event_type FROM outbox WHERE resource_id IN (?, ?) ORDER BY seq").all(depositId, sweepId) as any[])
    .map((row) => `${row.resource_id === depositId ? 'deposit' : 'sweep'}:${row.event_type}`);
  t.same(order, ['deposit:transaction_created', 'deposit:transaction_status_updated', 'sweep:transaction_created', 'sweep:transaction_status_updated']);

  // On-chain, debitReference is the chain hash and a supplied reference is the debitMemo
  // (docs/decisions.md#on-chain-deposit-reference; before, the reference replaced the hash).
  expectStatus(await sandbox.request('POST', url('acct_acme_usdc'), { depositInstructionId: 'di_acme_usdc_base', amount: '1', reference: 'client-ref-9' }), 202);
  const base = (await getJson(sandbox, '/v1/transactions?pageSize=1&accountId=acct_acme_usdc')).data[0];
  t.match(base.debitReference, /^0x[0-9a-f]{64}$/);
  t.equal(base.debitMemo, 'client-ref-9');
  t.equal(base.debitCurrency, 'USDC_BASE');
  t.equal(base.debitRail, 'BASE.USDC');
});

t.test('validation and ownership', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const transactionsBefore = (sandbox.ctx.db.prepare('SELECT COUNT(*) AS n FROM transactions').get() as { n: number }).n;

  const unknown = expectStatus(await sandbox.request('POST', url('acct_acme_usd'), { depositInstructionId: 'di_nope', amount: '1.00' }), 404);
  t.equal(unknown.errorCode, 'NOT_FOUND');
  t.same(unknown.validationErrors.map((e: any) => [e.type, e.fieldRef]), [['NotFound', 'depositInstructionId']]);
  const foreign = expectStatus(await sandbox.request('POST', url('acct_acme_eur'), { depositInstructionId: 'di_acme_usd_ach', amount: '1.00' }), 404);
  t.equal(foreign.validationErrors[0].type, 'NotFound', 'an instruction of another account is not found on this one');

  const amountCases: Array<[unknown, string]> = [
    ['0', 'InvalidValue'],
    ['0.00', 'InvalidValue'],
    ['-1', 'InvalidFormat'],
    ['1.001', 'InvalidFormat'],
    ['1e3', 'InvalidFormat'],
    ['abc', 'InvalidFormat'],
    ['', 'InvalidFormat'],
    [100, 'InvalidFormat'],
    ['99999999999999999999', 'InvalidValue'],
  ];
  for (const [amount, type] of amountCases) {
    const error = expectStatus(await sandbox.request('POST', url('acct_acme_usd'), { depositInstructionId: 'di_acme_usd_ach', amount }), 400);
    t.notOk('errorCode' in error, `amount ${JSON.stringify(amount)}: no errorCode (interface 7.1)`);
    t.same(error.validationErrors.map((e: any) => [e.type, e.fieldRef]), [[type, 'amount']], `amount ${JSON.stringify(amount)}: ${type}`);
  }
  // USDC allows six decimals, USD two.
  t.equal((await sandbox.request('POST', url('acct_acme_usdc'), { depositInstructionId: 'di_acme_usdc_eth', amount: '0.000001' })).statusCode, 202);
  t.equal((await sandbox.request('POST', url('acct_acme_usdc'), { depositInstructionId: 'di_acme_usdc_eth', amount: '0.0000001' })).statusCode, 400);

  for (const field of ['reference', 'counterpartyName']) {
    const tooLong = expectStatus(await sandbox.request('POST', url('acct_acme_usd'), { depositInstructionId: 'di_acme_usd_ach', amount: '1.00', [field]: 'r'.repeat(256) }), 400);
    t.equal(tooLong.validationErrors[0].fieldRef, field, `${field} of 256 characters`);
    t.equal((await sandbox.request('POST', url('acct_acme_usd'), { depositInstructionId: 'di_acme_usd_ach', amount: '1.00', [field]: 'r'.repeat(255) })).statusCode, 202, `${field} of 255 characters`);
  }
  const missing = expectStatus(await sandbox.request('POST', url('acct_acme_usd'), { amount: '1.00' }), 400);
  t.equal(missing.validationErrors[0].fieldRef, 'depositInstructionId');
  const extra = expectStatus(await sandbox.request('POST', url('acct_acme_usd'), { depositInstructionId: 'di_acme_usd_ach', amount: '1.00', currency: 'USD' }), 400);
  t.equal(extra.validationErrors[0].fieldRef, 'currency');

  t.equal(expectStatus(await sandbox.request('POST', url('acct_acme_usd'), { depositInstructionId: 'di_acme_usd_ach', amount: '1.00' }, AS_JANE), 403).errorCode, 'FORBIDDEN');
  t.equal(expectStatus(await sandbox.request('POST', url('acct_acme_usd'), { depositInstructionId: 'di_acme_usd_ach', amount: '1.00' }, AS_OTHER), 404).errorCode, 'NOT_FOUND');
  t.equal(expectStatus(await sandbox.request('POST', url('acct_nope'), { depositInstructionId: 'di_acme_usd_ach', amount: '1.00' }), 404).errorCode, 'NOT_FOUND');

  const transactionsAfter = (sandbox.ctx.db.prepare('SELECT COUNT(*) AS n FROM transactions').get() as { n: number }).n;
  t.equal(transactionsAfter, transactionsBefore + 3, 'only the three accepted deposits were recorded');
});

t.test('an instruction still being provisioned cannot receive a deposit yet', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  expectStatus(await sandbox.request('POST', '/v1/accounts/acct_acme_usd/deposit-instructions', { name: 'new', idempotencyKey: 'n1' }), 202);
  const pendingId = (sandbox.ctx.db.prepare('SELECT id FROM deposit_instruction_requests').get() as { id: string }).id;
  const early = expectStatus(await sandbox.request('POST', url('acct_acme_usd'), { depositInstructionId: pendingId, amount: '5.00' }), 404);
  t.match(early.message, /still being provisioned/);
  await advance(sandbox, 2000);
  expectStatus(await sandbox.request('POST', url('acct_acme_usd'), { depositInstructionId: pendingId, amount: '5.00' }), 202);
  const latest = (await getJson(sandbox, '/v1/transactions?pageSize=1')).data[0];
  t.equal(latest.debitRail, 'US.USD.ACH');
});

t.test('magic amounts do not apply to deposits', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  for (const amount of ['10.91', '10.92']) {
    expectStatus(await sandbox.request('POST', url('acct_acme_usd'), { depositInstructionId: 'di_acme_usd_ach', amount }), 202);
  }
  await advance(sandbox, 1000);
  const latest = (await getJson(sandbox, '/v1/transactions?pageSize=2')).data;
  t.same(latest.map((item: any) => item.status), ['COMPLETED', 'COMPLETED']);
});

import { readFileSync } from 'node:fs';
import t from 'tap';
import { advance, buildTestApp, json, type TestApp } from '../../helper.js';
import { balances, base64, fund, postPayout, transaction } from '../../helpers/funding.js';

// Magic cents are read only on the amount the caller wrote: the intent's debitAmount or creditAmount as
// written, the payout's amount; never on an amount the emulator converted or derived
// (docs/decisions.md#magic-amounts). USD -> EUR: 0.92 x (1 - 0.005) = 0.9154 EUR per USD.

const TO_EUR_ACCOUNT = { instrumentType: 'ACCOUNT', accountId: 'acct_acme_eur' };
const TO_GLOBEX = { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_globex', instrumentId: 'bi_globex_usd' };
const TO_MUELLER = { instrumentType: 'BANK_ACCOUNT', beneficiaryId: 'ben_mueller', instrumentId: 'bi_mueller_eur' };

let keys = 0;

async function funded(): Promise<TestApp> {
  const sandbox = await buildTestApp();
  fund(sandbox.ctx, 'acct_acme_usd', '10000.00');
  fund(sandbox.ctx, 'acct_acme_eur', '5000.00');
  return sandbox;
}

/** Create and commit an intent; the transaction it created. */
async function committed(sandbox: TestApp, body: Record<string, unknown>): Promise<{ intent: any; transactionId: string }> {
  keys += 1;
  const idempotencyKey = `magic-${keys}`;
  const created = await sandbox.request('POST', '/v1/transaction-intents', { idempotencyKey, debitAccountId: 'acct_acme_usd', ...body });
  if (created.statusCode !== 201) throw new Error(`intent: ${created.statusCode} ${created.body}`);
  const intent = json(created);
  const commit = await sandbox.request('POST', `/v1/transaction-intents/${intent.id}/commit`, { idempotencyKey });
  const result = json(commit);
  if (result.status !== 'COMMITTED') throw new Error(`commit: ${commit.body}`);
  return { intent, transactionId: result.relatedTransactionId };
}

/** The status and statusCode once the rail timeline has run its course (1 s + 3 s, plus slack). */
async function settled(sandbox: TestApp, transactionId: string): Promise<{ status: string; statusCode: string | null }> {
  await advance(sandbox, 10_000);
  const { status, statusCode } = transaction(sandbox, transactionId);
  return { status, statusCode: statusCode ?? null };
}

t.test('payout: a 10.00 EUR payout from a USD account completes although its USD equivalent ends in .92', async (t) => {
  const sandbox = await funded();
  t.teardown(sandbox.close);
  const payload = { entityId: 'acct_acme_usd', beneficiaryId: 'ben_mueller', amount: '10.00', currency: 'EUR', reference: 'INV-EUR-10' };
  const response = await postPayout(sandbox, { body: base64(JSON.stringify(payload)) });
  t.equal(response.statusCode, 202, response.body);
  const id = json(response).transactionId;
  t.match(transaction(sandbox, id), { creditAmount: '10.00', creditCurrency: 'EUR', netDebitAmount: '10.92', debitCurrency: 'USD' }, 'the converted principal ends in .92');
  t.same(await settled(sandbox, id), { status: 'COMPLETED', statusCode: null }, 'not held in PROCESSING');
});

t.test('payout: the written amount decides, in any currency', async (t) => {
  const sandbox = await funded();
  t.teardown(sandbox.close);
  const send = async (payload: Record<string, string>) => {
    const response = await postPayout(sandbox, { body: base64(JSON.stringify({ reference: 'magic', ...payload })) });
    t.equal(response.statusCode, 202, response.body);
    return json(response).transactionId as string;
  };
  const heldEur = await send({ entityId: 'acct_acme_usd', beneficiaryId: 'ben_mueller', amount: '10.92', currency: 'EUR' });
  const rejectedEur = await send({ entityId: 'acct_acme_usd', beneficiaryId: 'ben_mueller', amount: '10.91', currency: 'EUR' });
  const heldUsd = await send({ entityId: 'acct_acme_usd', beneficiaryId: 'ben_globex', amount: '25.92', currency: 'USD' });
  t.same(await settled(sandbox, heldEur), { status: 'PROCESSING', statusCode: null }, '.92 EUR written: held');
  t.same(await settled(sandbox, rejectedEur), { status: 'FAILED', statusCode: 'RAIL_REJECTED' }, '.91 EUR written: rejected');
  t.same(await settled(sandbox, heldUsd), { status: 'PROCESSING', statusCode: null }, '.92 USD written, fee on top: held');

  // pacs.008: IntrBkSttlmAmt is the amount written
  const xml = readFileSync(new URL('../../../fixtures/pacs008-usd-ach.xml', import.meta.url), 'utf8').replace(/(<IntrBkSttlmAmt[^>]*>)[^<]*</, '$192.92<').replace(/<TtlIntrBkSttlmAmt[^>]*>[^<]*<\/TtlIntrBkSttlmAmt>/, '').replace(/<CtrlSum>[^<]*<\/CtrlSum>/, '');
  const pacs = await postPayout(sandbox, { format: 'pacs008', body: base64(xml) });
  t.equal(pacs.statusCode, 202, pacs.body);
  t.match(transaction(sandbox, json(pacs).transactionId), { creditAmount: '92.92' });
  t.same(await settled(sandbox, json(pacs).transactionId), { status: 'PROCESSING', statusCode: null }, 'pacs.008 .92: held');
});

t.test('intents: creditAmount written is read as written, never its converted debit', async (t) => {
  const sandbox = await funded();
  t.teardown(sandbox.close);
  const plain = await committed(sandbox, { credit: TO_EUR_ACCOUNT, creditAmount: '10.00' });
  t.match(plain.intent, { creditAmount: '10.00', debitAmount: '10.92' }, 'the converted debit ends in .92');
  t.same(await settled(sandbox, plain.transactionId), { status: 'COMPLETED', statusCode: null });

  const held = await committed(sandbox, { credit: TO_MUELLER, creditAmount: '20.92' });
  t.same(await settled(sandbox, held.transactionId), { status: 'PROCESSING', statusCode: null }, 'creditAmount .92: held');
  const rejected = await committed(sandbox, { credit: TO_EUR_ACCOUNT, creditAmount: '20.91' });
  t.same(await settled(sandbox, rejected.transactionId), { status: 'FAILED', statusCode: 'RAIL_REJECTED' }, 'creditAmount .91: rejected');
});

t.test('intents: debitAmount written is read as written, fees included, never the credit it converts to', async (t) => {
  const sandbox = await funded();
  t.teardown(sandbox.close);
  const before = await balances(sandbox, 'acct_acme_usd');
  // 10.83 USD -> 9.91 EUR: the derived credit ends in .91, the written debit does not
  const plain = await committed(sandbox, { credit: TO_EUR_ACCOUNT, debitAmount: '10.83' });
  t.match(plain.intent, { debitAmount: '10.83', creditAmount: '9.91' });
  t.same(await settled(sandbox, plain.transactionId), { status: 'COMPLETED', statusCode: null });

  // 100.91 USD written (ACH fee 0.50 inside): rejected, although the credit is 100.41
  const rejected = await committed(sandbox, { credit: TO_GLOBEX, debitAmount: '100.91' });
  t.match(rejected.intent, { debitAmount: '100.91', creditAmount: '100.41' });
  t.same(await settled(sandbox, rejected.transactionId), { status: 'FAILED', statusCode: 'RAIL_REJECTED' }, 'debitAmount .91: rejected');

  // 50.92 USD written to an EUR account: held
  const held = await committed(sandbox, { credit: TO_EUR_ACCOUNT, debitAmount: '50.92' });
  t.same(await settled(sandbox, held.transactionId), { status: 'PROCESSING', statusCode: null }, 'debitAmount .92: held');

  const after = await balances(sandbox, 'acct_acme_usd');
  t.equal(after.available, (Number(before.available) - 10.83 - 50.92).toFixed(2), 'the rejected debit was released, the held one is still held');
});

t.test('a refund sized by the emulator is never magic; one written is', async (t) => {
  const sandbox = await funded();
  t.teardown(sandbox.close);
  const detail = json(await sandbox.request('GET', '/v1/accounts/acct_acme_usd'));
  const instruction = detail.depositInstructions.find((item: { rail: { type: string } }) => item.rail.type.endsWith('.ACH')).id;
  const deposit = async (amount: string) => {
    const before = new Set((json(await sandbox.request('GET', '/v1/transactions?accountId=acct_acme_usd&pageSize=200')).data as Array<{ id: string }>).map((row) => row.id));
    const response = await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: instruction, amount });
    t.equal(response.statusCode, 202, response.body);
    await advance(sandbox, 2000);
    const rows = json(await sandbox.request('GET', '/v1/transactions?accountId=acct_acme_usd&pageSize=200')).data as Array<{ id: string }>;
    return rows.find((row) => !before.has(row.id))!.id;
  };
  const whole = await deposit('30.92');
  const byDefault = await committed(sandbox, { refundOf: whole });
  t.match(byDefault.intent, { debitAmount: '30.92' });
  t.same(await settled(sandbox, byDefault.transactionId), { status: 'COMPLETED', statusCode: null }, 'refund of what is refundable: the emulator chose the amount');
  const partial = await deposit('40.00');
  const written = await committed(sandbox, { refundOf: partial, debitAmount: '10.91' });
  t.same(await settled(sandbox, written.transactionId), { status: 'FAILED', statusCode: 'RAIL_REJECTED' }, 'a written refund amount is read');
});

import { readFileSync } from 'node:fs';
import t from 'tap';
import { prepared } from '../../../src/db/connection.js';
import { advance, AS_JANE, buildTestApp, json, START, type TestApp } from '../../helper.js';
import { balances, base64, cents, countTransactions, fund, postPayout, transaction } from '../../helpers/funding.js';

// Payout submission (docs/payouts.md; interface 2.15, 4.12) with the payout HMAC variant
// (docs/decisions.md#payout-hmac-variant).

const USD_ACH_XML = readFileSync(new URL('../../../fixtures/pacs008-usd-ach.xml', import.meta.url), 'utf8');
const EUR_SEPA_XML = readFileSync(new URL('../../../fixtures/pacs008-eur-sepa.xml', import.meta.url), 'utf8');

function jsonPayout(overrides: Record<string, unknown> = {}): string {
  return base64(
    JSON.stringify({ entityId: 'acct_acme_usd', beneficiaryId: 'ben_globex', amount: '250.00', currency: 'USD', reference: 'INV-1001', ...overrides }),
  );
}

function validationOf(body: string): { type: string; fieldRef: string; message: string } {
  return JSON.parse(body).validationErrors[0];
}

async function funded(): Promise<TestApp> {
  const sandbox = await buildTestApp();
  fund(sandbox.ctx, 'acct_acme_usd', '10000.00');
  fund(sandbox.ctx, 'acct_acme_eur', '5000.00');
  return sandbox;
}

t.test('json payout: 202, a WITHDRAWAL to the beneficiary that runs the rail timeline', async (t) => {
  const sandbox = await funded();
  t.teardown(sandbox.close);
  const before = await balances(sandbox, 'acct_acme_usd');
  const response = await postPayout(sandbox, {
    body: jsonPayout({ purpose: 'VENDOR_CONTRACTOR_PAYOUTS', messageId: 'client-msg-1' }),
    idempotencyKey: 'payout-json-0001',
  });
  t.equal(response.statusCode, 202, response.body);
  const accepted = json(response);
  t.same(Object.keys(accepted).sort(), ['messageId', 'receivedAt', 'status', 'transactionId']);
  t.match(accepted, { messageId: 'client-msg-1', transactionId: /^txn_/, status: 'RECEIVED', receivedAt: START });

  t.match(transaction(sandbox, accepted.transactionId), {
    type: 'WITHDRAWAL',
    status: 'PENDING',
    debitAmount: '250.50',
    netDebitAmount: '250.00',
    debitCurrency: 'USD',
    creditAmount: '250.00',
    creditCurrency: 'USD',
    fees: [{ type: 'PROCESSING', label: 'ACH processing fee', amount: '0.50', currency: 'USD' }],
    exchangeRate: '1',
    creditRail: 'US.USD.ACH',
    creditParty: { partyType: 'BENEFICIARY', beneficiary: { beneficiaryType: 'BUSINESS', business: { id: 'ben_globex', name: 'Globex Corporation' } } },
    creditInstrument: { instrumentType: 'BANK_ACCOUNT', bankAccount: { id: 'bi_globex_usd', mask: '6789' } },
    debitInstrument: { instrumentType: 'ACCOUNT', account: { id: 'acct_acme_usd' } },
    externalId: 'INV-1001',
    debitMemo: 'INV-1001',
    purpose: 'VENDOR_CONTRACTOR_PAYOUTS',
  });
  t.equal(cents((await balances(sandbox, 'acct_acme_usd')).available), cents(before.available) - 25050n, 'held at once');

  await advance(sandbox, 1000);
  t.equal(transaction(sandbox, accepted.transactionId).status, 'PROCESSING');
  await advance(sandbox, 3000);
  t.equal(transaction(sandbox, accepted.transactionId).status, 'COMPLETED');
  t.equal(cents((await balances(sandbox, 'acct_acme_usd')).current), cents(before.current) - 25050n);

  const generated = json(await postPayout(sandbox, { body: jsonPayout() }));
  t.match(generated.messageId, /^msg_/, 'messageId generated when the payload has none');
});

t.test('pacs.008: the two sample files succeed', async (t) => {
  const sandbox = await funded();
  t.teardown(sandbox.close);

  const usd = await postPayout(sandbox, { format: 'pacs008', body: base64(USD_ACH_XML) });
  t.equal(usd.statusCode, 202, usd.body);
  const usdAccepted = json(usd);
  t.equal(usdAccepted.messageId, 'ACME-PACS008-USD-0001', 'GrpHdr/MsgId');
  t.match(transaction(sandbox, usdAccepted.transactionId), {
    type: 'WITHDRAWAL',
    debitAmount: '1250.50',
    creditAmount: '1250.00',
    creditRail: 'US.USD.ACH',
    externalId: 'ACME-E2E-USD-0001',
    debitMemo: 'Invoice GLX-2026-0042',
    creditParty: { beneficiary: { business: { id: 'ben_globex' } } },
  });

  // base64 as the command-line tool writes it, wrapped at 76 characters (CRLF here), with spaces and a tab as well
  const wrapped = base64(EUR_SEPA_XML).replace(/(.{76})/g, '$1\r\n').replace(/^(.{8})/, '$1 \t ');
  const eur = await postPayout(sandbox, { format: 'pacs008', body: wrapped });
  t.equal(eur.statusCode, 202, eur.body);
  const eurAccepted = json(eur);
  t.equal(eurAccepted.messageId, 'ACME-PACS008-EUR-0001');
  // SEPA fee 0.50 EUR, no conversion
  t.match(transaction(sandbox, eurAccepted.transactionId), {
    debitAmount: '800.50',
    netDebitAmount: '800.00',
    debitCurrency: 'EUR',
    debitInstrument: { account: { id: 'acct_acme_eur' } },
    creditAmount: '800.00',
    creditCurrency: 'EUR',
    exchangeRate: '1',
    fees: [{ label: 'SEPA processing fee', amount: '0.50', currency: 'EUR' }],
    creditRail: 'EU.EUR.SEPA',
    debitMemo: 'Rechnung 2026-0815',
    creditParty: { beneficiary: { business: { id: 'ben_mueller', name: 'Müller Maschinenbau GmbH' } } },
    creditInstrument: { bankAccount: { id: 'bi_mueller_eur' } },
  });

  await advance(sandbox, 4000);
  t.equal(transaction(sandbox, usdAccepted.transactionId).status, 'COMPLETED');
  t.equal(transaction(sandbox, eurAccepted.transactionId).status, 'COMPLETED');
});

t.test('pacs.008 variants: namespace prefixes, versions, PrvtId, account number match', async (t) => {
  const sandbox = await funded();
  t.teardown(sandbox.close);
  const prefixed = USD_ACH_XML.replace(/<(\/?)([A-Za-z])/g, '<$1p:$2')
    .replace('<p:Document xmlns=', '<p:Document xmlns:p=')
    .replace('pacs.008.001.08', 'pacs.008.001.02');
  t.equal((await postPayout(sandbox, { format: 'pacs008', body: base64(prefixed) })).statusCode, 202, 'prefixed elements, version 02');
  const v13 = USD_ACH_XML.replace('pacs.008.001.08', 'pacs.008.001.13').replace(/<Cdtr>[\s\S]*<\/Cdtr>/, '<Cdtr><Nm>Globex</Nm></Cdtr>');
  const byAccount = await postPayout(sandbox, { format: 'pacs008', body: base64(v13) });
  t.equal(byAccount.statusCode, 202, 'version 13; beneficiary found by CdtrAcct/Id/Othr/Id');
  t.match(transaction(sandbox, json(byAccount).transactionId), { creditParty: { beneficiary: { business: { id: 'ben_globex' } } } });
  const person = USD_ACH_XML.replace('<OrgId>', '<PrvtId>').replace('</OrgId>', '</PrvtId>');
  const byPrivateId = await postPayout(sandbox, { format: 'pacs008', body: base64(person) });
  t.equal(byPrivateId.statusCode, 202, 'Cdtr/Id/PrvtId/Othr/Id names the beneficiary too');
  t.match(transaction(sandbox, json(byPrivateId).transactionId), { creditParty: { beneficiary: { business: { id: 'ben_globex' } } } });
  const tooNew = USD_ACH_XML.replace('pacs.008.001.08', 'pacs.008.001.14');
  const refused = await postPayout(sandbox, { format: 'pacs008', body: base64(tooNew) });
  t.equal(refused.statusCode, 400);
  t.match(validationOf(refused.body), { type: 'InvalidValue', fieldRef: 'Document', message: /001\.02 to 001\.13/ });
});

t.test('header rules', async (t) => {
  const sandbox = await funded();
  t.teardown(sandbox.close);
  const body = jsonPayout();

  const noKey = await postPayout(sandbox, { body, idempotencyKey: null });
  t.equal(noKey.statusCode, 400);
  t.match(validationOf(noKey.body), { type: 'MissingValue', fieldRef: 'idempotency-key' });
  for (const key of ['1234567', 'k'.repeat(129)]) {
    const bad = await postPayout(sandbox, { body, idempotencyKey: key });
    t.equal(bad.statusCode, 400, `Idempotency-Key of ${key.length} characters`);
    t.match(validationOf(bad.body), { fieldRef: 'idempotency-key', message: /8-128/ });
  }
  t.equal((await postPayout(sandbox, { body, idempotencyKey: '12345678' })).statusCode, 202, '8 characters is enough');
  t.equal((await postPayout(sandbox, { body, idempotencyKey: 'k'.repeat(128) })).statusCode, 202, '128 characters is the limit');

  const asJson = await postPayout(sandbox, { body, contentType: 'application/json' });
  t.equal(asJson.statusCode, 415);
  t.match(json(asJson), { errorCode: 'INVALID_REQUEST', message: /text\/plain/ });
  t.equal((await postPayout(sandbox, { body, contentType: null })).statusCode, 415, 'no Content-Type');
  t.equal((await postPayout(sandbox, { body, contentType: 'text/plain; charset=utf-8' })).statusCode, 202, 'parameters are fine');

  // authentication: the payout variant only
  const bearer = json(await sandbox.request('POST', '/v1/auth/token', {})).accessToken;
  const withBearer = await sandbox.app.inject({
    method: 'POST',
    url: '/v1/payout-origination/json',
    payload: body,
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'text/plain', 'idempotency-key': 'bearer-key-1' },
  });
  t.equal(withBearer.statusCode, 401, 'bearer tokens are refused');
  const plainHmac = await sandbox.app.inject({
    method: 'POST',
    url: '/v1/payout-origination/json',
    payload: body,
    headers: { ...sandbox.sign('POST', '/v1/payout-origination/json', body), 'content-type': 'text/plain', 'idempotency-key': 'hmac-key-01' },
  });
  t.equal(plainHmac.statusCode, 401, 'the millisecond HMAC mode is not the payout variant');
  t.equal((await postPayout(sandbox, { body, headers: { 'x-service-signature': `sha256=${'0'.repeat(64)}` } })).statusCode, 401, 'bad signature');
  t.equal((await postPayout(sandbox, { body, timestamp: new Date(Date.now() - 301_000).toISOString() })).statusCode, 401, 'outside the 300 s skew');
  t.equal((await postPayout(sandbox, { body, timestamp: new Date(Date.now() - 250_000).toISOString() })).statusCode, 202, 'inside the skew');
  const shortProgramme = await postPayout(sandbox, { body, headers: { 'x-service-program-id': 'prg_x' } });
  t.equal(shortProgramme.statusCode, 400, 'programme id header under 8 characters');
  t.equal(validationOf(shortProgramme.body).fieldRef, 'X-Service-Program-Id');
});

t.test('entitlement: a key without transactions:write gets 403 and nothing is created or recorded', async (t) => {
  // contract section 14, docs/authentication.md#entitlements: the read-only fixture key lacks transactions:write
  const sandbox = await funded();
  t.teardown(sandbox.close);
  const readOnly = { apiKey: 'pk_sandbox_readonly', secret: 'sk_sandbox_readonly_secret', userId: 'usr_acme' };
  const body = jsonPayout();
  const records = () => prepared<{ n: number }>(sandbox.ctx.db, 'SELECT COUNT(*) AS n FROM idempotency_records').get()!.n;
  const events = () => prepared<{ n: number }>(sandbox.ctx.db, 'SELECT COUNT(*) AS n FROM outbox').get()!.n;
  const before = { transactions: countTransactions(sandbox), records: records(), events: events() };
  const refused = await postPayout(sandbox, { body, as: readOnly, idempotencyKey: 'entitlement-0001' });
  t.equal(refused.statusCode, 403, refused.body);
  t.same(Object.keys(json(refused)).sort(), ['errorCode', 'message']);
  t.equal(json(refused).errorCode, 'FORBIDDEN');
  t.match(json(refused).message, /^API key lacks entitlement: this endpoint needs transactions:write/);
  t.same({ transactions: countTransactions(sandbox), records: records(), events: events() }, before, 'nothing created or recorded');

  // The same key and payout with a key that holds the entitlement: accepted, so nothing was kept under the key.
  const accepted = await postPayout(sandbox, { body, idempotencyKey: 'entitlement-0001' });
  t.equal(accepted.statusCode, 202, accepted.body);
  t.equal(countTransactions(sandbox), before.transactions + 1);
});

t.test('body rules: Base64 garbage, short, not UTF-8, not JSON, missing fields', async (t) => {
  const sandbox = await funded();
  t.teardown(sandbox.close);
  const cases: Array<{ name: string; body?: string; format?: string; type: string; fieldRef: string }> = [
    { name: 'no body', body: undefined, type: 'MissingRequestBody', fieldRef: 'body' },
    { name: 'Base64 garbage', body: '!!!! this is not base64 at all !!!!', type: 'InvalidFormat', fieldRef: 'body' },
    { name: 'a no-break space inside (only ASCII spaces, tabs and line breaks are ignored)', body: jsonPayout().replace(/^(.{8})/, '$1\u00a0'), type: 'InvalidFormat', fieldRef: 'body' },
    { name: 'bad padding', body: 'eyJlbnRpdHlJZCI6ImFjY3RfYWNtZV91c2QifQ=', type: 'InvalidFormat', fieldRef: 'body' },
    { name: 'under 20 characters', body: base64('{"a":1}'), type: 'InvalidFormat', fieldRef: 'body' },
    { name: 'not UTF-8', body: base64(Buffer.from([0xff, 0xfe, 0xfd, 0x80, 0x81, 0x82, 0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x28, 0xa1, 0xf0, 0x28, 0x8c])), type: 'InvalidFormat', fieldRef: 'body' },
    { name: 'json format, payload not JSON', body: base64('entityId=acct_acme_usd&amount=1'), type: 'InvalidFormat', fieldRef: 'body' },
    { name: 'json payload is an array', body: base64('["acct_acme_usd", "ben_globex", "1.00"]'), type: 'InvalidFormat', fieldRef: 'body' },
    { name: 'json payload without amount', body: base64(JSON.stringify({ entityId: 'acct_acme_usd', beneficiaryId: 'ben_globex', currency: 'USD', reference: 'x' })), type: 'MissingValue', fieldRef: 'amount' },
    { name: 'json payload without reference', body: base64(JSON.stringify({ entityId: 'acct_acme_usd', beneficiaryId: 'ben_globex', amount: '1.00', currency: 'USD' })), type: 'MissingValue', fieldRef: 'reference' },
    { name: 'json amount as a number', body: jsonPayout({ amount: 12.5 }), type: 'InvalidFormat', fieldRef: 'amount' },
    { name: 'json amount with 3 decimals', body: jsonPayout({ amount: '12.505' }), type: 'InvalidFormat', fieldRef: 'amount' },
    { name: 'json amount beyond the sandbox limit', body: jsonPayout({ amount: '99999999999999999999' }), type: 'InvalidValue', fieldRef: 'amount' },
    { name: 'currency with no instrument', body: jsonPayout({ currency: 'EUR' }), type: 'InvalidValue', fieldRef: 'currency' },
    { name: 'pacs008 format, payload not XML', format: 'pacs008', body: base64('this is plain text, not a message'), type: 'InvalidFormat', fieldRef: 'body' },
    { name: 'XML that is not pacs.008', format: 'pacs008', body: base64(USD_ACH_XML.replace('pacs.008.001.08', 'pain.001.001.09')), type: 'InvalidValue', fieldRef: 'Document' },
    { name: 'XML with another root', format: 'pacs008', body: base64('<?xml version="1.0"?><Invoice><Total>12.00</Total></Invoice>'), type: 'InvalidValue', fieldRef: 'Document' },
    { name: 'pacs.008 missing the amount', format: 'pacs008', body: base64(USD_ACH_XML.replace(/<IntrBkSttlmAmt[^>]*>[^<]*<\/IntrBkSttlmAmt>/, '')), type: 'MissingValue', fieldRef: 'FIToFICstmrCdtTrf.CdtTrfTxInf.IntrBkSttlmAmt' },
    { name: 'pacs.008 amount without Ccy', format: 'pacs008', body: base64(USD_ACH_XML.replace(' Ccy="USD"', '')), type: 'MissingValue', fieldRef: 'FIToFICstmrCdtTrf.CdtTrfTxInf.IntrBkSttlmAmt.@Ccy' },
    { name: 'pacs.008 missing the debit account', format: 'pacs008', body: base64(USD_ACH_XML.replace(/<DbtrAcct>[\s\S]*<\/DbtrAcct>/, '')), type: 'MissingValue', fieldRef: 'FIToFICstmrCdtTrf.CdtTrfTxInf.DbtrAcct.Id' },
    { name: 'pacs.008 missing MsgId', format: 'pacs008', body: base64(USD_ACH_XML.replace(/<MsgId>[^<]*<\/MsgId>/, '')), type: 'MissingValue', fieldRef: 'FIToFICstmrCdtTrf.GrpHdr.MsgId' },
    { name: 'pacs.008 amount malformed', format: 'pacs008', body: base64(USD_ACH_XML.replace('>1250.00<', '>1,250.00<')), type: 'InvalidFormat', fieldRef: 'FIToFICstmrCdtTrf.CdtTrfTxInf.IntrBkSttlmAmt' },
    { name: 'pacs.008 with a DOCTYPE', format: 'pacs008', body: base64(USD_ACH_XML.replace('<Document', '<!DOCTYPE Document [<!ENTITY x "y">]><Document')), type: 'InvalidValue', fieldRef: 'body' },
  ];
  const before = countTransactions(sandbox);
  for (const c of cases) {
    const response = await postPayout(sandbox, { format: c.format ?? 'json', body: c.body });
    t.equal(response.statusCode, 400, `${c.name}: ${response.body}`);
    t.match(validationOf(response.body), { type: c.type, fieldRef: c.fieldRef }, c.name);
  }
  t.equal(countTransactions(sandbox), before, 'no transaction from a refused submission');
  const unknownFormat = await postPayout(sandbox, { format: 'mt103', body: jsonPayout() });
  t.equal(unknownFormat.statusCode, 400);
  t.equal(validationOf(unknownFormat.body).fieldRef, 'format');
});

t.test('references: unknown and foreign ids', async (t) => {
  const sandbox = await funded();
  t.teardown(sandbox.close);
  const unknownAccount = await postPayout(sandbox, { body: jsonPayout({ entityId: 'acct_nope' }) });
  t.equal(unknownAccount.statusCode, 404);
  t.match(json(unknownAccount).message, /^entityId: /);
  t.match(json(unknownAccount), { errorCode: 'NOT_FOUND', validationErrors: [{ type: 'NotFound', fieldRef: 'entityId' }] }, 'the field is named in validationErrors too');
  const foreignAccount = await postPayout(sandbox, { body: jsonPayout({ entityId: 'acct_jane_usd' }) });
  t.match(json(foreignAccount), { errorCode: 'FORBIDDEN', validationErrors: [{ type: 'InvalidValue', fieldRef: 'entityId' }] });
  t.equal((await postPayout(sandbox, { body: jsonPayout({ entityId: 'acct_jane_usd' }) })).statusCode, 403, 'another user\'s account');
  t.equal((await postPayout(sandbox, { body: jsonPayout({ beneficiaryId: 'ben_john' }) })).statusCode, 403, 'another user\'s beneficiary');
  t.equal((await postPayout(sandbox, { body: jsonPayout({ beneficiaryId: 'ben_nope' }) })).statusCode, 404);
  t.equal((await postPayout(sandbox, { body: jsonPayout({ instrumentId: 'bi_mueller_eur' }) })).statusCode, 404, 'instrument of another beneficiary');
  const unknownIban = await postPayout(sandbox, { format: 'pacs008', body: base64(EUR_SEPA_XML.replace('DE02120300000000202051', 'DE75512108001245126199')) });
  t.equal(unknownIban.statusCode, 404);
  t.match(json(unknownIban).message, /CdtrAcct\.Id\.IBAN/);
  t.match(json(unknownIban).validationErrors, [{ type: 'NotFound', fieldRef: 'FIToFICstmrCdtTrf.CdtTrfTxInf.CdtrAcct.Id.IBAN' }]);
});

t.test('Idempotency-Key replayed: same body -> the same 202, another body -> 409', async (t) => {
  const sandbox = await funded();
  t.teardown(sandbox.close);
  const first = await postPayout(sandbox, { body: jsonPayout(), idempotencyKey: 'replay-key-0001' });
  t.equal(first.statusCode, 202);
  const count = countTransactions(sandbox);
  await advance(sandbox, 60_000);
  const replay = await postPayout(sandbox, { body: jsonPayout(), idempotencyKey: 'replay-key-0001' });
  t.equal(replay.statusCode, 202);
  t.equal(replay.body, first.body, 'byte-identical answer, receivedAt included');
  t.equal(countTransactions(sandbox), count, 'no second transaction');
  const other = await postPayout(sandbox, { body: jsonPayout({ amount: '251.00' }), idempotencyKey: 'replay-key-0001' });
  t.equal(other.statusCode, 409);
  t.match(json(other), { errorCode: 'INVALID_REQUEST', message: /Idempotency-Key/ });
  const otherFormat = await postPayout(sandbox, { format: 'pacs008', body: jsonPayout(), idempotencyKey: 'replay-key-0001' });
  t.equal(otherFormat.statusCode, 409, 'the same body to the other format is another request');
  t.equal(countTransactions(sandbox), count);
});

t.test('a .91 amount fails with RAIL_REJECTED after the clock advances', async (t) => {
  const sandbox = await funded();
  t.teardown(sandbox.close);
  const before = await balances(sandbox, 'acct_acme_usd');
  const response = await postPayout(sandbox, { body: jsonPayout({ amount: '100.91' }) });
  t.equal(response.statusCode, 202);
  const id = json(response).transactionId;
  t.equal(transaction(sandbox, id).status, 'PENDING');
  await advance(sandbox, 4000);
  t.match(transaction(sandbox, id), { status: 'FAILED', statusCode: 'RAIL_REJECTED' });
  t.same(await balances(sandbox, 'acct_acme_usd'), before, 'hold released');
});

t.test('insufficient funds: accepted, then the transaction is FAILED with INSUFFICIENT_FUNDS', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const before = await balances(sandbox, 'acct_acme_usd');
  const tooMuch = `${(cents(before.available) + 100000n) / 100n}.00`;
  const response = await postPayout(sandbox, { body: jsonPayout({ amount: tooMuch }) });
  t.equal(response.statusCode, 202, response.body);
  t.match(transaction(sandbox, json(response).transactionId), {
    type: 'WITHDRAWAL',
    status: 'FAILED',
    statusCode: 'INSUFFICIENT_FUNDS',
    creditParty: { partyType: 'BENEFICIARY' },
  });
  t.same(await balances(sandbox, 'acct_acme_usd'), before, 'nothing held');
  const entries = prepared<{ n: number }>(sandbox.ctx.db, 'SELECT COUNT(*) AS n FROM ledger_entries WHERE transaction_id = ?').get(json(response).transactionId)!;
  t.equal(entries.n, 0, 'no ledger entries');
});

t.test('a PERSON user gets 403 INVALID_USER_TYPE; an INACTIVE user 403', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const person = await postPayout(sandbox, { body: jsonPayout({ entityId: 'acct_jane_usd', beneficiaryId: 'ben_john' }), as: AS_JANE });
  t.equal(person.statusCode, 403);
  t.equal(json(person).errorCode, 'INVALID_USER_TYPE');

  prepared(sandbox.ctx.db, "UPDATE users SET enrollment_status = 'INACTIVE' WHERE id = 'usr_acme'").run();
  const inactive = await postPayout(sandbox, { body: jsonPayout() });
  t.equal(inactive.statusCode, 403);
  t.match(json(inactive), { errorCode: 'FORBIDDEN', message: /enrollment of user usr_\w+ is not active/ });
});

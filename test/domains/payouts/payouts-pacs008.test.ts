import { readFileSync } from 'node:fs';
import t, { type Test } from 'tap';
import type { LightMyRequestResponse } from 'fastify';
import { prepared } from '../../../src/db/connection.js';
import { advance, buildTestApp, json, type TestApp } from '../../helper.js';
import { base64, countTransactions, fund, postPayout, transaction } from '../../helpers/funding.js';

// pacs.008 messages as banks send them (docs/payouts.md#the-pacs008-payload-iso-20022): a Document alone or in an envelope with
// its AppHdr, debtors by IBAN or account number, one payment per message, remittance lines, rail hints.
// The messages under test/fixtures/pacs008 were written for these tests against the fixture data
// (fixtures/default.json: Acme's deposit instructions, the beneficiaries Globex and Müller).

const TX = 'FIToFICstmrCdtTrf.CdtTrfTxInf';
const GROUP = 'FIToFICstmrCdtTrf.GrpHdr';

function message(name: string): string {
  return readFileSync(new URL(`../../fixtures/pacs008/${name}.xml`, import.meta.url), 'utf8');
}
const CBPR = message('cbpr-envelope');
const SCT = message('sepa-sct');
const INST = message('sepa-inst');
const FEDWIRE = message('fedwire');
const FEDNOW = message('fednow');

/** A copy of `xml` with each [search, replacement] applied once; a search that does not match is a test bug. */
function edit(xml: string, ...replacements: Array<[string | RegExp, string]>): string {
  return replacements.reduce((text, [search, replacement]) => {
    if (!(typeof search === 'string' ? text.includes(search) : search.test(text))) throw new Error(`edit: ${String(search)} is not in the message`);
    return text.replace(search, replacement);
  }, xml);
}

async function funded(): Promise<TestApp> {
  const sandbox = await buildTestApp();
  fund(sandbox.ctx, 'acct_acme_usd', '100000.00');
  fund(sandbox.ctx, 'acct_acme_eur', '20000.00');
  return sandbox;
}

function submit(sandbox: TestApp, xml: string): Promise<LightMyRequestResponse> {
  return postPayout(sandbox, { format: 'pacs008', body: base64(xml) });
}

async function accepted(t: Test, sandbox: TestApp, xml: string, label: string) {
  const response = await submit(sandbox, xml);
  t.equal(response.statusCode, 202, `${label}: ${response.body}`);
  const body = json(response);
  return { messageId: body.messageId as string, transaction: transaction(sandbox, body.transactionId) };
}

t.test('each shape banks send ends as the right transaction', async (t) => {
  const sandbox = await funded();
  t.teardown(sandbox.close);

  const cbpr = await accepted(t, sandbox, CBPR, 'CBPR+ in an envelope');
  t.equal(cbpr.messageId, 'SBX-CBPR-MSG-7731', 'messageId is GrpHdr/MsgId, not the AppHdr BizMsgIdr');
  t.match(cbpr.transaction, {
    type: 'WITHDRAWAL',
    status: 'PENDING',
    debitInstrument: { account: { id: 'acct_acme_usd' } },
    creditAmount: '4310.25',
    creditCurrency: 'USD',
    debitAmount: '4310.75',
    netDebitAmount: '4310.25',
    debitCurrency: 'USD',
    creditRail: 'US.USD.ACH',
    fees: [{ label: 'ACH processing fee', amount: '0.50', currency: 'USD' }],
    externalId: 'ACME-PO-55120',
    debitMemo: 'PO 55120 tooling, batch 3 of 4 Net 30 & early payment discount applied',
    creditParty: { beneficiary: { business: { id: 'ben_globex' } } },
    creditInstrument: { bankAccount: { id: 'bi_globex_usd' } },
  }, 'debtor by the account number of a deposit instruction, both Ustrd lines, SvcLvl G001 leaves the default rail');

  const sct = await accepted(t, sandbox, SCT, 'SEPA SCT, version 02');
  t.equal(sct.messageId, 'SBX-SCT-20260301-0042');
  t.match(sct.transaction, {
    debitInstrument: { account: { id: 'acct_acme_eur' } },
    creditAmount: '1875.40',
    creditCurrency: 'EUR',
    debitAmount: '1875.90',
    creditRail: 'EU.EUR.SEPA',
    fees: [{ label: 'SEPA processing fee', amount: '0.50', currency: 'EUR' }],
    externalId: 'ACME-SEPA-2026-0042',
    debitMemo: 'RF18539007547034',
    creditParty: { beneficiary: { business: { id: 'ben_mueller', name: 'Müller Maschinenbau GmbH' } } },
    creditInstrument: { bankAccount: { id: 'bi_mueller_eur' } },
  }, 'debtor by IBAN, creditor by IBAN, TtlIntrBkSttlmAmt 1875.4 = 1875.40, structured creditor reference');

  const inst = await accepted(t, sandbox, INST, 'SEPA Instant, version 09');
  t.match(inst.transaction, {
    debitInstrument: { account: { id: 'acct_acme_eur' } },
    creditAmount: '99.90',
    debitAmount: '100.90',
    creditRail: 'EU.EUR.SEPA_INSTANT',
    fees: [{ label: 'SEPA Instant processing fee', amount: '1.00', currency: 'EUR' }],
    externalId: null,
    debitMemo: 'Ersatzteile Lieferung 17',
  }, 'LclInstrm INST wins over SvcLvl SEPA; EndToEndId NOTPROVIDED is no externalId; CtrlSum matches');

  const fedwire = await accepted(t, sandbox, FEDWIRE, 'Fedwire with AppHdr head.001.001.03');
  t.equal(fedwire.messageId, '20260301SBXFW0000018');
  t.match(fedwire.transaction, {
    debitInstrument: { account: { id: 'acct_acme_usd' } },
    creditAmount: '25000.00',
    debitAmount: '25015.00',
    creditRail: 'US.USD.FEDWIRE',
    fees: [{ label: 'Wire processing fee', amount: '15.00', currency: 'USD' }],
    externalId: 'ACME-WIRE-0018',
    debitMemo: 'Q1 licence true-up',
    creditParty: { beneficiary: { business: { id: 'ben_globex' } } },
  }, 'ClrSys FDW: the wire rail and its fee');

  const fednow = await accepted(t, sandbox, FEDNOW, 'FedNow style, version 13');
  t.match(fednow.transaction, {
    debitInstrument: { account: { id: 'acct_acme_usd' } },
    creditAmount: '640.00',
    debitAmount: '640.50',
    creditRail: 'US.USD.ACH',
    fees: [{ label: 'ACH processing fee', amount: '0.50' }],
    externalId: 'ACME-FN-0004',
    debitMemo: 'GLX-7781',
  }, 'debtor by account id, beneficiary by OrgId; no rail hint the emulator knows: the instrument default');
});

t.test('rail hints apply only where the instrument allows them', async (t) => {
  const sandbox = await funded();
  t.teardown(sandbox.close);
  const noHint = edit(FEDNOW, ['<ClrSys><Cd>FDN</Cd></ClrSys>', '']);
  const cases: Array<{ name: string; xml: string; rail: string; fee: string }> = [
    { name: 'SvcLvl URGP on a US account: wire', xml: edit(noHint, ['<LclInstrm><Prtry>STANDARD</Prtry></LclInstrm>', '<SvcLvl><Cd>URGP</Cd></SvcLvl>']), rail: 'US.USD.FEDWIRE', fee: '15.00' },
    { name: 'URGP at group level (version 02 layout)', xml: edit(noHint, ['<SttlmInf>', '<PmtTpInf><SvcLvl><Cd>URGP</Cd></SvcLvl></PmtTpInf><SttlmInf>']), rail: 'US.USD.FEDWIRE', fee: '15.00' },
    { name: 'LclInstrm INST on a US account: no SEPA there, the default', xml: edit(noHint, ['<Prtry>STANDARD</Prtry>', '<Cd>INST</Cd>']), rail: 'US.USD.ACH', fee: '0.50' },
    { name: 'SvcLvl SEPA on a US account: the default', xml: edit(noHint, ['<LclInstrm><Prtry>STANDARD</Prtry></LclInstrm>', '<SvcLvl><Cd>SEPA</Cd></SvcLvl>']), rail: 'US.USD.ACH', fee: '0.50' },
    { name: 'ClrSys FDW on a euro IBAN: no wire there, SEPA by SvcLvl', xml: edit(SCT, ['<Prtry>ST2</Prtry>', '<Cd>FDW</Cd>']), rail: 'EU.EUR.SEPA', fee: '0.50' },
    { name: 'no hint on a euro IBAN: SEPA by default', xml: edit(SCT, ['<PmtTpInf><SvcLvl><Cd>SEPA</Cd></SvcLvl></PmtTpInf>', '']), rail: 'EU.EUR.SEPA', fee: '0.50' },
  ];
  for (const c of cases) {
    const { transaction: created } = await accepted(t, sandbox, c.xml, c.name);
    t.match(created, { creditRail: c.rail, fees: [{ amount: c.fee }] }, c.name);
  }
});

t.test('envelopes, headers, prefixes, versions', async (t) => {
  const sandbox = await funded();
  t.teardown(sandbox.close);
  const variants: Array<[string, string]> = [
    ['head.001.001.01', edit(FEDWIRE, ['xsd:head.001.001.03"', 'xsd:head.001.001.01"'])],
    ['head.001.001.04', edit(FEDWIRE, ['xsd:head.001.001.03"', 'xsd:head.001.001.04"'])],
    ['envelope in an envelope', `<Outer xmlns="urn:example:outer"><Inner>${FEDWIRE.replace(/^<\?xml[^>]*\?>/, '')}</Inner></Outer>`],
    ['AppHdr after the Document', edit(CBPR, [/(<h:AppHdr>[\s\S]*<\/h:AppHdr>)\s*(<d:Document>[\s\S]*<\/d:Document>)/, '$2$1'])],
    ['comments inside elements', edit(SCT, ['<NbOfTxs>1</NbOfTxs>', '<NbOfTxs><!-- one -->1</NbOfTxs><!-- the total follows -->'])],
    ['version 08 with a default namespace and a prefix mixed', edit(INST, ['xsd:pacs.008.001.09"', 'xsd:pacs.008.001.08"'], ['<FIToFICstmrCdtTrf>', '<x:FIToFICstmrCdtTrf xmlns:x="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08">'], ['</FIToFICstmrCdtTrf>', '</x:FIToFICstmrCdtTrf>'])],
    ['a debtor IBAN written in groups of four, lower case', edit(SCT, ['DE89370400440532013000', 'de89 3704 0044 0532 0130 00'])],
    ['version 02 envelope', edit(CBPR, [/pacs\.008\.001\.08/g, 'pacs.008.001.02'])],
  ];
  for (const [name, xml] of variants) await accepted(t, sandbox, xml, name);

  const long = edit(CBPR, [/<d:Ustrd>[^<]*<\/d:Ustrd>\s*<d:Ustrd>[^<]*<\/d:Ustrd>/, `<d:Ustrd>${'A'.repeat(100)}</d:Ustrd><d:Ustrd>${'B'.repeat(100)}</d:Ustrd>`]);
  const clipped = await accepted(t, sandbox, long, 'two long Ustrd lines');
  t.equal(clipped.transaction.debitMemo, `${'A'.repeat(100)} ${'B'.repeat(39)}`, 'joined by a space, 140 characters at most');

  const both = edit(SCT, ['<Strd>', '<Ustrd>Rechnung 4711</Ustrd><Strd>']);
  t.equal((await accepted(t, sandbox, both, 'Ustrd and Strd')).transaction.debitMemo, 'Rechnung 4711', 'Ustrd first; Strd only without Ustrd');
  const none = edit(SCT, [/<RmtInf>[\s\S]*<\/RmtInf>/, '']);
  t.notOk((await accepted(t, sandbox, none, 'no remittance')).transaction.debitMemo, 'no RmtInf: no debitMemo');
});

t.test('open content (SplmtryData/Envlp, an AppHdr signature) may be in any namespace; a prefix bound to the message\'s own is read', async (t) => {
  const sandbox = await funded();
  t.teardown(sandbox.close);
  // docs/payouts.md#refusals: ISO 20022 leaves these two elements' content open
  const supplementary = edit(FEDNOW, ['</CdtTrfTxInf>', '<SplmtryData><Envlp><b:Note xmlns:b="urn:example:bank"><b:Ref>7</b:Ref></b:Note></Envlp></SplmtryData></CdtTrfTxInf>']);
  t.equal((await accepted(t, sandbox, supplementary, 'SplmtryData with a bank\'s own elements')).transaction.creditCurrency, 'USD');
  const signed = edit(FEDWIRE, ['</CreDt>', '</CreDt><Sgntr><ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:SignedInfo/></ds:Signature></Sgntr>']);
  t.equal((await accepted(t, sandbox, signed, 'an AppHdr with an XML signature')).transaction.debitAmount !== undefined, true);
  const prefixed = edit(FEDNOW, ['<IntrBkSttlmAmt Ccy="USD">640.00</IntrBkSttlmAmt>', '<p:IntrBkSttlmAmt xmlns:p="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.13" Ccy="USD">640.00</p:IntrBkSttlmAmt>']);
  t.match((await accepted(t, sandbox, prefixed, 'a prefix bound to the Document\'s namespace')).transaction, { creditAmount: '640.00' });
});

t.test('an EndToEndId of 140 characters, the json reference\'s bound, is kept whole as the externalId', async (t) => {
  const sandbox = await funded();
  t.teardown(sandbox.close);
  // docs/payouts.md#the-pacs008-payload-iso-20022: counted in characters, so 140 of a two-unit character pass
  const id = '\u{1F4B8}'.repeat(140);
  const { transaction } = await accepted(t, sandbox, edit(FEDNOW, ['<EndToEndId>ACME-FN-0004</EndToEndId>', `<EndToEndId>${id}</EndToEndId>`]), 'a 140-character EndToEndId');
  t.equal(transaction.externalId, id);
});

t.test('character references are read as the characters they name, in one pass with the named entities', async (t) => {
  const sandbox = await funded();
  t.teardown(sandbox.close);
  // docs/payouts.md#the-pacs008-payload-iso-20022: &#233; and &#x41; are well-formed XML and mean é and A
  const referenced = edit(FEDNOW,
    [/<RmtInf>[\s\S]*<\/RmtInf>/, '<RmtInf><Ustrd>Caf&#233; &#x41;BC, &amp;#233; stays,</Ustrd><Ustrd><![CDATA[&#233; in CDATA]]></Ustrd></RmtInf>'],
    ['<IntrBkSttlmAmt Ccy="USD">', '<IntrBkSttlmAmt Ccy="&#85;SD">'],
    ['<EndToEndId>ACME-FN-0004</EndToEndId>', '<EndToEndId>ACME&#45;FN&#x2D;0004</EndToEndId>'],
    ['<Id>acct_acme_usd</Id>', '<Id>acct_acme_us&#100;</Id>'],
  );
  const { transaction } = await accepted(t, sandbox, referenced, 'references in text and attributes');
  t.match(transaction, {
    debitInstrument: { account: { id: 'acct_acme_usd' } },
    creditCurrency: 'USD',
    externalId: 'ACME-FN-0004',
    debitMemo: 'Café ABC, &#233; stays, &#233; in CDATA',
  }, 'the debtor id, Ccy and EndToEndId decoded; an escaped "&" and a CDATA section keep "&#233;" as text');
});

interface Refusal {
  name: string;
  xml: string;
  status?: number;
  type: string;
  fieldRef: string;
  message?: RegExp;
}

const twoPayments = (nb: string) =>
  edit(FEDNOW, [/<CdtTrfTxInf>[\s\S]*<\/CdtTrfTxInf>/, (FEDNOW.match(/<CdtTrfTxInf>[\s\S]*<\/CdtTrfTxInf>/)![0] + '\n').repeat(2)], ['<NbOfTxs>1</NbOfTxs>', `<NbOfTxs>${nb}</NbOfTxs>`]);

const REFUSALS: Refusal[] = [
  // one payment per message
  { name: 'a batch of two', xml: twoPayments('2'), type: 'InvalidValue', fieldRef: `${GROUP}.NbOfTxs`, message: /One payment per submission/ },
  { name: 'two payments counted as one', xml: twoPayments('1'), type: 'InvalidValue', fieldRef: `${GROUP}.NbOfTxs`, message: /is 1 but the message holds 2/ },
  { name: 'one payment counted as two', xml: edit(FEDNOW, ['<NbOfTxs>1</NbOfTxs>', '<NbOfTxs>2</NbOfTxs>']), type: 'InvalidValue', fieldRef: `${GROUP}.NbOfTxs` },
  { name: 'NbOfTxs missing', xml: edit(FEDNOW, ['<NbOfTxs>1</NbOfTxs>', '']), type: 'MissingValue', fieldRef: `${GROUP}.NbOfTxs` },
  { name: 'NbOfTxs not a number', xml: edit(FEDNOW, ['<NbOfTxs>1</NbOfTxs>', '<NbOfTxs>one</NbOfTxs>']), type: 'InvalidFormat', fieldRef: `${GROUP}.NbOfTxs` },
  { name: 'no CdtTrfTxInf', xml: edit(FEDNOW, [/<CdtTrfTxInf>[\s\S]*<\/CdtTrfTxInf>/, '']), type: 'MissingValue', fieldRef: TX },
  // group totals
  { name: 'TtlIntrBkSttlmAmt differs', xml: edit(SCT, ['>1875.4<', '>1875.41<']), type: 'InvalidValue', fieldRef: `${GROUP}.TtlIntrBkSttlmAmt`, message: /1875\.41 but the payment's IntrBkSttlmAmt is 1875\.40/ },
  { name: 'TtlIntrBkSttlmAmt in another currency', xml: edit(SCT, ['<TtlIntrBkSttlmAmt Ccy="EUR">', '<TtlIntrBkSttlmAmt Ccy="USD">']), type: 'InvalidValue', fieldRef: `${GROUP}.TtlIntrBkSttlmAmt.@Ccy` },
  { name: 'TtlIntrBkSttlmAmt malformed', xml: edit(SCT, ['>1875.4<', '>1.875,40<']), type: 'InvalidFormat', fieldRef: `${GROUP}.TtlIntrBkSttlmAmt` },
  { name: 'CtrlSum differs', xml: edit(INST, ['<CtrlSum>99.90</CtrlSum>', '<CtrlSum>199.80</CtrlSum>']), type: 'InvalidValue', fieldRef: `${GROUP}.CtrlSum` },
  // amount and currency
  { name: 'settlement currency is not the instrument\'s', xml: edit(INST, ['<IntrBkSttlmAmt Ccy="EUR">', '<IntrBkSttlmAmt Ccy="USD">']), type: 'InvalidValue', fieldRef: `${TX}.IntrBkSttlmAmt.@Ccy`, message: /USD does not match instrument bi_mueller_eur/ },
  { name: 'amount with a comma', xml: edit(INST, ['<CtrlSum>99.90</CtrlSum>', ''], ['>99.90<', '>99,90<']), type: 'InvalidFormat', fieldRef: `${TX}.IntrBkSttlmAmt` },
  // the application header
  { name: 'AppHdr names another message', xml: edit(FEDWIRE, ['<MsgDefIdr>pacs.008.001.08</MsgDefIdr>', '<MsgDefIdr>pacs.009.001.08</MsgDefIdr>']), type: 'InvalidValue', fieldRef: 'AppHdr.MsgDefIdr', message: /takes pacs\.008/ },
  { name: 'AppHdr names another pacs.008 version', xml: edit(FEDWIRE, ['<MsgDefIdr>pacs.008.001.08</MsgDefIdr>', '<MsgDefIdr>pacs.008.001.10</MsgDefIdr>']), type: 'InvalidValue', fieldRef: 'AppHdr.MsgDefIdr', message: /Document is pacs\.008\.001\.08/ },
  { name: 'AppHdr without MsgDefIdr', xml: edit(FEDWIRE, ['<MsgDefIdr>pacs.008.001.08</MsgDefIdr>', '']), type: 'MissingValue', fieldRef: 'AppHdr.MsgDefIdr' },
  { name: 'AppHdr without BizMsgIdr', xml: edit(CBPR, ['<h:BizMsgIdr>SBX-CBPR-BMI-7731</h:BizMsgIdr>', '']), type: 'MissingValue', fieldRef: 'AppHdr.BizMsgIdr' },
  { name: 'AppHdr of head.001.001.05', xml: edit(FEDWIRE, ['xsd:head.001.001.03"', 'xsd:head.001.001.05"']), type: 'InvalidValue', fieldRef: 'AppHdr' },
  { name: 'AppHdr with no namespace', xml: edit(FEDWIRE, [' xmlns="urn:iso:std:iso:20022:tech:xsd:head.001.001.03"', '']), type: 'InvalidValue', fieldRef: 'AppHdr' },
  { name: 'a wrapper without AppHdr', xml: edit(FEDWIRE, [/<AppHdr[\s\S]*<\/AppHdr>/, '']), type: 'MissingValue', fieldRef: 'AppHdr' },
  { name: 'a wrapper with two Documents', xml: edit(FEDWIRE, ['</FedwireFundsMessage>', `${FEDWIRE.match(/<Document[\s\S]*<\/Document>/)![0]}</FedwireFundsMessage>`]), type: 'InvalidValue', fieldRef: 'Document' },
  { name: 'a wrapper with no Document', xml: edit(FEDWIRE, [/<Document[\s\S]*<\/Document>/, '']), type: 'InvalidValue', fieldRef: 'Document' },
  { name: 'pacs.008.001.01', xml: edit(SCT, ['xsd:pacs.008.001.02"', 'xsd:pacs.008.001.01"']), type: 'InvalidValue', fieldRef: 'Document', message: /001\.02 to 001\.13/ },
  { name: 'Document of a prefix declared nowhere', xml: edit(CBPR, [' xmlns:d="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08"', '']), type: 'InvalidValue', fieldRef: 'Document', message: /namespace is missing/ },
  // the debtor
  { name: 'no debtor account', xml: edit(SCT, [/<DbtrAcct>[\s\S]*<\/DbtrAcct>/, '']), type: 'MissingValue', fieldRef: `${TX}.DbtrAcct.Id` },
  { name: 'unknown debtor IBAN', xml: edit(SCT, ['DE89370400440532013000', 'FR7630006000011234567890189']), status: 404, type: 'NotFound', fieldRef: `${TX}.DbtrAcct.Id.IBAN` },
  { name: 'debtor IBAN is the creditor\'s (no deposit instruction shows it)', xml: edit(SCT, ['DE89370400440532013000', 'DE02120300000000202051']), status: 404, type: 'NotFound', fieldRef: `${TX}.DbtrAcct.Id.IBAN` },
  { name: 'unknown debtor account number', xml: edit(FEDWIRE, ['<Id>400012345678</Id>', '<Id>499999999999</Id>']), status: 404, type: 'NotFound', fieldRef: `${TX}.DbtrAcct.Id.Othr.Id` },
  { name: 'unknown debtor account id', xml: edit(FEDNOW, ['<Id>acct_acme_usd</Id>', '<Id>acct_nope</Id>']), status: 404, type: 'NotFound', fieldRef: `${TX}.DbtrAcct.Id.Othr.Id` },
  { name: 'an account number of another programme', xml: edit(FEDWIRE, ['<Id>400012345678</Id>', '<Id>400099990000</Id>']), status: 404, type: 'NotFound', fieldRef: `${TX}.DbtrAcct.Id.Othr.Id` },
  { name: 'an account id of another programme', xml: edit(FEDNOW, ['<Id>acct_acme_usd</Id>', '<Id>acct_other_usd</Id>']), status: 404, type: 'NotFound', fieldRef: `${TX}.DbtrAcct.Id.Othr.Id` },
  { name: 'the account number of another user', xml: edit(FEDWIRE, ['<Id>400012345678</Id>', '<Id>400087654321</Id>']), status: 403, type: 'InvalidValue', fieldRef: `${TX}.DbtrAcct.Id.Othr.Id`, message: /another user/ },
  { name: 'the account id of another user', xml: edit(FEDNOW, ['<Id>acct_acme_usd</Id>', '<Id>acct_jane_usd</Id>']), status: 403, type: 'InvalidValue', fieldRef: `${TX}.DbtrAcct.Id.Othr.Id`, message: /another user/ },
  // the creditor
  { name: 'unknown creditor IBAN', xml: edit(SCT, ['DE02120300000000202051', 'DE75512108001245126199']), status: 404, type: 'NotFound', fieldRef: `${TX}.CdtrAcct.Id.IBAN` },
  { name: 'unknown creditor account number', xml: edit(FEDWIRE, ['<Id>000123456789</Id>', '<Id>000000000001</Id>']), status: 404, type: 'NotFound', fieldRef: `${TX}.CdtrAcct.Id.Othr.Id` },
  { name: 'unknown beneficiary id', xml: edit(FEDNOW, ['<Id>ben_globex</Id>', '<Id>ben_nope</Id>']), status: 404, type: 'NotFound', fieldRef: `${TX}.Cdtr.Id.OrgId.Othr.Id` },
  { name: 'another user\'s beneficiary', xml: edit(FEDNOW, ['<Id>ben_globex</Id>', '<Id>ben_john</Id>']), status: 403, type: 'InvalidValue', fieldRef: `${TX}.Cdtr.Id.OrgId.Othr.Id` },
  { name: 'beneficiary without that account', xml: edit(FEDNOW, ['<Id>000123456789</Id>', '<Id>000000000001</Id>']), status: 404, type: 'NotFound', fieldRef: `${TX}.CdtrAcct.Id.Othr.Id` },
  // XML safety
  { name: 'a DOCTYPE', xml: edit(SCT, ['<Document', '<!DOCTYPE Document>\n<Document']), type: 'InvalidValue', fieldRef: 'body', message: /DOCTYPE/ },
  {
    name: 'an entity bomb',
    xml: edit(SCT, [
      '<Document',
      `<!DOCTYPE Document [<!ENTITY a "aaaaaaaaaa">${Array.from({ length: 9 }, (_, i) => `<!ENTITY ${String.fromCharCode(98 + i)} "${`&${String.fromCharCode(97 + i)};`.repeat(10)}">`).join('')}]>\n<Document`,
    ], ['ACME-SEPA-2026-0042', '&j;']),
    type: 'InvalidValue',
    fieldRef: 'body',
    message: /DOCTYPE/,
  },
  { name: 'an external entity', xml: edit(SCT, ['<Document', '<!DOCTYPE Document [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n<Document'], ['ACME-SEPA-2026-0042', '&x;']), type: 'InvalidValue', fieldRef: 'body' },
  { name: 'not well-formed', xml: SCT.replace('</GrpHdr>', ''), type: 'InvalidFormat', fieldRef: 'body' },
  // not well-formed in ways fast-xml-parser's validator lets through (docs/payouts.md#the-pacs008-payload-iso-20022)
  { name: 'a second, empty root element', xml: `${SCT}<x/>`, type: 'InvalidFormat', fieldRef: 'body', message: /second root element <x>/ },
  { name: 'a second, empty Document after the real one', xml: `${SCT}\n<Document/>`, type: 'InvalidFormat', fieldRef: 'body', message: /second root element <Document>.*line \d+, column 1\)/ },
  { name: 'U+0001 in text', xml: edit(SCT, ['<Dbtr><Nm>', '<Dbtr><Nm>\u0001']), type: 'InvalidFormat', fieldRef: 'body', message: /U\+0001 is not allowed/ },
  { name: 'U+001F in an attribute', xml: edit(SCT, ['<TtlIntrBkSttlmAmt Ccy="EUR">', '<TtlIntrBkSttlmAmt Ccy="EU\u001FR">']), type: 'InvalidFormat', fieldRef: 'body', message: /U\+001F/ },
  { name: 'U+FFFE in text', xml: edit(SCT, ['<Dbtr><Nm>', '<Dbtr><Nm>\uFFFE']), type: 'InvalidFormat', fieldRef: 'body', message: /U\+FFFE/ },
  { name: 'XML 1.1', xml: edit(SCT, ['version="1.0"', 'version="1.1"']), type: 'InvalidFormat', fieldRef: 'body', message: /version="1\.1"/ },
  { name: 'an encoding other than UTF-8', xml: edit(SCT, ['encoding="UTF-8"', 'encoding="UTF-16"']), type: 'InvalidFormat', fieldRef: 'body', message: /encoding="UTF-16"/ },
  // elements pacs.008 allows once
  { name: 'IntrBkSttlmAmt twice', xml: edit(FEDNOW, ['<IntrBkSttlmAmt Ccy="USD">640.00</IntrBkSttlmAmt>', '<IntrBkSttlmAmt Ccy="USD">640.00</IntrBkSttlmAmt><IntrBkSttlmAmt Ccy="USD">5000.00</IntrBkSttlmAmt>']), type: 'InvalidValue', fieldRef: `${TX}.IntrBkSttlmAmt`, message: /appears 2 times/ },
  { name: 'IntrBkSttlmAmt twice, one with a prefix', xml: edit(FEDNOW, ['<IntrBkSttlmAmt Ccy="USD">640.00</IntrBkSttlmAmt>', '<IntrBkSttlmAmt Ccy="USD">640.00</IntrBkSttlmAmt><p:IntrBkSttlmAmt xmlns:p="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.13" Ccy="USD">1.00</p:IntrBkSttlmAmt>']), type: 'InvalidValue', fieldRef: `${TX}.IntrBkSttlmAmt` },
  { name: 'two debtor account ids', xml: edit(FEDNOW, ['<Othr><Id>acct_acme_usd</Id></Othr>', '<Othr><Id>acct_acme_usd</Id><Id>acct_jane_usd</Id></Othr>']), type: 'InvalidValue', fieldRef: `${TX}.DbtrAcct.Id.Othr.Id` },
  { name: 'two group headers', xml: edit(FEDNOW, [/<GrpHdr>[\s\S]*<\/GrpHdr>/, (FEDNOW.match(/<GrpHdr>[\s\S]*<\/GrpHdr>/)![0]).repeat(2)]), type: 'InvalidValue', fieldRef: GROUP },
  { name: 'two AppHdr', xml: edit(FEDWIRE, [/<AppHdr[\s\S]*<\/AppHdr>/, (FEDWIRE.match(/<AppHdr[\s\S]*<\/AppHdr>/)![0]).repeat(2)]), type: 'InvalidValue', fieldRef: 'AppHdr' },
  // an element of another namespace is not the pacs.008 element of that name (docs/payouts.md#refusals)
  { name: 'the transfer in a foreign default namespace', xml: edit(FEDNOW, ['<FIToFICstmrCdtTrf>', '<FIToFICstmrCdtTrf xmlns="urn:evil">']), type: 'InvalidValue', fieldRef: 'FIToFICstmrCdtTrf', message: /is in the namespace "urn:evil"; the elements of this message are in its own, "urn:iso:std:iso:20022:tech:xsd:pacs\.008\.001\.13"/ },
  { name: 'an amount under a foreign prefix', xml: edit(FEDNOW, ['<IntrBkSttlmAmt Ccy="USD">640.00</IntrBkSttlmAmt>', '<x:IntrBkSttlmAmt xmlns:x="urn:other" Ccy="USD">640.00</x:IntrBkSttlmAmt>']), type: 'InvalidValue', fieldRef: `${TX}.IntrBkSttlmAmt` },
  { name: 'an element in no namespace', xml: edit(FEDNOW, ['<MsgId>20260301021000021SBXFN0000004</MsgId>', '<MsgId xmlns="">20260301021000021SBXFN0000004</MsgId>']), type: 'InvalidValue', fieldRef: `${GROUP}.MsgId`, message: /is in no namespace/ },
  { name: 'an AppHdr element in the Document\'s namespace', xml: edit(FEDWIRE, ['<BizSvc>TEST</BizSvc>', '<BizSvc xmlns="urn:iso:std:iso:20022:tech:xsd:pacs.008.001.08">TEST</BizSvc>']), type: 'InvalidValue', fieldRef: 'AppHdr.BizSvc' },
  { name: 'EndToEndId of 141 characters', xml: edit(FEDNOW, ['<EndToEndId>ACME-FN-0004</EndToEndId>', `<EndToEndId>${'E'.repeat(141)}</EndToEndId>`]), type: 'InvalidValue', fieldRef: `${TX}.PmtId.EndToEndId`, message: /141 characters; it may be at most 140/ },
  { name: 'MsgId of 129 characters', xml: edit(FEDNOW, ['<MsgId>20260301021000021SBXFN0000004</MsgId>', `<MsgId>${'M'.repeat(129)}</MsgId>`]), type: 'InvalidValue', fieldRef: `${GROUP}.MsgId`, message: /at most 128/ },
  // a quoted "<!--" made the raw scan skip to a later "-->": the decoder refuses what reaches a value all the same
  { name: 'a NUL reference behind a quoted comment opener', xml: edit(FEDNOW, ['<MsgId>20260301021000021SBXFN0000004</MsgId>', '<MsgId x="<!--">A&#0;B<Q y="-->"/></MsgId>']), type: 'InvalidFormat', fieldRef: 'body', message: /&#0; names no XML character/ },
  { name: 'an undeclared entity behind a quoted comment opener', xml: edit(FEDNOW, ['<MsgId>20260301021000021SBXFN0000004</MsgId>', '<MsgId x="<!--">A&bogus;B<Q y="-->"/></MsgId>']), type: 'InvalidFormat', fieldRef: 'body', message: /&bogus; is not one of the five entities/ },
  { name: 'elements nested 5000 deep', xml: edit(SCT, ['<Dbtr><Nm>', `<Dbtr><Nm>${'<x>'.repeat(5000)}${'</x>'.repeat(5000)}`]), type: 'InvalidFormat', fieldRef: 'body', message: /nested/ },
];

t.test('each broken message is refused naming the element, and nothing is created', async (t) => {
  const sandbox = await funded();
  t.teardown(sandbox.close);
  const before = countTransactions(sandbox);
  for (const refusal of REFUSALS) {
    const response = await submit(sandbox, refusal.xml);
    const status = refusal.status ?? 400;
    t.equal(response.statusCode, status, `${refusal.name}: ${response.body}`);
    const body = json(response);
    t.equal(body.validationErrors?.length, 1, `${refusal.name}: one validation error`);
    t.match(body.validationErrors?.[0], { type: refusal.type, fieldRef: refusal.fieldRef, message: refusal.message ?? /\w/ }, refusal.name);
    if (status === 404) t.match(body, { errorCode: 'NOT_FOUND', message: body.validationErrors[0].message }, `${refusal.name}: the 404 shape`);
    if (status === 403) t.equal(body.errorCode, 'FORBIDDEN', `${refusal.name}: 403 FORBIDDEN`);
    t.equal(countTransactions(sandbox), before, `${refusal.name}: nothing created`);
  }
  const idempotency = prepared<{ n: number }>(sandbox.ctx.db, "SELECT COUNT(*) AS n FROM idempotency_records WHERE scope = 'payout'").get()!;
  t.equal(idempotency.n, 0, 'no Idempotency-Key is spent on a refused message');
  // the same message, fixed, goes through afterwards
  t.equal((await submit(sandbox, FEDNOW)).statusCode, 202);
  t.equal(countTransactions(sandbox), before + 1);
});

t.test('the debtor by the IBAN of a deposit instruction created through the API', async (t) => {
  const sandbox = await funded();
  t.teardown(sandbox.close);
  const created = await sandbox.request('POST', '/v1/accounts/acct_acme_eur/deposit-instructions', { name: 'Acme EUR 2', idempotencyKey: 'eur-instruction-2' });
  t.equal(created.statusCode, 202, created.body);
  await advance(sandbox, 5000);
  const instruction = json(await sandbox.request('GET', '/v1/accounts/acct_acme_eur')).depositInstructions.at(-1);
  const iban = instruction?.fields?.find((field: { key: string }) => field.key === 'iban')?.value as string | undefined;
  if (iban === undefined) {
    t.fail(`no IBAN on the new instruction: ${JSON.stringify(instruction)}`);
    return;
  }
  t.not(iban, 'DE89370400440532013000', 'a new IBAN');
  const active = await accepted(t, sandbox, edit(SCT, ['DE89370400440532013000', iban]), 'debtor by the new IBAN');
  t.match(active.transaction, { debitInstrument: { account: { id: 'acct_acme_eur' } }, creditAmount: '1875.40' });
});

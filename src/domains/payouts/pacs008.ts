import { createRequire } from 'node:module';
import type { XMLParser as XmlParserType, XMLValidator as XmlValidatorType } from 'fast-xml-parser';
import { errors } from '../../core/errors.js';
import type { CreditRail } from '../fees-fx/fees-fx.schema.js';
import type { PayoutOrder } from './payouts.schema.js';

// ISO 20022 pacs.008 (FI to FI customer credit transfer) -> payout order, as banks send it
// (docs/payouts.md#the-pacs008-payload-iso-20022, docs/decisions.md#pacs008-envelope; interface 4.12). Parsed with a real XML parser (fast-xml-parser). The
// `Document` (pacs.008.001.02 to .13, namespace checked) comes alone or inside any wrapper element next to
// a business application header (head.001.001.01 to .04). Namespace prefixes, a BOM, comments and
// `xsi:schemaLocation` are fine; a DOCTYPE (and so any entity declaration) is refused. Every refusal names
// the element path, e.g. `FIToFICstmrCdtTrf.CdtTrfTxInf.IntrBkSttlmAmt` or `AppHdr.MsgDefIdr`.

const DOCUMENT_NAMESPACE = /^urn:iso:std:iso:20022:tech:xsd:pacs\.008\.001\.(\d{2})$/;
const HEADER_NAMESPACE = /^urn:iso:std:iso:20022:tech:xsd:head\.001\.001\.(\d{2})$/;
const MESSAGE_DEFINITION = /^pacs\.008\.001\.(\d{2})$/;
const FIRST_VERSION = 2;
const LAST_VERSION = 13;
const FIRST_HEADER_VERSION = 1;
const LAST_HEADER_VERSION = 4;
/** How deep under the root element the Document may sit (an envelope in an envelope is still found). */
const WRAPPER_DEPTH = 4;
const ROOT = 'FIToFICstmrCdtTrf';
const GROUP = `${ROOT}.GrpHdr`;
const TX = `${ROOT}.CdtTrfTxInf`;
const MEMO_LIMIT = 140;
const DECIMAL = /^\d+(\.\d+)?$/;

type XmlNode = Record<string, unknown>;
type Scope = ReadonlyMap<string, string>;

// Loaded on the first pacs.008 submission, not at start-up (cold start); a synchronous require keeps the
// payout service synchronous.
let loaded: { parser: XmlParserType; validator: typeof XmlValidatorType } | undefined;
function xmlTools(): { parser: XmlParserType; validator: typeof XmlValidatorType } {
  if (!loaded) {
    const { XMLParser, XMLValidator } = createRequire(import.meta.url)('fast-xml-parser') as typeof import('fast-xml-parser');
    loaded = {
      validator: XMLValidator,
      parser: new XMLParser({
        ignoreAttributes: false,
        attributeNamePrefix: '@',
        // amounts and ids stay text exactly as sent: "100.10" must not become the number 100.1
        parseTagValue: false,
        parseAttributeValue: false,
        trimValues: true,
        processEntities: true,
      }),
    };
  }
  return loaded;
}

function isElementKey(key: string): boolean {
  return !key.startsWith('@') && !key.startsWith('#') && !key.startsWith('?');
}

function prefixOf(name: string): string {
  const colon = name.indexOf(':');
  return colon >= 0 ? name.slice(0, colon) : '';
}

function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon >= 0 && !name.startsWith('@') ? name.slice(colon + 1) : name;
}

/** Drop namespace prefixes from element names (attributes keep theirs: xmlns declarations are read first). */
function stripPrefixes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripPrefixes);
  if (value === null || typeof value !== 'object') return value;
  const out: XmlNode = {};
  for (const [key, child] of Object.entries(value as XmlNode)) out[localName(key)] = stripPrefixes(child);
  return out;
}

/** The namespace declarations in force inside `node`: the parent's, plus its own `xmlns` attributes. */
function scopeOf(node: unknown, parent: Scope): Scope {
  if (node === null || typeof node !== 'object') return parent;
  let scope: Map<string, string> | undefined;
  for (const [key, value] of Object.entries(node as XmlNode)) {
    if (typeof value !== 'string' || (key !== '@xmlns' && !key.startsWith('@xmlns:'))) continue;
    scope ??= new Map(parent);
    scope.set(key === '@xmlns' ? '' : key.slice('@xmlns:'.length), value);
  }
  return scope ?? parent;
}

function asList(value: unknown): unknown[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/** The first element of that name (repeated elements parse as arrays). */
function child(node: unknown, name: string): unknown {
  if (node === null || typeof node !== 'object') return undefined;
  return asList((node as XmlNode)[name])[0];
}

/** Every element of that name under `node`. */
function children(node: unknown, name: string): unknown[] {
  if (node === null || typeof node !== 'object') return [];
  return asList((node as XmlNode)[name]);
}

function at(node: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((current, name) => child(current, name), node);
}

/** Text content of an element (a plain string, or `#text` when it has attributes); '' counts as missing. */
function textOf(node: unknown): string | undefined {
  const value = typeof node === 'string' ? node : node && typeof node === 'object' ? (node as XmlNode)['#text'] : undefined;
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

function attributeOf(node: unknown, name: string): string | undefined {
  const value = node && typeof node === 'object' ? (node as XmlNode)[`@${name}`] : undefined;
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

function missing(path: string, what: string): never {
  throw errors.field('MissingValue', path, `${path} is required: ${what}`);
}

function invalid(path: string, message: string): never {
  throw errors.field('InvalidValue', path, message);
}

/** "0100.50" and "100.5" are the same amount; both must already match DECIMAL. */
function sameDecimal(a: string, b: string): boolean {
  const canonical = (value: string) => {
    const [whole, fraction = ''] = value.split('.');
    return `${whole!.replace(/^0+(?=\d)/, '')}.${fraction.replace(/0+$/, '')}`;
  };
  return canonical(a) === canonical(b);
}

/** Cut to `limit` characters without splitting a surrogate pair. */
function clip(text: string, limit: number): string {
  const characters = Array.from(text);
  return characters.length <= limit ? text : characters.slice(0, limit).join('').trimEnd();
}

interface Located {
  /** The Document element, prefixes stripped. */
  document: unknown;
  documentNamespace: string | undefined;
  /** The AppHdr next to it when the message came in a wrapper. */
  header?: { node: unknown; namespace: string | undefined };
}

/** The Document: the root element itself, or found under a wrapper element next to its AppHdr. */
function locateDocument(parsed: XmlNode): Located {
  const rootKeys = Object.keys(parsed).filter(isElementKey);
  const rootKey = rootKeys[0];
  if (!rootKey) invalid('Document', 'Not a pacs.008 message: the XML has no root element');
  const rootNode = parsed[rootKey];
  const rootScope = scopeOf(rootNode, new Map());
  if (localName(rootKey) === 'Document') {
    return { document: stripPrefixes(rootNode), documentNamespace: rootScope.get(prefixOf(rootKey)) };
  }

  // Breadth first, so the shallowest Document wins; the wrapper's own name does not matter
  // (BusMsgEnvlp, Envelope, Message, a bank's own).
  let level: Array<{ node: unknown; scope: Scope }> = [{ node: rootNode, scope: rootScope }];
  for (let depth = 0; depth < WRAPPER_DEPTH && level.length > 0; depth += 1) {
    const next: Array<{ node: unknown; scope: Scope }> = [];
    for (const { node, scope } of level) {
      if (node === null || typeof node !== 'object') continue;
      const keys = Object.keys(node as XmlNode).filter(isElementKey);
      const documentKey = keys.find((key) => localName(key) === 'Document');
      if (documentKey !== undefined) {
        const documents = asList((node as XmlNode)[documentKey]);
        if (documents.length > 1) invalid('Document', `One pacs.008 Document per submission; the wrapper holds ${documents.length}`);
        const headerKey = keys.find((key) => localName(key) === 'AppHdr');
        if (headerKey === undefined) {
          missing('AppHdr', 'a Document inside a wrapper element comes with its business application header (AppHdr, head.001.001.01 to .04)');
        }
        const documentNode = documents[0];
        const headerNode = asList((node as XmlNode)[headerKey])[0];
        return {
          document: stripPrefixes(documentNode),
          documentNamespace: scopeOf(documentNode, scope).get(prefixOf(documentKey)),
          header: { node: stripPrefixes(headerNode), namespace: scopeOf(headerNode, scope).get(prefixOf(headerKey)) },
        };
      }
      for (const key of keys) {
        for (const element of asList((node as XmlNode)[key])) next.push({ node: element, scope: scopeOf(element, scope) });
      }
    }
    level = next;
  }
  return invalid('Document', `Not a pacs.008 message: the root element is ${localName(rootKey)} and no Document element was found in it`);
}

/** The pacs.008 version of the Document namespace (2 to 13). */
function documentVersion(namespace: string | undefined): string {
  const match = namespace === undefined ? null : DOCUMENT_NAMESPACE.exec(namespace);
  if (!match) {
    invalid(
      'Document',
      `Not a pacs.008 message: the Document namespace is ${namespace === undefined ? 'missing' : `"${namespace}"`}; expected urn:iso:std:iso:20022:tech:xsd:pacs.008.001.NN`,
    );
  }
  const number = Number(match[1]);
  if (number < FIRST_VERSION || number > LAST_VERSION) invalid('Document', `pacs.008.001.${match[1]} is not accepted; versions 001.02 to 001.13 are`);
  return match[1]!;
}

/** The business application header: head.001.001.01 to .04, naming this pacs.008 version, with a BizMsgIdr. */
function checkHeader(header: NonNullable<Located['header']>, version: string): void {
  const match = header.namespace === undefined ? null : HEADER_NAMESPACE.exec(header.namespace);
  const number = match ? Number(match[1]) : NaN;
  if (!match || number < FIRST_HEADER_VERSION || number > LAST_HEADER_VERSION) {
    invalid(
      'AppHdr',
      `The AppHdr namespace is ${header.namespace === undefined ? 'missing' : `"${header.namespace}"`}; expected urn:iso:std:iso:20022:tech:xsd:head.001.001.01 to .04`,
    );
  }
  textOf(child(header.node, 'BizMsgIdr')) ?? missing('AppHdr.BizMsgIdr', 'the business message identifier of the application header');
  const definition = textOf(child(header.node, 'MsgDefIdr')) ?? missing('AppHdr.MsgDefIdr', `the message definition, here pacs.008.001.${version}`);
  const named = MESSAGE_DEFINITION.exec(definition);
  if (!named) invalid('AppHdr.MsgDefIdr', `AppHdr.MsgDefIdr is "${definition}": this endpoint takes pacs.008 messages (pacs.008.001.${version})`);
  if (named[1] !== version) {
    invalid('AppHdr.MsgDefIdr', `AppHdr.MsgDefIdr names ${definition} but the Document is pacs.008.001.${version}`);
  }
}

/** GrpHdr/NbOfTxs must count the CdtTrfTxInf, and be 1: one submission is one payment and one transactionId (docs/payouts.md#one-payment-per-message). */
function singleTransaction(document: unknown): unknown {
  const declared = textOf(at(document, `${GROUP}.NbOfTxs`)) ?? missing(`${GROUP}.NbOfTxs`, 'the number of transactions, 1');
  if (!/^\d{1,15}$/.test(declared)) throw errors.field('InvalidFormat', `${GROUP}.NbOfTxs`, `${GROUP}.NbOfTxs must be a whole number; got "${declared}"`);
  const transactions = children(at(document, ROOT), 'CdtTrfTxInf');
  if (transactions.length === 0) missing(TX, 'one credit transfer transaction');
  if (Number(declared) !== transactions.length) {
    invalid(`${GROUP}.NbOfTxs`, `${GROUP}.NbOfTxs is ${declared} but the message holds ${transactions.length} CdtTrfTxInf`);
  }
  if (transactions.length > 1) {
    invalid(
      `${GROUP}.NbOfTxs`,
      `One payment per submission: the message holds ${transactions.length} CdtTrfTxInf; send each as its own message (each submission gets one transactionId)`,
    );
  }
  return transactions[0];
}

/** TtlIntrBkSttlmAmt and CtrlSum of the group header, when present, must be the payment's amount. */
function checkGroupTotals(document: unknown, amount: string, currency: string): void {
  const totalNode = at(document, `${GROUP}.TtlIntrBkSttlmAmt`);
  const total = textOf(totalNode);
  if (total !== undefined) {
    if (!DECIMAL.test(total)) throw errors.field('InvalidFormat', `${GROUP}.TtlIntrBkSttlmAmt`, `${GROUP}.TtlIntrBkSttlmAmt must be a decimal amount; got "${total}"`);
    const totalCurrency = attributeOf(totalNode, 'Ccy');
    if (totalCurrency !== undefined && totalCurrency !== currency) {
      invalid(`${GROUP}.TtlIntrBkSttlmAmt.@Ccy`, `${GROUP}.TtlIntrBkSttlmAmt is in ${totalCurrency} but the payment is in ${currency}`);
    }
    if (!sameDecimal(total, amount)) invalid(`${GROUP}.TtlIntrBkSttlmAmt`, `${GROUP}.TtlIntrBkSttlmAmt is ${total} but the payment's IntrBkSttlmAmt is ${amount}`);
  }
  const controlSum = textOf(at(document, `${GROUP}.CtrlSum`));
  if (controlSum !== undefined) {
    if (!DECIMAL.test(controlSum)) throw errors.field('InvalidFormat', `${GROUP}.CtrlSum`, `${GROUP}.CtrlSum must be a decimal amount; got "${controlSum}"`);
    if (!sameDecimal(controlSum, amount)) invalid(`${GROUP}.CtrlSum`, `${GROUP}.CtrlSum is ${controlSum} but the payment's IntrBkSttlmAmt is ${amount}`);
  }
}

/** Every Ustrd line joined by a space; else the first structured creditor reference; at most 140 characters. */
function remittanceOf(tx: unknown): string | null {
  const remittance = child(tx, 'RmtInf');
  const lines = children(remittance, 'Ustrd').map(textOf).filter((line): line is string => line !== undefined);
  if (lines.length > 0) return clip(lines.join(' '), MEMO_LIMIT);
  for (const structured of children(remittance, 'Strd')) {
    const reference = textOf(at(structured, 'CdtrRefInf.Ref'));
    if (reference !== undefined) return clip(reference, MEMO_LIMIT);
  }
  return null;
}

/**
 * Rails the message asks for, in order of precedence (docs/payouts.md#rail, docs/decisions.md#pacs008-rail): a Fedwire settlement
 * (`SttlmInf/ClrSys/Cd` FDW) or urgent service level (URGP) asks for a wire, the local instrument INST for
 * SEPA Instant (it comes with SvcLvl SEPA in an SCT Inst message, so it goes first), SvcLvl SEPA for SEPA.
 * Payment type information may sit on the group header (older versions) or on the transaction.
 */
function requestedRailsOf(document: unknown, tx: unknown): CreditRail[] {
  const paymentTypes = [at(document, `${GROUP}.PmtTpInf`), child(tx, 'PmtTpInf')];
  const code = (node: unknown) => textOf(child(node, 'Cd'))?.toUpperCase();
  const serviceLevels = paymentTypes.flatMap((types) => children(types, 'SvcLvl').map(code));
  const localInstruments = paymentTypes.flatMap((types) => children(types, 'LclInstrm').map(code));
  const clearingSystem = code(at(document, `${GROUP}.SttlmInf.ClrSys`));
  const rails: CreditRail[] = [];
  if (clearingSystem === 'FDW' || serviceLevels.includes('URGP')) rails.push('WIRE');
  if (localInstruments.includes('INST')) rails.push('SEPA_INSTANT');
  if (serviceLevels.includes('SEPA')) rails.push('SEPA');
  return rails;
}

/** The debit account as the message names it: DbtrAcct/Id/IBAN, or DbtrAcct/Id/Othr/Id. */
function debtorOf(tx: unknown): Pick<PayoutOrder, 'debtor'> & { ref: string } {
  const iban = textOf(at(tx, 'DbtrAcct.Id.IBAN'));
  if (iban !== undefined) return { debtor: { by: 'IBAN', value: iban }, ref: `${TX}.DbtrAcct.Id.IBAN` };
  const other = textOf(at(tx, 'DbtrAcct.Id.Othr.Id'));
  if (other !== undefined) return { debtor: { by: 'OTHR', value: other }, ref: `${TX}.DbtrAcct.Id.Othr.Id` };
  return missing(
    `${TX}.DbtrAcct.Id`,
    'the debit account: its id (acct_...) or account number in DbtrAcct/Id/Othr/Id, or its IBAN in DbtrAcct/Id/IBAN, as shown in your deposit instructions',
  );
}

/** PmtId/EndToEndId; NOTPROVIDED is how the ISO 20022 rulebooks write "none" (docs/decisions.md#pacs008-mapping). */
function endToEndIdOf(tx: unknown): string | null {
  const id = textOf(at(tx, 'PmtId.EndToEndId'));
  return id === undefined || id === 'NOTPROVIDED' ? null : id;
}

const PREDEFINED_ENTITIES = new Set(['amp', 'lt', 'gt', 'quot', 'apos']);
// Comments, CDATA sections and processing instructions hold text that is not markup; everything else is scanned
// for references.
const REFERENCE_OR_LITERAL = /<!--[\s\S]*?-->|<!\[CDATA\[[\s\S]*?\]\]>|<\?[\s\S]*?\?>|&(#x[0-9A-Fa-f]+|#[0-9]+|[^;\s<&]*);/g;

/** XML 1.0's Char production: what a character reference may name. */
function isXmlChar(code: number): boolean {
  return code === 0x9 || code === 0xa || code === 0xd || (code >= 0x20 && code <= 0xd7ff) || (code >= 0xe000 && code <= 0xfffd) || (code >= 0x10000 && code <= 0x10ffff);
}

/** The first entity or character reference that is not well-formed in a document without a DOCTYPE, if any. */
function badReference(text: string): { what: string; line: number; column: number } | undefined {
  for (const match of text.matchAll(REFERENCE_OR_LITERAL)) {
    const name = match[1];
    if (name === undefined) continue; // a comment, CDATA section or processing instruction
    let what: string | undefined;
    if (name.startsWith('#')) {
      const code = name.startsWith('#x') ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      if (!isXmlChar(code)) what = `the character reference &${name}; names no XML character`;
    } else if (!PREDEFINED_ENTITIES.has(name)) {
      what = `the entity &${name}; is not defined (only &amp; &lt; &gt; &quot; &apos; and character references are)`;
    }
    if (what) {
      const before = text.slice(0, match.index);
      const line = before.split('\n').length;
      return { what, line, column: match.index - before.lastIndexOf('\n') };
    }
  }
  return undefined;
}

/** Parse a decoded pacs.008 message (a Document, or a wrapper with AppHdr and Document) into a payout order. */
export function parsePacs008(xml: string): PayoutOrder {
  const { parser, validator } = xmlTools();
  const text = xml.replace(/^\uFEFF/, '');
  // No DOCTYPE means no entity declarations: nothing to expand into a billion laughs.
  if (/<!DOCTYPE/i.test(text)) {
    throw errors.field('InvalidValue', 'body', 'The pacs.008 message must not contain a DOCTYPE declaration');
  }
  const valid = validator.validate(text);
  if (valid !== true) {
    throw errors.field('InvalidFormat', 'body', `The decoded payload is not well-formed XML: ${valid.err.msg} (line ${valid.err.line}, column ${valid.err.col})`);
  }
  // fast-xml-parser's validator lets any &name; through; without a DOCTYPE only the five predefined entities and
  // character references to XML characters are well-formed (docs/payouts.md#the-pacs008-payload-iso-20022).
  const reference = badReference(text);
  if (reference) {
    throw errors.field('InvalidFormat', 'body', `The decoded payload is not well-formed XML: ${reference.what} (line ${reference.line}, column ${reference.column})`);
  }
  let parsed: XmlNode;
  try {
    parsed = parser.parse(text) as XmlNode;
  } catch (error) {
    // the parser's own limits (elements nested over 100 deep, say): the message is refused, never a 500
    throw errors.field('InvalidFormat', 'body', `The decoded payload cannot be read as a pacs.008 message: ${(error as Error).message}`);
  }
  const located = locateDocument(parsed);
  const version = documentVersion(located.documentNamespace);
  if (located.header) checkHeader(located.header, version);
  const document = located.document;

  if (at(document, ROOT) === undefined) missing(ROOT, 'the FIToFICstmrCdtTrf message body');
  const messageId = textOf(at(document, `${GROUP}.MsgId`)) ?? missing(`${GROUP}.MsgId`, 'the message identification');
  const tx = singleTransaction(document);

  const amountNode = child(tx, 'IntrBkSttlmAmt');
  const amount = textOf(amountNode) ?? missing(`${TX}.IntrBkSttlmAmt`, 'the interbank settlement amount, e.g. <IntrBkSttlmAmt Ccy="USD">100.00</IntrBkSttlmAmt>');
  const currency = attributeOf(amountNode, 'Ccy') ?? missing(`${TX}.IntrBkSttlmAmt.@Ccy`, 'the Ccy attribute of IntrBkSttlmAmt');
  if (!DECIMAL.test(amount)) {
    throw errors.field('InvalidFormat', `${TX}.IntrBkSttlmAmt`, `${TX}.IntrBkSttlmAmt must be a decimal amount such as 100.00; got "${amount}"`);
  }
  checkGroupTotals(document, amount, currency);

  const { debtor, ref: debtorRef } = debtorOf(tx);

  const orgId = textOf(at(tx, 'Cdtr.Id.OrgId.Othr.Id'));
  const beneficiaryId = orgId ?? textOf(at(tx, 'Cdtr.Id.PrvtId.Othr.Id'));
  const iban = textOf(at(tx, 'CdtrAcct.Id.IBAN'));
  const accountNumber = iban === undefined ? textOf(at(tx, 'CdtrAcct.Id.Othr.Id')) : undefined;
  if (beneficiaryId === undefined && iban === undefined && accountNumber === undefined) {
    missing(`${TX}.Cdtr.Id`, 'the beneficiary id in Cdtr/Id/OrgId/Othr/Id (or PrvtId/Othr/Id), or its account in CdtrAcct/Id/IBAN or CdtrAcct/Id/Othr/Id');
  }
  const creditor: PayoutOrder['creditor'] = {};
  if (beneficiaryId !== undefined) creditor.beneficiaryId = beneficiaryId;
  if (iban !== undefined) creditor.iban = iban;
  if (accountNumber !== undefined) creditor.accountNumber = accountNumber;
  const beneficiaryRef = orgId !== undefined ? `${TX}.Cdtr.Id.OrgId.Othr.Id` : `${TX}.Cdtr.Id.PrvtId.Othr.Id`;
  const accountRef = iban !== undefined ? `${TX}.CdtrAcct.Id.IBAN` : `${TX}.CdtrAcct.Id.Othr.Id`;

  return {
    messageId,
    debtor,
    creditor,
    instrumentId: null,
    amount,
    currency,
    debitMemo: remittanceOf(tx),
    externalId: endToEndIdOf(tx),
    purpose: null,
    requestedRails: requestedRailsOf(document, tx),
    refs: {
      debitAccountId: debtorRef,
      beneficiaryId: beneficiaryRef,
      account: accountRef,
      instrumentId: accountRef,
      amount: `${TX}.IntrBkSttlmAmt`,
      currency: `${TX}.IntrBkSttlmAmt.@Ccy`,
    },
  };
}

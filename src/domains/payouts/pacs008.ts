import { createRequire } from 'node:module';
import type { XMLParser as XmlParserType, XMLValidator as XmlValidatorType } from 'fast-xml-parser';
import { errors } from '../../http/errors.js';
import type { PayoutOrder } from './payouts.schema.js';

// ISO 20022 pacs.008 (FI to FI customer credit transfer) -> payout order, per contract 6. Parsed with a
// real XML parser (fast-xml-parser); the namespace must be pacs.008.001.02 to .13. Namespace prefixes
// (`<ns:Document xmlns:ns=...>`) are accepted. Errors name the element path, e.g.
// `FIToFICstmrCdtTrf.CdtTrfTxInf.IntrBkSttlmAmt`.

const NAMESPACE = /^urn:iso:std:iso:20022:tech:xsd:pacs\.008\.001\.(\d{2})$/;
const FIRST_VERSION = 2;
const LAST_VERSION = 13;
const ROOT = 'FIToFICstmrCdtTrf';
const TX = `${ROOT}.CdtTrfTxInf`;

type XmlNode = Record<string, unknown>;

// Loaded on the first pacs.008 submission, not at start-up (cold start, issue 9); a synchronous require
// keeps the payout service synchronous.
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

/** The first element of that name (repeated elements parse as arrays). */
function child(node: unknown, name: string): unknown {
  if (node === null || typeof node !== 'object') return undefined;
  const value = (node as XmlNode)[name];
  return Array.isArray(value) ? value[0] : value;
}

function at(node: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((current, name) => child(current, name), node);
}

/** Text content of an element (a plain string, or `#text` when it has attributes); '' counts as missing. */
function textOf(node: unknown): string | undefined {
  const value = typeof node === 'string' ? node : node && typeof node === 'object' ? (node as XmlNode)['#text'] : undefined;
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

function missing(path: string, what: string): never {
  throw errors.field('MissingValue', path, `${path} is required: ${what}`);
}

/** Parse a decoded pacs.008 document into a payout order (contract 6 mapping). */
export function parsePacs008(xml: string): PayoutOrder {
  const { parser, validator: XMLValidator } = xmlTools();
  if (/<!DOCTYPE/i.test(xml)) {
    throw errors.field('InvalidValue', 'body', 'The pacs.008 document must not contain a DOCTYPE declaration');
  }
  const valid = XMLValidator.validate(xml);
  if (valid !== true) {
    throw errors.field('InvalidFormat', 'body', `The decoded payload is not well-formed XML: ${valid.err.msg} (line ${valid.err.line}, column ${valid.err.col})`);
  }
  const parsed = parser.parse(xml) as XmlNode;
  const rootKey = Object.keys(parsed).find((key) => !key.startsWith('?') && !key.startsWith('#'));
  if (!rootKey || localName(rootKey) !== 'Document') {
    throw errors.field('InvalidValue', 'Document', `Not a pacs.008 message: the root element is ${rootKey ?? 'missing'}, expected Document`);
  }
  const prefix = rootKey.includes(':') ? rootKey.slice(0, rootKey.indexOf(':')) : null;
  const rootNode = parsed[rootKey];
  const namespace = rootNode && typeof rootNode === 'object' ? (rootNode as XmlNode)[prefix ? `@xmlns:${prefix}` : '@xmlns'] : undefined;
  const version = typeof namespace === 'string' ? NAMESPACE.exec(namespace) : null;
  if (!version) {
    throw errors.field(
      'InvalidValue',
      'Document',
      `Not a pacs.008 message: the Document namespace is ${typeof namespace === 'string' ? `"${namespace}"` : 'missing'}; expected urn:iso:std:iso:20022:tech:xsd:pacs.008.001.NN`,
    );
  }
  const number = Number(version[1]);
  if (number < FIRST_VERSION || number > LAST_VERSION) {
    throw errors.field('InvalidValue', 'Document', `pacs.008.001.${version[1]} is not accepted; versions 001.02 to 001.13 are`);
  }

  const document = stripPrefixes(rootNode);
  if (at(document, ROOT) === undefined) missing(ROOT, 'the FIToFICstmrCdtTrf message body');
  const messageId = textOf(at(document, `${ROOT}.GrpHdr.MsgId`)) ?? missing(`${ROOT}.GrpHdr.MsgId`, 'the message identification');
  const tx = at(document, TX);
  if (tx === undefined) missing(TX, 'one credit transfer transaction');

  const amountNode = child(tx, 'IntrBkSttlmAmt');
  const amount = textOf(amountNode) ?? missing(`${TX}.IntrBkSttlmAmt`, 'the interbank settlement amount, e.g. <IntrBkSttlmAmt Ccy="USD">100.00</IntrBkSttlmAmt>');
  const currencyAttribute = amountNode && typeof amountNode === 'object' ? (amountNode as XmlNode)['@Ccy'] : undefined;
  const currency =
    typeof currencyAttribute === 'string' && currencyAttribute.trim() !== ''
      ? currencyAttribute.trim()
      : missing(`${TX}.IntrBkSttlmAmt.@Ccy`, 'the Ccy attribute of IntrBkSttlmAmt');

  const debitAccountId = textOf(at(tx, 'DbtrAcct.Id.Othr.Id')) ?? missing(`${TX}.DbtrAcct.Id.Othr.Id`, 'the debit account id (acct_...)');

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

  const memo = textOf(at(tx, 'RmtInf.Ustrd'));
  return {
    messageId,
    debitAccountId,
    creditor,
    instrumentId: null,
    amount,
    currency,
    debitMemo: memo === undefined ? null : memo.slice(0, 140),
    externalId: textOf(at(tx, 'PmtId.EndToEndId')) ?? null,
    purpose: null,
    refs: {
      debitAccountId: `${TX}.DbtrAcct.Id.Othr.Id`,
      beneficiaryId: beneficiaryRef,
      account: accountRef,
      instrumentId: accountRef,
      amount: `${TX}.IntrBkSttlmAmt`,
      currency: `${TX}.IntrBkSttlmAmt.@Ccy`,
    },
  };
}

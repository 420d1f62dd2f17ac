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
/** The json payload's messageId bound (payouts.schema.ts), for GrpHdr/MsgId too. */
const MESSAGE_ID_LIMIT = 128;
/** The json payload's `reference` bound (payouts.schema.ts): both become the payment's externalId. */
const EXTERNAL_ID_LIMIT = 140;
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
        // fast-xml-parser's own decoder expands only the five named entities; ours also expands character
        // references, in the same single pass (docs/payouts.md#the-pacs008-payload-iso-20022)
        entityDecoder: { decode: decodeReferences, reset: ignore, setXmlVersion: ignore, addInputEntities: ignore, setExternalEntities: ignore },
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

/** Elements whose content may be in any namespace (docs/payouts.md#refusals). */
const OPEN_CONTENT: ReadonlySet<string> = new Set(['Envlp', 'Sgntr']);

/**
 * Drop namespace prefixes from the element names below `node` (attributes keep theirs: xmlns declarations are read
 * first), once each element is known to be in `namespace`, its message's own: one in another namespace is not the
 * pacs.008 element of that name, and is refused on its path rather than read as one (docs/payouts.md#refusals).
 * Below the two elements whose content ISO 20022 leaves open, a Document's `SplmtryData/Envlp` and an AppHdr's `Sgntr`
 * (an XML signature), nothing is checked. `path` is the node's own.
 */
function stripPrefixes(node: unknown, scope: Scope, namespace: string | undefined, path: string): unknown {
  if (node === null || typeof node !== 'object') return node;
  const out: XmlNode = {};
  for (const [key, value] of Object.entries(node as XmlNode)) {
    const name = localName(key);
    if (!isElementKey(key)) {
      out[name] = value;
      continue;
    }
    const ref = path === '' ? name : `${path}.${name}`;
    const stripped = asList(value).map((element) => {
      const inner = scopeOf(element, scope);
      const own = inner.get(prefixOf(key)) || undefined; // xmlns="" takes the default namespace away
      if (namespace !== undefined && own !== namespace) {
        invalid(ref, `${ref} is in ${own === undefined ? 'no namespace' : `the namespace "${own}"`}; the elements of this message are in its own, "${namespace}"`);
      }
      return stripPrefixes(element, inner, OPEN_CONTENT.has(name) ? undefined : namespace, ref);
    });
    const kept = Array.isArray(value) ? stripped : stripped[0];
    // `<a:Id>` next to `<b:Id>` is two Id elements: both are kept, so a repeated element is seen (docs/payouts.md#refusals)
    out[name] = Object.hasOwn(out, name) ? [...asList(out[name]), ...asList(kept)] : kept;
  }
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

/**
 * The element of that name, which pacs.008 allows once ([1..1] or [0..1]): a repeat is refused naming `ref`, its
 * path, rather than one copy read and the other ignored (docs/payouts.md#refusals). Repeated elements parse as arrays.
 */
function child(node: unknown, name: string, ref: string): unknown {
  if (node === null || typeof node !== 'object') return undefined;
  const elements = asList((node as XmlNode)[name]);
  if (elements.length > 1) invalid(ref, `${ref} appears ${elements.length} times; pacs.008 allows it once`);
  return elements[0];
}

/** Every element of that name under `node`. */
function children(node: unknown, name: string): unknown[] {
  if (node === null || typeof node !== 'object') return [];
  return asList((node as XmlNode)[name]);
}

/** The element at `path` below `node`, each step allowed once; `base` is the path of `node` for refusals. */
function at(node: unknown, path: string, base = ''): unknown {
  let current = node;
  let ref = base;
  for (const name of path.split('.')) {
    ref = ref === '' ? name : `${ref}.${name}`;
    current = child(current, name, ref);
  }
  return current;
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
    const documentNamespace = rootScope.get(prefixOf(rootKey));
    return { document: stripPrefixes(rootNode, rootScope, documentNamespace, ''), documentNamespace };
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
        const headerNode = child(node, headerKey, 'AppHdr');
        const documentScope = scopeOf(documentNode, scope);
        const headerScope = scopeOf(headerNode, scope);
        const documentNamespace = documentScope.get(prefixOf(documentKey));
        const headerNamespace = headerScope.get(prefixOf(headerKey));
        return {
          document: stripPrefixes(documentNode, documentScope, documentNamespace, ''),
          documentNamespace,
          header: { node: stripPrefixes(headerNode, headerScope, headerNamespace, 'AppHdr'), namespace: headerNamespace },
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
  textOf(child(header.node, 'BizMsgIdr', 'AppHdr.BizMsgIdr')) ?? missing('AppHdr.BizMsgIdr', 'the business message identifier of the application header');
  const definition = textOf(child(header.node, 'MsgDefIdr', 'AppHdr.MsgDefIdr')) ?? missing('AppHdr.MsgDefIdr', `the message definition, here pacs.008.001.${version}`);
  const named = MESSAGE_DEFINITION.exec(definition);
  if (!named) invalid('AppHdr.MsgDefIdr', `AppHdr.MsgDefIdr is "${definition}": this endpoint takes pacs.008 messages (pacs.008.001.${version})`);
  if (named[1] !== version) {
    invalid('AppHdr.MsgDefIdr', `AppHdr.MsgDefIdr names ${definition} but the Document is pacs.008.001.${version}`);
  }
}

/** GrpHdr/MsgId, echoed as `messageId`: bounded as the json payload's messageId is (docs/payouts.md#the-pacs008-payload-iso-20022). */
function messageIdOf(document: unknown): string {
  const messageId = textOf(at(document, `${GROUP}.MsgId`)) ?? missing(`${GROUP}.MsgId`, 'the message identification');
  const length = Array.from(messageId).length;
  if (length > MESSAGE_ID_LIMIT) invalid(`${GROUP}.MsgId`, `${GROUP}.MsgId is ${length} characters; it may be at most ${MESSAGE_ID_LIMIT}`);
  return messageId;
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
  const remittance = child(tx, 'RmtInf', `${TX}.RmtInf`);
  const lines = children(remittance, 'Ustrd').map(textOf).filter((line): line is string => line !== undefined);
  if (lines.length > 0) return clip(lines.join(' '), MEMO_LIMIT);
  for (const structured of children(remittance, 'Strd')) {
    const reference = textOf(at(structured, 'CdtrRefInf.Ref', `${TX}.RmtInf.Strd`));
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
  const paymentTypes = [
    { node: at(document, `${GROUP}.PmtTpInf`), ref: `${GROUP}.PmtTpInf` },
    { node: child(tx, 'PmtTpInf', `${TX}.PmtTpInf`), ref: `${TX}.PmtTpInf` },
  ];
  const code = (node: unknown, ref: string) => textOf(child(node, 'Cd', `${ref}.Cd`))?.toUpperCase();
  // SvcLvl may repeat from version 08 on
  const codesOf = (element: string) => paymentTypes.flatMap(({ node, ref }) => children(node, element).map((one) => code(one, `${ref}.${element}`)));
  const serviceLevels = codesOf('SvcLvl');
  const localInstruments = codesOf('LclInstrm');
  const clearingSystem = code(at(document, `${GROUP}.SttlmInf.ClrSys`), `${GROUP}.SttlmInf.ClrSys`);
  const rails: CreditRail[] = [];
  if (clearingSystem === 'FDW' || serviceLevels.includes('URGP')) rails.push('WIRE');
  if (localInstruments.includes('INST')) rails.push('SEPA_INSTANT');
  if (serviceLevels.includes('SEPA')) rails.push('SEPA');
  return rails;
}

/** The debit account as the message names it: DbtrAcct/Id/IBAN, or DbtrAcct/Id/Othr/Id. */
function debtorOf(tx: unknown): Pick<PayoutOrder, 'debtor'> & { ref: string } {
  const iban = textOf(at(tx, 'DbtrAcct.Id.IBAN', TX));
  if (iban !== undefined) return { debtor: { by: 'IBAN', value: iban }, ref: `${TX}.DbtrAcct.Id.IBAN` };
  const other = textOf(at(tx, 'DbtrAcct.Id.Othr.Id', TX));
  if (other !== undefined) return { debtor: { by: 'OTHR', value: other }, ref: `${TX}.DbtrAcct.Id.Othr.Id` };
  return missing(
    `${TX}.DbtrAcct.Id`,
    'the debit account: its id (acct_...) or account number in DbtrAcct/Id/Othr/Id, or its IBAN in DbtrAcct/Id/IBAN, as shown in your deposit instructions',
  );
}

/** Cdtr/Id/OrgId/Othr/Id or .../PrvtId/Othr/Id: Othr may repeat ([0..*]), the first names the beneficiary (docs/payouts.md#the-pacs008-payload-iso-20022). */
function partyIdOf(tx: unknown, kind: 'OrgId' | 'PrvtId'): string | undefined {
  const first = children(at(tx, `Cdtr.Id.${kind}`, TX), 'Othr')[0];
  return textOf(child(first, 'Id', `${TX}.Cdtr.Id.${kind}.Othr.Id`));
}

/** PmtId/EndToEndId; NOTPROVIDED is how the ISO 20022 rulebooks write "none" (docs/decisions.md#pacs008-mapping). */
/** PmtId/EndToEndId, kept as `externalId`: bounded as the json payload's `reference` is (docs/payouts.md#the-pacs008-payload-iso-20022). */
function endToEndIdOf(tx: unknown): string | null {
  const id = textOf(at(tx, 'PmtId.EndToEndId', TX));
  if (id === undefined || id === 'NOTPROVIDED') return null;
  const length = Array.from(id).length;
  if (length > EXTERNAL_ID_LIMIT) invalid(`${TX}.PmtId.EndToEndId`, `${TX}.PmtId.EndToEndId is ${length} characters; it may be at most ${EXTERNAL_ID_LIMIT}`);
  return id;
}

const PREDEFINED_ENTITIES: ReadonlyMap<string, string> = new Map([['amp', '&'], ['lt', '<'], ['gt', '>'], ['quot', '"'], ['apos', "'"]]);
/** A reference as the decoder meets it, well-formed or not (`&` with no `;` included). */
const ANY_REFERENCE = /&([^;\s<&]*);?/g;

/**
 * Text and attribute values with every reference replaced by its character, in one pass, so `&amp;#233;` stays
 * the text `&#233;`. Called by the parser for text and attribute values, never for CDATA sections; `badReference`
 * has already refused every other reference (docs/payouts.md#the-pacs008-payload-iso-20022).
 */
function decodeReferences(text: string): string {
  if (!text.includes('&')) return text;
  // The decoder is the last word: badReference scans the raw text without knowing which `<!--` is inside a quoted
  // attribute value, so whatever reaches a value is checked again here, and the parser's caller answers 400.
  return text.replace(ANY_REFERENCE, (whole: string, name: string) => {
    if (!whole.endsWith(';')) throw new Error('"&" must start a reference ("&amp;" for the character itself)');
    const named = PREDEFINED_ENTITIES.get(name);
    if (named !== undefined) return named;
    const numeric = /^#(?:x([0-9A-Fa-f]{1,6})|([0-9]{1,7}))$/.exec(name);
    if (!numeric) throw new Error(`&${name}; is not one of the five entities XML defines (there is no DOCTYPE to declare others)`);
    const code = numeric[1] !== undefined ? parseInt(numeric[1], 16) : parseInt(numeric[2]!, 10);
    if (!isXmlChar(code)) throw new Error(`&${name}; names no XML character`);
    return String.fromCodePoint(code);
  });
}

/** The entity decoder's hooks for DOCTYPE entities and XML versions: a DOCTYPE is refused before parsing. */
function ignore(): void {}
// Comments, CDATA sections and processing instructions hold text that is not markup; everything else is scanned
// for references.
const REFERENCE_OR_LITERAL = /<!--[\s\S]*?-->|<!\[CDATA\[[\s\S]*?\]\]>|<\?[\s\S]*?\?>|&(#x[0-9A-Fa-f]+|#[0-9]+|[^;\s<&]*);/g;

/** XML 1.0's Char production: what a character reference may name. */
function isXmlChar(code: number): boolean {
  return code === 0x9 || code === 0xa || code === 0xd || (code >= 0x20 && code <= 0xd7ff) || (code >= 0xe000 && code <= 0xfffd) || (code >= 0x10000 && code <= 0x10ffff);
}

interface Flaw {
  what: string;
  /** Where in the text (UTF-16 index), turned into a line and column for the message. */
  index: number;
}

/** The first entity or character reference that is not well-formed in a document without a DOCTYPE, if any. */
function badReference(text: string): Flaw | undefined {
  for (const match of text.matchAll(REFERENCE_OR_LITERAL)) {
    const name = match[1];
    if (name === undefined) continue; // a comment, CDATA section or processing instruction
    if (name.startsWith('#')) {
      const code = name.startsWith('#x') ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
      if (!isXmlChar(code)) return { what: `the character reference &${name}; names no XML character`, index: match.index };
    } else if (!PREDEFINED_ENTITIES.has(name)) {
      return { what: `the entity &${name}; is not defined (only &amp; &lt; &gt; &quot; &apos; and character references are)`, index: match.index };
    }
  }
  return undefined;
}

// What XML 1.0's Char production leaves out, anywhere in a document (comments and CDATA included): the C0 controls
// but tab, line feed and carriage return, U+FFFE, U+FFFF, and halves of surrogate pairs (docs/payouts.md#the-pacs008-payload-iso-20022).
const NOT_XML_CHARACTER = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The first character XML 1.0 does not allow, if any: fast-xml-parser's validator does not look. */
function badCharacter(text: string): Flaw | undefined {
  const match = NOT_XML_CHARACTER.exec(text);
  if (!match) return undefined;
  const code = match[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
  return { what: `the character U+${code} is not allowed in XML 1.0`, index: match.index };
}

// A comment, CDATA section or processing instruction, or a start, end or empty-element tag (attribute values
// may hold ">"). Run only on text the validator accepted.
const MARKUP = /<!--[\s\S]*?-->|<!\[CDATA\[[\s\S]*?\]\]>|<\?[\s\S]*?\?>|<(\/?)([^\s/>!?][^\s/>]*)(?:[^>"']|"[^"]*"|'[^']*')*>/g;

/**
 * A second element after the root element closed, if any: fast-xml-parser's validator misses an empty-element
 * one (`<x/>`), and its parser then keeps both (a trailing `<Document/>` replaced the real one).
 */
function secondRoot(text: string): Flaw | undefined {
  let depth = 0;
  let rootSeen = false;
  for (const match of text.matchAll(MARKUP)) {
    const [tag, closing, name] = match;
    if (name === undefined) continue; // a comment, CDATA section or processing instruction
    if (closing === '/') {
      depth -= 1;
      continue;
    }
    if (depth === 0 && rootSeen) return { what: `a second root element <${name}> follows the document element; an XML document has exactly one`, index: match.index };
    rootSeen = true;
    if (!tag.endsWith('/>')) depth += 1;
  }
  return undefined;
}

const DECLARATION = /^<\?xml\s[^?]*\?>/;

/**
 * The XML declaration, when there is one, must say XML 1.0 and (if it names one) the encoding UTF-8: the Base64 body
 * always decodes as UTF-8, and the parser reads XML 1.0 (docs/payouts.md#the-pacs008-payload-iso-20022).
 */
function badDeclaration(text: string): Flaw | undefined {
  const declaration = DECLARATION.exec(text)?.[0];
  if (declaration === undefined) return undefined;
  const version = /\sversion\s*=\s*(["'])([^"']*)\1/.exec(declaration)?.[2];
  if (version !== undefined && version !== '1.0') {
    return { what: `the XML declaration says version="${version}"; pacs.008 messages are XML 1.0`, index: 0 };
  }
  const encoding = /\sencoding\s*=\s*(["'])([^"']*)\1/.exec(declaration)?.[2];
  if (encoding !== undefined && encoding.toUpperCase() !== 'UTF-8') {
    return { what: `the XML declaration says encoding="${encoding}", but the payload is read as UTF-8; declare UTF-8 or no encoding`, index: 0 };
  }
  return undefined;
}

function notWellFormed(text: string, flaw: Flaw): never {
  const before = text.slice(0, flaw.index);
  const line = before.split('\n').length;
  const column = flaw.index - before.lastIndexOf('\n');
  throw errors.field('InvalidFormat', 'body', `The decoded payload is not well-formed XML: ${flaw.what} (line ${line}, column ${column})`);
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
  // What fast-xml-parser's validator lets through: characters outside XML 1.0, any &name;, an empty second root
  // element, another XML version or encoding (docs/payouts.md#the-pacs008-payload-iso-20022).
  const flaw = badCharacter(text) ?? badReference(text) ?? secondRoot(text) ?? badDeclaration(text);
  if (flaw) notWellFormed(text, flaw);
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
  const messageId = messageIdOf(document);
  const tx = singleTransaction(document);

  const amountNode = child(tx, 'IntrBkSttlmAmt', `${TX}.IntrBkSttlmAmt`);
  const amount = textOf(amountNode) ?? missing(`${TX}.IntrBkSttlmAmt`, 'the interbank settlement amount, e.g. <IntrBkSttlmAmt Ccy="USD">100.00</IntrBkSttlmAmt>');
  const currency = attributeOf(amountNode, 'Ccy') ?? missing(`${TX}.IntrBkSttlmAmt.@Ccy`, 'the Ccy attribute of IntrBkSttlmAmt');
  if (!DECIMAL.test(amount)) {
    throw errors.field('InvalidFormat', `${TX}.IntrBkSttlmAmt`, `${TX}.IntrBkSttlmAmt must be a decimal amount such as 100.00; got "${amount}"`);
  }
  checkGroupTotals(document, amount, currency);

  const { debtor, ref: debtorRef } = debtorOf(tx);

  const orgId = partyIdOf(tx, 'OrgId');
  const beneficiaryId = orgId ?? partyIdOf(tx, 'PrvtId');
  const iban = textOf(at(tx, 'CdtrAcct.Id.IBAN', TX));
  const accountNumber = iban === undefined ? textOf(at(tx, 'CdtrAcct.Id.Othr.Id', TX)) : undefined;
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

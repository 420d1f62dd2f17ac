import { SCHEMA_REF, type DocumentPart, type Json } from '../../http/openapi-document.js';

// What the payouts domain adds to the OpenAPI document (docs/openapi.md#what-each-area-adds): the payout endpoint
// takes its own header formats and a Base64 text body that the route reads raw, so zod declares neither.

const OPERATION = 'POST /v1/payout-origination/{format}';

// interface 4.12 and 5.2: the payout endpoint's own header formats
const PAYOUT_HEADERS = [
  {
    name: 'X-Service-Timestamp',
    in: 'header',
    required: true,
    description: 'Payout endpoint: an RFC 3339 UTC timestamp within 300 s of the real clock (elsewhere: milliseconds since the epoch).',
    schema: { type: 'string', format: 'date-time' },
    example: '2026-03-01T12:00:00Z',
  },
  {
    name: 'X-Service-Signature',
    in: 'header',
    required: true,
    description:
      'Payout endpoint: sha256= followed by the hex HMAC-SHA256, keyed with the API secret, of apiKey + timestamp + POST + path + raw body (docs/payouts.md).',
    schema: { type: 'string', pattern: '^sha256=[A-Fa-f0-9]{64}$' },
    example: `sha256=${'0'.repeat(64)}`,
  },
  {
    name: 'X-Service-Program-Id',
    in: 'header',
    required: true,
    description: 'The programme of the API key; 8-128 characters on the payout endpoint.',
    schema: { type: 'string', minLength: 8, maxLength: 128 },
    example: 'prg_sandbox',
  },
];

const PAYOUT_BODY_DESCRIPTION =
  'One Base64 string (standard alphabet, padded; line breaks ignored; at least 20 characters) of the whole message, ' +
  'sent as text/plain. format json: a JSON object described by contentSchema (PayoutJsonPayload): entityId, ' +
  'beneficiaryId, amount, currency and reference required. format pacs008: an ISO 20022 pacs.008 XML Document ' +
  '(urn:iso:std:iso:20022:tech:xsd:pacs.008.001.02 to .13), optionally in a wrapper with its head.001 AppHdr; ' +
  'one CdtTrfTxInf; GrpHdr/MsgId is the messageId, IntrBkSttlmAmt and its Ccy the amount, DbtrAcct the debit account ' +
  '(account id, account number or IBAN), Cdtr/Id/*/Othr/Id or CdtrAcct the beneficiary; no DOCTYPE, at most 100 ' +
  'levels deep (docs/payouts.md#the-pacs008-payload-iso-20022).';

export const payoutsDocument: DocumentPart = {
  parameters: {
    // the examples' journey submits its payout with this key (scripts/openapi-examples.ts)
    [`${OPERATION} Idempotency-Key`]: { description: '8-128 characters', example: 'payout-2026-03-01-0001' },
    [`${OPERATION} format`]: { description: 'How the Base64 body is read: json (PayoutJsonPayload) or pacs008 (ISO 20022 XML)', example: 'json' },
  },
  operations: {
    [OPERATION]: (operation: Json) => {
      const parameters = operation.parameters as Json[];
      for (const parameter of parameters) if (parameter.name === 'idempotency-key') parameter.name = 'Idempotency-Key';
      parameters.push(...structuredClone(PAYOUT_HEADERS));
      operation.requestBody = {
        required: true,
        description: PAYOUT_BODY_DESCRIPTION,
        content: {
          'text/plain': {
            schema: {
              type: 'string',
              minLength: 20,
              contentEncoding: 'base64',
              contentMediaType: 'application/json',
              contentSchema: { $ref: `${SCHEMA_REF}PayoutJsonPayload` },
            },
          },
        },
      };
    },
  },
};

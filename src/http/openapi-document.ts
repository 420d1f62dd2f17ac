import type { AuthPolicy } from './auth.js';
import { TAGS } from './openapi.js';
import { loadExamples, type ExamplesFile } from './openapi-examples.js';

// The last pass over the generated OpenAPI document (docs/openapi.md): what fastify-type-provider-zod and
// @fastify/swagger produce is valid, but third-party tools (Spectral, Redocly, Ajv, client generators) need
// more. This pass:
// - drops the fragment-only `$id` and the `$schema` the generator stamps on every component (JSON Schema
//   2020-12 refuses a `$id` that is only a fragment), and keeps one schema per resource: the `XInput` copy
//   of a component goes when it equals `X`, takes the name `X` when only the input side is used, and any
//   component no operation reaches is dropped; components are listed in name order;
// - writes query integers (written as digits, parsed by zod) as `type: integer` with their bounds and a
//   numeric default;
// - keeps each operation's `operationId` (written in its route's schema, docs/openapi.md#operation-ids) after
//   its responses, declares the tags at the top level, marks optional bodies optional, declares `X-Service-User-Id`
//   on the user-scoped operations and the payout headers;
// - types file downloads as binary strings and the statement answer as one of two shapes;
// - gives every parameter a description and every path and header parameter an example (fixture ids, or the
//   id of the operation's own success example), every `const` its one-value `enum`, each `oneOf` whose
//   branches differ by one property its `discriminator`, counts `minimum: 0`, and writes patterns without `\/`
//   (docs/openapi.md#parameters-and-schemas);
// - lists the component schemas in name order.

type Json = Record<string, any>;

/**
 * What the route transform learns about each route, keyed `METHOD /openapi/{path}`: its auth policy, and
 * whether its body may be left out entirely (its zod body accepts undefined, as `POST /v1/auth/token`'s).
 */
export type RouteNotes = Map<string, { auth: AuthPolicy | undefined; optionalBody: boolean }>;

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;
const SCHEMA_REF = '#/components/schemas/';

export const USER_ID_PARAMETER = {
  name: 'X-Service-User-Id',
  in: 'header',
  required: false,
  description:
    'HMAC mode with a MULTI_USER key: the id of the user acted for (required on user-scoped operations; ' +
    '400 USER_ID_HEADER_REQUIRED when missing). Never with a SINGLE_USER key (400 USER_ID_HEADER_NOT_ALLOWED) ' +
    'and not used with a bearer token, which carries its user (interface 5.2; docs/authentication.md).',
  schema: { type: 'string', minLength: 1, maxLength: 128 },
  // the owner of the accounts the body examples use (acct_acme_usd, ...): a client that copies the examples works
  example: 'usr_acme',
};

const PROGRAMME_WIDE_USER_ID = {
  ...USER_ID_PARAMETER,
  description:
    'HMAC mode: the id of the user acted for. Left out, the call reads the whole programme ' +
    '(docs/money-in.md#programme-wide-transactions); never with a SINGLE_USER key (400 USER_ID_HEADER_NOT_ALLOWED).',
};

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

// What a parameter the route schemas leave undescribed means, by name (one meaning per name across the API; a
// `path name` key when the same name means something else on one path), and the example of path parameters:
// fixture ids. An operation whose success example names another resource id takes that id instead (below).
const PARAMETER_NOTES: Record<string, { description: string; example?: string | number }> = {
  accountId: { description: 'The id of an account (GET /v1/accounts)', example: 'acct_acme_usd' },
  transactionId: { description: 'The id of a transaction (GET /v1/transactions)', example: 'txn_hist_acme_usd_001' },
  beneficiaryId: { description: 'The id of a beneficiary (GET /v1/beneficiaries)', example: 'ben_globex' },
  transactionIntentId: { description: 'The id of a transaction intent (POST /v1/transaction-intents)' },
  informationRequestId: { description: 'The id of an information request (GET /v1/information-requests)' },
  fileId: { description: 'The statement file, as named by the url of a StatementLink (GET /v1/accounts/{accountId}/statement with format csv or pdf)' },
  userId: { description: 'The id of a user of the programme', example: 'usr_acme' },
  number: { description: 'The number of a step of the guided demo (GET /_emulator/demo)', example: 1 },
  // the examples' journey submits its payout with this key (src/http/openapi-examples.ts)
  'POST /v1/payout-origination/{format} Idempotency-Key': { description: '8-128 characters', example: 'payout-2026-03-01-0001' },
  'GET /_emulator/webhooks/deliveries/{id} id': { description: 'The id of a webhook delivery', example: 'dlv_0123456789abcdef' },
  'POST /_emulator/webhooks/deliveries/{id}/replay id': { description: 'The id of a webhook delivery', example: 'dlv_0123456789abcdef' },
  'GET /_emulator/faults/{id} id': { description: 'The id of a fault rule', example: 'flt_1' },
  'DELETE /_emulator/faults/{id} id': { description: 'The id of a fault rule', example: 'flt_1' },
  'GET /_emulator/sessions/{id} id': { description: 'The id of a session', example: 'ses_0123456789abcdef' },
  'DELETE /_emulator/sessions/{id} id': { description: 'The id of a session', example: 'ses_0123456789abcdef' },
  name: { description: 'The name of a snapshot', example: 'before-checkout' },
  'POST /v1/payout-origination/{format} format': { description: 'How the Base64 body is read: json (PayoutJsonPayload) or pacs008 (ISO 20022 XML)', example: 'json' },
  'GET /_emulator/requests method': { description: 'Only requests with this HTTP method' },
  'GET /_emulator/requests pathPrefix': { description: 'Only requests whose path starts with this' },
  'GET /_emulator/requests status': { description: 'Only requests answered with this HTTP status' },
  'GET /_emulator/webhooks/deliveries status': { description: 'Only deliveries in this status' },
  'GET /_emulator/webhooks/deliveries eventType': { description: 'Only deliveries of this event type' },
  'GET /_emulator/webhooks/deliveries transactionId': { description: 'Only deliveries of this transaction\'s events' },
  'GET /_emulator/webhooks/deliveries programId': { description: 'Only deliveries of this programme' },
  'GET /_emulator/webhooks/endpoint programId': { description: 'Only this programme\'s endpoint (default: every programme)' },
  'GET /_emulator/jobs status': { description: 'Only jobs in this status' },
  limit: { description: 'At most this many items' },
  'GET /_emulator/transactions accountId': { description: 'Only transactions of this account' },
  'GET /_emulator/ui/state accountId': { description: 'Only transactions of this account' },
  programmeId: { description: 'Only transactions of this programme' },
  'GET /_emulator/transactions userId': { description: 'Only transactions of this user' },
  'GET /_emulator/ui/state userId': { description: 'Only transactions of this user' },
};

/** The id prefix of each path parameter that names a resource (src/lib/ids.ts), to match it to an example's id. */
const ID_PARAMETER_PREFIXES: Record<string, string> = {
  accountId: 'acct_',
  transactionId: 'txn_',
  beneficiaryId: 'ben_',
  transactionIntentId: 'ti_',
  informationRequestId: 'ir_',
  fileId: 'sf_',
};

// Integer properties are counts, sizes, durations, numbers and statuses, never negative, except these two; the
// generator writes `z.number().int()` with the safe-integer bounds, so a mock server (Prism) answered negative counts.
const SIGNED_INTEGERS = new Set(['offsetMs', 'skewSeconds']);

const PAYOUT_BODY_DESCRIPTION =
  'One Base64 string (standard alphabet, padded; line breaks ignored; at least 20 characters) of the whole message, ' +
  'sent as text/plain. format json: a JSON object described by contentSchema (PayoutJsonPayload): entityId, ' +
  'beneficiaryId, amount, currency and reference required. format pacs008: an ISO 20022 pacs.008 XML Document ' +
  '(urn:iso:std:iso:20022:tech:xsd:pacs.008.001.02 to .13), optionally in a wrapper with its head.001 AppHdr; ' +
  'one CdtTrfTxInf; GrpHdr/MsgId is the messageId, IntrBkSttlmAmt and its Ccy the amount, DbtrAcct the debit account ' +
  '(account id, account number or IBAN), Cdtr/Id/*/Othr/Id or CdtrAcct the beneficiary; no DOCTYPE, at most 100 ' +
  'levels deep (docs/payouts.md#the-pacs008-payload-iso-20022).';

export function finishDocument<T>(input: T, notes: RouteNotes): T {
  const document = input as Json;
  document.components ??= {};
  document.components.schemas ??= {};
  for (const schema of Object.values(document.components.schemas as Json)) {
    delete schema.$id;
    delete schema.$schema;
  }
  document.components.parameters = { ...(document.components.parameters ?? {}), ServiceUserId: USER_ID_PARAMETER };
  // a local emulator has no support desk or mailbox: the contact is its own documentation, served at /docs
  const server = (document.servers as Json[] | undefined)?.[0]?.url as string | undefined;
  document.info = { ...document.info, contact: { name: 'service-sandbox documentation (docs/README.md in the package)', ...(server ? { url: `${server}/docs` } : {}) } };

  for (const [path, item] of Object.entries((document.paths ?? {}) as Json)) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      if (!operation) continue;
      const key = `${method.toUpperCase()} ${path}`;
      finishOperation(key, operation, notes.get(key));
    }
  }
  addWebhooks(document);
  const examples = loadExamples();
  attachExamples(document, examples);
  describeParameters(document, examples);
  // every tag an operation uses is declared, those of TAGS with their description (the test asks for one)
  const used = usedTags(document);
  document.tags = [...TAGS.filter((tag) => used.has(tag.name)), ...[...used].filter((name) => !TAGS.some((tag) => tag.name === name)).map((name) => ({ name }))];
  walk(document, normalizeIntegers);
  walkSchemas(document, tightenSchema);
  keepOneSchemaPerResource(document);
  addDiscriminators(document);
  // components in name order: zod registers a named schema when its module is first imported, so the order
  // they were registered in changes whenever a file moves or an import is added; the committed document must
  // not (docs/openapi.md#where-it-lives). After the discriminators, which add the branches they name.
  const byName = Object.entries(document.components.schemas as Json).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  document.components.schemas = Object.fromEntries(byName);
  return input;
}

/**
 * Every parameter gets a description (PARAMETER_NOTES when the route schema has none) and every path parameter an
 * example: the id of the operation's own success example when it names one of that kind (so the path, the header
 * and the answer agree), else the fixture id of PARAMETER_NOTES, else an id the examples' journey created.
 */
function describeParameters(document: Json, examples: ExamplesFile): void {
  const successIdsOf = (operationId: string | undefined): string[] => {
    const ids: string[] = [];
    for (const [status, named] of Object.entries(examples[operationId ?? '']?.responses ?? {})) {
      if (!status.startsWith('2')) continue;
      for (const example of Object.values(named)) {
        const value = example.value as Json | undefined;
        if (typeof value?.id === 'string') ids.push(value.id);
        // a statement link names its file in its url
        const file = typeof value?.url === 'string' ? /\/v1\/statement-files\/([^/?]+)/.exec(value.url) : null;
        if (file) ids.push(file[1]!);
      }
    }
    return ids;
  };
  const journeyIds = Object.keys(examples).flatMap(successIdsOf);
  for (const [path, item] of Object.entries((document.paths ?? {}) as Json)) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      if (!operation?.parameters) continue;
      const key = `${method.toUpperCase()} ${path}`;
      const successIds = successIdsOf(operation.operationId);
      let ownPathExample = false;
      for (const parameter of operation.parameters as Json[]) {
        if (parameter.$ref) continue;
        const notes = PARAMETER_NOTES[`${key} ${parameter.name}`] ?? PARAMETER_NOTES[parameter.name];
        if (!parameter.description && notes) parameter.description = notes.description;
        if ((parameter.in !== 'path' && parameter.in !== 'header') || parameter.example !== undefined) continue;
        const prefix = ID_PARAMETER_PREFIXES[parameter.name];
        const own = prefix === undefined ? undefined : successIds.find((id) => id.startsWith(prefix));
        const journey = prefix === undefined ? undefined : journeyIds.find((id) => id.startsWith(prefix));
        const example = own ?? notes?.example ?? journey ?? parameter.schema?.enum?.[0];
        if (example !== undefined) parameter.example = example;
        if (own !== undefined) ownPathExample = true;
      }
      // the path names a resource of the user the examples were taken as (the onboarded user of the journey): the
      // user header says that user, so the operation's examples work together
      const user = examples[operation.operationId]?.user;
      if (ownPathExample && user) {
        operation.parameters = (operation.parameters as Json[]).map((parameter) =>
          parameter.$ref === '#/components/parameters/ServiceUserId' ? { ...USER_ID_PARAMETER, example: user } : parameter,
        );
      }
    }
  }
}

/** Per schema node: `const` also as a one-value `enum`, counts >= 0, `/` unescaped. */
function tightenSchema(schema: Json): void {
  if ('const' in schema && schema.enum === undefined) schema.enum = [schema.const];
  if (typeof schema.pattern === 'string') schema.pattern = schema.pattern.replace(/\\\//g, '/');
  // a closed set says all a pattern would (a beneficiary's country): generators that write both (openapi-zod-client's
  // z.enum(...).regex) do not compile
  if (Array.isArray(schema.enum) && typeof schema.pattern === 'string') delete schema.pattern;
  // zod's startsWith() writes a format no validator knows; its pattern already says it
  if (schema.format === 'starts_with') delete schema.format;
  for (const [name, property] of Object.entries((schema.properties ?? {}) as Json)) {
    if (SIGNED_INTEGERS.has(name)) continue;
    for (const branch of [property, ...((property?.anyOf ?? []) as Json[])]) {
      if (branch?.type === 'integer' && !(branch.minimum >= 0)) branch.minimum = 0;
    }
  }
}

/**
 * A `discriminator` on each `oneOf` of inline branches that one required property tells apart (a constant per
 * branch): the branches become named schemas (`<Component><Property...><Value>`, e.g. `BeneficiaryInstrumentBankAccount`;
 * one name for identical branches) and the mapping names each value's schema, so generators build tagged unions.
 * Nested unions first, so a branch is named after the place it first appears in, not after its hoisted parent.
 */
function addDiscriminators(document: Json): void {
  const schemas = document.components.schemas as Json;
  const hoisted = new Map<string, string>();
  const hoist = (schema: Json, name: string): string => {
    const text = JSON.stringify(schema);
    const known = hoisted.get(text);
    if (known) return known;
    let unique = name;
    for (let n = 2; schemas[unique] !== undefined; n += 1) unique = `${name}${n}`;
    schemas[unique] = schema;
    hoisted.set(text, unique);
    return unique;
  };
  const visit = (node: unknown, base: string): void => {
    if (Array.isArray(node)) for (const item of node) visit(item, base);
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return;
    const schema = node as Json;
    for (const [key, child] of Object.entries(schema)) {
      if (key === 'example' || key === 'examples') continue;
      if (key === 'properties') for (const [name, property] of Object.entries(child as Json)) visit(property, `${base}${pascal(name)}`);
      else visit(child, base);
    }
    if (!Array.isArray(schema.oneOf) || schema.discriminator) return;
    const property = discriminatingProperty(schema.oneOf as Json[]);
    if (!property) return;
    const mapping: Record<string, string> = {};
    schema.oneOf = (schema.oneOf as Json[]).map((branch) => {
      const value = constantOf(branch, property)!;
      mapping[value] = `${SCHEMA_REF}${hoist(branch, `${base}${pascal(value)}`)}`;
      return { $ref: mapping[value] };
    });
    schema.discriminator = { propertyName: property, mapping };
  };
  for (const name of Object.keys(schemas)) visit(schemas[name], name);
}

/** BANK_ACCOUNT -> BankAccount, instruments -> Instruments. */
function pascal(text: string): string {
  return text
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => (word === word.toUpperCase() ? word.charAt(0) + word.slice(1).toLowerCase() : word.charAt(0).toUpperCase() + word.slice(1)))
    .join('');
}

/** The string a branch requires `name` to be, if it requires one. */
function constantOf(branch: Json, name: string): string | undefined {
  const property = branch.properties?.[name];
  if (!property || !(branch.required as string[] | undefined)?.includes(name)) return undefined;
  const value = 'const' in property ? property.const : Array.isArray(property.enum) && property.enum.length === 1 ? property.enum[0] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** The property every inline branch requires with a constant of its own, if there is one. */
function discriminatingProperty(branches: Json[]): string | undefined {
  const first = branches[0];
  if (!first?.properties || branches.some((branch) => branch.$ref)) return undefined;
  for (const name of Object.keys(first.properties as Json)) {
    const values = branches.map((branch) => constantOf(branch, name));
    if (values.every((value) => value !== undefined) && new Set(values).size === values.length) return name;
  }
  return undefined;
}

/** Headers an operation's answers carry, by operation and status. */
const RESPONSE_HEADERS: Record<string, Record<string, Json>> = {
  'POST /v1/sandbox/accounts/{accountId}/deposits': {
    '202': {
      Location: {
        description: 'The transaction the deposit created, /v1/transactions/{id} (inside a session, under its /_sessions/{id} prefix); the body is the interface\'s message',
        schema: { type: 'string', example: '/v1/transactions/txn_k7m2q9r4t8v1w3x5' },
      },
    },
  },
  'POST /_emulator/sessions': {
    '429': {
      'Retry-After': {
        description: 'Seconds until a session slot can be expected (from how long ended sessions lived; 5 before any ended)',
        schema: { type: 'integer', minimum: 1, example: 2 },
      },
    },
  },
};

function finishOperation(key: string, operation: Json, note: { auth: AuthPolicy | undefined; optionalBody: boolean } | undefined): void {
  const auth = note?.auth;
  // @fastify/swagger writes the route's operationId first; the document has always had it after the
  // responses, so the committed openapi/openapi.json does not churn (docs/openapi.md#where-it-lives)
  const { operationId } = operation;
  delete operation.operationId;
  operation.operationId = operationId;
  if (note?.optionalBody && operation.requestBody) operation.requestBody.required = false;
  const parameters: Json[] = (operation.parameters ??= []);
  const hmacUser = auth && (auth.modes.includes('hmac') || auth.modes.includes('payout'));
  if (hmacUser && auth.user === 'required') parameters.push({ $ref: '#/components/parameters/ServiceUserId' });
  if (hmacUser && auth.user === 'user-or-programme') parameters.push(PROGRAMME_WIDE_USER_ID);

  if (key === 'POST /v1/payout-origination/{format}') {
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
  }
  // The upload's body is a file, not JSON: the route reads it raw, so zod has no schema to declare it from
  // (docs/control-plane.md#snapshots).
  if (key === 'PUT /_emulator/snapshots/{name}') {
    const file = { schema: { type: 'string', contentMediaType: 'application/vnd.sqlite3' } };
    operation.requestBody = {
      required: true,
      description: 'The snapshot file, as GET /_emulator/snapshots/{name}/export answered it (a SQLite database file)',
      content: { 'application/octet-stream': file, 'application/vnd.sqlite3': structuredClone(file), 'application/x-sqlite3': structuredClone(file) },
    };
  }
  // response headers the routes set (docs/money-in.md#simulated-deposits, docs/sessions.md#limits)
  const headers = RESPONSE_HEADERS[key];
  if (headers) {
    for (const [status, named] of Object.entries(headers)) {
      const response = operation.responses?.[status];
      if (response) response.headers = { ...(response.headers ?? {}), ...structuredClone(named) };
    }
  }
  if (key === 'GET /v1/accounts/{accountId}/statement') {
    const media = operation.responses?.['200']?.content?.['application/json'];
    if (media?.schema?.anyOf) {
      media.schema = {
        oneOf: media.schema.anyOf,
        description: 'format json (the default): the Statement; format csv or pdf: a StatementLink to the rendered file (interface 4.3).',
      };
      operation.responses['200'].description = 'The statement (format json) or a signed link to its file (format csv or pdf)';
    }
  }
  // A file download: the body is the file's bytes (errors stay JSON: http/openapi.ts); a page or a plain-text summary is a string
  for (const [status, response] of Object.entries((operation.responses ?? {}) as Json)) {
    if (!status.startsWith('2') || !response.content) continue;
    for (const [type, media] of Object.entries(response.content as Json)) {
      if (type === 'text/csv' || type === 'application/pdf') media.schema = { type: 'string', format: 'binary' };
      else if (type === 'text/html') media.schema = { type: 'string' };
      // a copy: the generator shares one media object between the types of `produces`, JSON included
      else if (type === 'text/plain') response.content[type] = { ...media, schema: { type: 'string' } };
    }
  }
  if (parameters.length === 0) delete operation.parameters;
}

const WEBHOOK_HEADERS = [
  ['X-Service-Resource-Type', 'Always transaction.', { type: 'string', enum: ['transaction'] }, 'transaction'],
  [
    'X-Service-Event-Type',
    'transaction_created when the transaction is first recorded; transaction_status_updated when its status is written.',
    { type: 'string', enum: ['transaction_created', 'transaction_status_updated'] },
    'transaction_created',
  ],
  [
    'X-Service-Api-Key',
    'The webhook API key (wk_sandbox by default), one for all webhook events, issued apart from the REST keys; it picks the webhook secret and proves nothing by itself.',
    { type: 'string' },
    'wk_sandbox',
  ],
  [
    'X-Service-Timestamp',
    'Signing time in milliseconds since the Unix epoch, from the real wall clock even when the emulated clock is frozen or advanced; every attempt is signed afresh. Reject timestamps far from your own clock.',
    { type: 'string', pattern: '^[0-9]+$' },
    '1772366400000',
  ],
  [
    'X-Service-Signature',
    'Lower-case hex HMAC-SHA256, keyed with the webhook secret (whsec_sandbox_secret by default), of api key + timestamp + POST + the path of the webhook URL (no query string) + the raw body byte for byte, with no separators. Recompute and reject on mismatch (verifyWebhookSignature in the package).',
    { type: 'string', pattern: '^[0-9a-f]{64}$' },
    '0'.repeat(64),
  ],
] as const;

const WEBHOOK_DESCRIPTION =
  'One signed POST per transaction event to the programme\'s webhook URL (interface 6.1; docs/webhooks.md). ' +
  'Acknowledgement: any 2xx within 10 s (--webhook-timeout-ms); anything else (another status, a redirect, a network ' +
  'error, no answer in time) is a failed attempt. Retries after 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h and 8 h ' +
  'of emulated time, each counted from the failed attempt: ten attempts in all, then the delivery is FAILED (replayable ' +
  'with POST /_emulator/webhooks/deliveries/{id}/replay). Delivery is at least once: deduplicate on metadata.eventId, ' +
  'stable across retries and replays. Events of one transaction arrive in the order they were written.';

/** The transaction webhook of interface 6.1 under the OAS 3.1 `webhooks` key, with its body schemas. */
function addWebhooks(document: Json): void {
  const schemas = document.components.schemas as Json;
  const transaction = schemas.Transaction as Json | undefined;
  if (!transaction) return;
  // the webhook's transaction omits the fields that have no value instead of sending null (interface 6.1)
  const webhookTransaction = structuredClone(transaction);
  for (const [name, property] of Object.entries((webhookTransaction.properties ?? {}) as Json)) {
    const withoutNull = dropNull(property);
    if (withoutNull === property) continue;
    webhookTransaction.properties[name] = withoutNull;
    webhookTransaction.required = (webhookTransaction.required as string[]).filter((field) => field !== name);
  }
  webhookTransaction.description = 'The transaction as GET /v1/transactions/{transactionId} returned it when the event happened, with the fields that had no value (null) omitted.';
  schemas.WebhookTransaction = webhookTransaction;
  schemas.WebhookMetadata = {
    type: 'object',
    description: 'Identifies the event, its programme and user.',
    properties: {
      eventId: { type: 'string', description: 'Stable across retries and replays: deduplicate on it' },
      eventType: { type: 'string', enum: ['transaction_created', 'transaction_status_updated'] },
      programId: { type: 'string' },
      userId: { type: 'string', description: 'The user whose transaction it is (omitted for none)' },
      occurredAt: { type: 'string', format: 'date-time', description: 'Emulated time of the event' },
    },
    required: ['eventId', 'eventType', 'programId', 'occurredAt'],
    additionalProperties: false,
  };
  schemas.TransactionWebhookEvent = {
    type: 'object',
    description: 'Body of the transaction webhook (interface 6.1).',
    properties: {
      transaction: { $ref: `${SCHEMA_REF}WebhookTransaction` },
      metadata: { $ref: `${SCHEMA_REF}WebhookMetadata` },
    },
    required: ['transaction', 'metadata'],
    additionalProperties: false,
  };
  document.webhooks = {
    transaction: {
      post: {
        operationId: 'transactionWebhook',
        tags: ['Webhooks'],
        summary: 'Transaction webhook: sent to your URL on every transaction event (interface 6.1)',
        description: WEBHOOK_DESCRIPTION,
        security: [],
        parameters: WEBHOOK_HEADERS.map(([name, description, schema, example]) => ({ name, in: 'header', required: true, description, schema, example })),
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: `${SCHEMA_REF}TransactionWebhookEvent` } } },
        },
        responses: {
          '200': { description: 'Acknowledged: any 2xx status within 10 s will do (the body is ignored)' },
          default: { description: 'Any other status, or no answer within 10 s, is a failed attempt: retried on the schedule above' },
        },
      },
    },
  };
}

/** The schema without its null branch, or the same object when it has none. */
function dropNull(schema: Json): Json {
  if (Array.isArray(schema.type) && schema.type.includes('null')) {
    const types = schema.type.filter((type: string) => type !== 'null');
    return { ...schema, type: types.length === 1 ? types[0] : types, ...(schema.enum ? { enum: schema.enum.filter((value: unknown) => value !== null) } : {}) };
  }
  if (Array.isArray(schema.anyOf) && schema.anyOf.some((branch: Json) => branch.type === 'null')) {
    const rest = schema.anyOf.filter((branch: Json) => branch.type !== 'null');
    const { anyOf: _anyOf, ...outer } = schema;
    return rest.length === 1 ? { ...rest[0], ...outer } : { ...outer, anyOf: rest };
  }
  return schema;
}

/** Real answers of the default fixtures (openapi/examples.json) on their operations' bodies and statuses. */
function attachExamples(document: Json, examples: ExamplesFile): void {
  for (const item of Object.values((document.paths ?? {}) as Json)) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      const found = operation && examples[operation.operationId];
      if (!found) continue;
      const requestMedia = operation.requestBody?.content && Object.values(operation.requestBody.content as Json)[0];
      if (found.request && requestMedia) requestMedia.examples = found.request;
      for (const [status, named] of Object.entries(found.responses)) {
        const response = operation.responses?.[status] ?? operation.responses?.default;
        const media = response?.content?.['application/json'];
        if (!media) continue;
        media.examples = { ...(media.examples ?? {}), ...named };
      }
    }
  }
}

function usedTags(document: Json): Set<string> {
  const tags = new Set<string>();
  for (const item of Object.values({ ...(document.paths ?? {}), ...(document.webhooks ?? {}) } as Json)) {
    for (const method of METHODS) for (const tag of (item[method]?.tags ?? []) as string[]) tags.add(tag);
  }
  return tags;
}

/** Query integers are parsed from digits by zod; the document shows the integer they stand for. */
function normalizeIntegers(schema: Json): void {
  if (schema.type !== 'integer') return;
  delete schema.pattern;
  if (typeof schema.default === 'string' && /^\d+$/.test(schema.default)) schema.default = Number(schema.default);
}

/** As walk, but not into example values, which are data, not schemas. */
function walkSchemas(value: unknown, visit: (schema: Json) => void): void {
  if (Array.isArray(value)) for (const item of value) walkSchemas(item, visit);
  else if (value !== null && typeof value === 'object') {
    visit(value as Json);
    for (const [key, item] of Object.entries(value as Json)) if (key !== 'example' && key !== 'examples') walkSchemas(item, visit);
  }
}

function walk(value: unknown, visit: (schema: Json) => void): void {
  if (Array.isArray(value)) for (const item of value) walk(item, visit);
  else if (value !== null && typeof value === 'object') {
    visit(value as Json);
    for (const item of Object.values(value as Json)) walk(item, visit);
  }
}

/** Rewrite every `$ref` to a component schema through `rename` (old name -> new name). */
function renameRefs(value: unknown, rename: Map<string, string>): void {
  walk(value, (node) => {
    if (typeof node.$ref === 'string' && node.$ref.startsWith(SCHEMA_REF)) {
      const target = rename.get(node.$ref.slice(SCHEMA_REF.length));
      if (target) node.$ref = `${SCHEMA_REF}${target}`;
    }
  });
}

/** Component schemas reachable from the operations and webhooks. */
function reachable(document: Json): Set<string> {
  const seen = new Set<string>();
  const queue: unknown[] = [document.paths, document.webhooks, document.components?.parameters];
  while (queue.length > 0) {
    walk(queue.pop(), (node) => {
      if (typeof node.$ref !== 'string' || !node.$ref.startsWith(SCHEMA_REF)) return;
      const name = node.$ref.slice(SCHEMA_REF.length);
      if (seen.has(name)) return;
      seen.add(name);
      queue.push(document.components.schemas[name]);
    });
  }
  return seen;
}

function keepOneSchemaPerResource(document: Json): void {
  const schemas = document.components.schemas as Json;
  // the input copy equal to its output twin (refs to other input copies read as their twins) is the same schema
  const same = new Map<string, string>();
  const normalized = (schema: unknown) => JSON.stringify(schema).replace(/("#\/components\/schemas\/[A-Za-z0-9_]+?)Input"/g, '$1"');
  for (const name of Object.keys(schemas)) {
    const base = name.replace(/Input$/, '');
    if (base !== name && schemas[base] && normalized(schemas[name]) === normalized(schemas[base])) same.set(name, base);
  }
  renameRefs(document, same);
  for (const name of same.keys()) delete schemas[name];

  // an input copy used where its output twin is not takes the plain name
  const used = reachable(document);
  const promote = new Map<string, string>();
  for (const name of Object.keys(schemas)) {
    const base = name.replace(/Input$/, '');
    if (base !== name && used.has(name) && !used.has(base)) promote.set(name, base);
  }
  for (const [from, to] of promote) schemas[to] = schemas[from];
  for (const from of promote.keys()) delete schemas[from];
  renameRefs(document, promote);

  const kept = reachable(document);
  for (const name of Object.keys(schemas)) if (!kept.has(name)) delete schemas[name];
}

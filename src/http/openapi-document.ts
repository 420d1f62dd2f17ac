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
//   its responses, declares the tags at the top level, marks optional bodies optional, declares `X-Service-User-Id` on the user-scoped operations and the payout headers;
// - types file downloads as binary strings and the statement answer as one of two shapes.

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
  example: 'usr_jane',
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
  },
  {
    name: 'X-Service-Program-Id',
    in: 'header',
    required: true,
    description: 'The programme of the API key; 8-128 characters on the payout endpoint.',
    schema: { type: 'string', minLength: 8, maxLength: 128 },
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

export function finishDocument<T>(input: T, notes: RouteNotes): T {
  const document = input as Json;
  document.components ??= {};
  document.components.schemas ??= {};
  for (const schema of Object.values(document.components.schemas as Json)) {
    delete schema.$id;
    delete schema.$schema;
  }
  document.components.parameters = { ...(document.components.parameters ?? {}), ServiceUserId: USER_ID_PARAMETER };

  for (const [path, item] of Object.entries((document.paths ?? {}) as Json)) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      if (!operation) continue;
      const key = `${method.toUpperCase()} ${path}`;
      finishOperation(key, operation, notes.get(key));
    }
  }
  addWebhooks(document);
  attachExamples(document, loadExamples());
  // every tag an operation uses is declared, those of TAGS with their description (the test asks for one)
  const used = usedTags(document);
  document.tags = [...TAGS.filter((tag) => used.has(tag.name)), ...[...used].filter((name) => !TAGS.some((tag) => tag.name === name)).map((name) => ({ name }))];
  walk(document, normalizeIntegers);
  keepOneSchemaPerResource(document);
  // components in name order: zod registers a named schema when its module is first imported, so the order
  // they were registered in changes whenever a file moves or an import is added; the committed document must
  // not (docs/openapi.md#where-it-lives)
  const byName = Object.entries(document.components.schemas as Json).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  document.components.schemas = Object.fromEntries(byName);
  return input;
}

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
  ['X-Service-Resource-Type', 'Always transaction.', { type: 'string', enum: ['transaction'] }],
  [
    'X-Service-Event-Type',
    'transaction_created when the transaction is first recorded; transaction_status_updated when its status is written.',
    { type: 'string', enum: ['transaction_created', 'transaction_status_updated'] },
  ],
  [
    'X-Service-Api-Key',
    'The webhook API key (wk_sandbox by default), one for all webhook events, issued apart from the REST keys; it picks the webhook secret and proves nothing by itself.',
    { type: 'string' },
  ],
  [
    'X-Service-Timestamp',
    'Signing time in milliseconds since the Unix epoch, from the real wall clock even when the emulated clock is frozen or advanced; every attempt is signed afresh. Reject timestamps far from your own clock.',
    { type: 'string', pattern: '^[0-9]+$' },
  ],
  [
    'X-Service-Signature',
    'Lower-case hex HMAC-SHA256, keyed with the webhook secret (whsec_sandbox_secret by default), of api key + timestamp + POST + the path of the webhook URL (no query string) + the raw body byte for byte, with no separators. Recompute and reject on mismatch (verifyWebhookSignature in the package).',
    { type: 'string', pattern: '^[0-9a-f]{64}$' },
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
        parameters: WEBHOOK_HEADERS.map(([name, description, schema]) => ({ name, in: 'header', required: true, description, schema })),
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

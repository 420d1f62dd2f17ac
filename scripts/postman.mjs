// The Postman collection (docs/openapi.md#postman), written from the committed document
// openapi/openapi.json into openapi/service-sandbox.postman_collection.json:
//   node scripts/postman.mjs           write it
//   node scripts/postman.mjs --check   exit 1 when the committed file differs (test/http/postman.test.ts too)
// Every /v1 operation is one request, in the order of a journey (JOURNEY below; an operation it does not name
// runs after it, with the document's examples) that needs nothing but a fresh server with the default fixtures: a user onboarded, the Acme business's accounts, a statement and its file, a deposit,
// transactions, a beneficiary, an intent committed and another canceled, a payout. Paths carry the document's
// parameter examples (fixture ids) or, where a request needs the id another one made, a variable its test
// script sets. The collection's pre-request script signs each request (both variants, docs/authentication.md).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DOCUMENT = path.join(root, 'openapi', 'openapi.json');
export const COLLECTION = path.join(root, 'openapi', 'service-sandbox.postman_collection.json');

// The collection-level pre-request script (Postman's sandbox: CryptoJS, pm). It signs what Postman sends:
// the target is the path and query after variable substitution, percent-encoded the way Postman encodes a URL
// (postman-url-encoder: in the path space " < > ` # ? { }, in the query space " # ' < > and & inside a value,
// control and non-ASCII characters everywhere, an existing %XX kept). A request that names the MULTI_USER key
// in its X-Service-Api-Key header ({{multiUserApiKey}}: user management and the requests with X-Service-User-Id,
// which a SINGLE_USER key may not send) is signed with that key's secret, the others with the SINGLE_USER key. Under /v1/payout-origination/ the payout variant: RFC 3339 timestamp, sha256=<hex>.
// /v1/statement-files/ is not signed: its link carries its own signature.
const SIGNING_SCRIPT = String.raw`(function () {
const crypto = require('crypto-js');
function encode(text, extra) {
  let out = '';
  for (const char of text) {
    const code = char.codePointAt(0);
    if (char === '%' || (code > 0x20 && code < 0x7f && !extra.includes(char))) out += char;
    else out += encodeURIComponent(char).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
  }
  return out;
}
const url = pm.variables.replaceIn(pm.request.url.toString());
const base = pm.variables.replaceIn('{{baseUrl}}').replace(/\/$/, '');
const raw = url.startsWith(base) ? url.slice(base.length) : url.replace(/^[a-z]+:\/\/[^/]+/i, '');
const queryAt = raw.indexOf('?');
const rawPath = queryAt < 0 ? raw : raw.slice(0, queryAt);
const target = encode(rawPath, ' "<>\u0060#?{}') + (queryAt < 0 ? '' : '?' + raw.slice(queryAt + 1).split('&').map((pair) => {
  const equals = pair.indexOf('=');
  return equals < 0 ? encode(pair, ' "#\'<>') : encode(pair.slice(0, equals), ' "#\'<>') + '=' + encode(pair.slice(equals + 1), ' "#\'<>&');
}).join('&'));
const bare = rawPath.slice(pm.variables.replaceIn('{{sessionPrefix}}').length);
if (bare.startsWith('/v1/') && !bare.startsWith('/v1/statement-files/')) {
  const keyHeader = pm.request.headers.find((header) => header.key.toLowerCase() === 'x-service-api-key' && !header.disabled);
  const multi = Boolean(keyHeader) && pm.variables.replaceIn(keyHeader.value) === pm.variables.replaceIn('{{multiUserApiKey}}');
  const apiKey = pm.variables.replaceIn(multi ? '{{multiUserApiKey}}' : '{{apiKey}}');
  const secret = pm.variables.replaceIn(multi ? '{{multiUserApiSecret}}' : '{{apiSecret}}');
  const payout = bare.startsWith('/v1/payout-origination/');
  const timestamp = payout ? new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') : String(Date.now());
  const body = pm.request.body && pm.request.body.mode === 'raw' ? pm.variables.replaceIn(pm.request.body.raw || '') : '';
  const signature = crypto.HmacSHA256(apiKey + timestamp + pm.request.method.toUpperCase() + target + body, secret).toString(crypto.enc.Hex);
  pm.request.headers.upsert({ key: 'X-Service-Api-Key', value: apiKey });
  pm.request.headers.upsert({ key: 'X-Service-Timestamp', value: timestamp });
  pm.request.headers.upsert({ key: 'X-Service-Program-Id', value: pm.variables.replaceIn('{{programId}}') });
  pm.request.headers.upsert({ key: 'X-Service-Signature', value: payout ? 'sha256=' + signature : signature });
}
})();`;

const VARIABLES = [
  ['baseUrl', 'http://127.0.0.1:4010', 'The emulator (npx service-sandbox start)'],
  ['sessionPrefix', '', 'Empty, or /_sessions/<id> to run against a session (docs/sessions.md#addresses-and-signing)'],
  ['apiKey', 'pk_sandbox_single', 'SINGLE_USER key of the default fixtures (acts for usr_acme)'],
  ['apiSecret', 'sk_sandbox_single_secret', 'Its secret'],
  ['multiUserApiKey', 'pk_sandbox_multi', 'MULTI_USER key of the default fixtures (requests with X-Service-User-Id)'],
  ['multiUserApiSecret', 'sk_sandbox_multi_secret', 'Its secret'],
  ['programId', 'prg_sandbox', 'The programme of both keys'],
];

// Idempotency keys and the external id are fresh on every run, so the collection runs again on the same
// server: the first request sets {{runId}} (a request's own pre-request script runs after the collection's, so
// a value it sets is read by the requests after it, not by its own signature); everything else is the
// document's example.
const RUN_ID = "pm.collectionVariables.set('runId', Date.now().toString(36) + Math.floor(Math.random() * 1e6).toString(36));";

/**
 * The journey: one step per request. `as: 'multi'` names the MULTI_USER key and sends X-Service-User-Id
 * {{userId}} where the operation has it; `path` and `query` replace or add parameters; `body` rewrites the document's example;
 * `set` are variables the test script takes from the JSON answer.
 */
const JOURNEY = [
  { operationId: 'createAccessToken', pre: RUN_ID },
  { operationId: 'createUser', as: 'multi', body: (example) => ({ ...example, externalId: 'crm-{{runId}}' }), set: { userId: 'json.userId' } },
  { operationId: 'listUsers', as: 'multi', query: { pageSize: '2' } },
  { operationId: 'getEnrollment', as: 'multi', set: { informationRequestId: 'json.informationRequest.id' } },
  { operationId: 'activateEnrollment', as: 'multi' },
  { operationId: 'listInformationRequests', as: 'multi' },
  { operationId: 'getInformationRequest', as: 'multi', path: { informationRequestId: '{{informationRequestId}}' } },
  { operationId: 'writeInformationRequestEntries', as: 'multi', path: { informationRequestId: '{{informationRequestId}}' } },
  { operationId: 'submitInformationRequest', as: 'multi', path: { informationRequestId: '{{informationRequestId}}' } },
  { operationId: 'listAccounts', query: { pageIndex: '0', pageSize: '10' } },
  { operationId: 'getAccount' },
  { operationId: 'createDepositInstruction', body: (example) => ({ ...example, idempotencyKey: 'di-{{runId}}' }) },
  {
    operationId: 'getAccountStatement',
    query: { startDate: '2026-02-01', endDate: '2026-02-28', format: 'pdf' },
    set: { statementFileId: "json.url.split('?')[0].split('/').pop()", statementExpires: "json.url.split('expires=')[1].split('&')[0]", statementSignature: "json.url.split('signature=')[1].split('&')[0]" },
  },
  { operationId: 'downloadStatementFile', path: { fileId: '{{statementFileId}}' }, query: { expires: '{{statementExpires}}', signature: '{{statementSignature}}' } },
  { operationId: 'simulateDeposit' },
  { operationId: 'listTransactions', query: { pageIndex: '0', pageSize: '25', sortBy: 'CREATED_AT', sortDirection: 'DESC' }, set: { transactionId: 'json.data[0].id' } },
  { operationId: 'getTransaction', path: { transactionId: '{{transactionId}}' } },
  { operationId: 'createBeneficiary', set: { beneficiaryId: 'json.id' } },
  { operationId: 'listBeneficiaries', query: { pageSize: '2' } },
  { operationId: 'getBeneficiary', path: { beneficiaryId: '{{beneficiaryId}}' } },
  { operationId: 'listBeneficiaryInstruments' },
  {
    operationId: 'createTransactionIntent',
    body: (example) => ({ ...example, idempotencyKey: 'intent-{{runId}}' }),
    set: { transactionIntentId: 'json.id' },
  },
  { operationId: 'listTransactionIntents', query: { pageSize: '2' } },
  { operationId: 'getTransactionIntent', path: { transactionIntentId: '{{transactionIntentId}}' } },
  { operationId: 'commitTransactionIntent', path: { transactionIntentId: '{{transactionIntentId}}' }, body: () => ({ idempotencyKey: 'intent-{{runId}}' }) },
  {
    operationId: 'createTransactionIntent',
    name: 'Create a second transaction intent (to cancel)',
    body: (example) => ({ ...example, idempotencyKey: 'intent-{{runId}}-2' }),
    set: { secondTransactionIntentId: 'json.id' },
  },
  { operationId: 'cancelTransactionIntent', path: { transactionIntentId: '{{secondTransactionIntentId}}' } },
  { operationId: 'submitPayout', header: { 'Idempotency-Key': 'payout-{{runId}}' } },
];

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
// Headers the signing script writes (the payout operation declares them as parameters too).
const SIGNED = new Set(['x-service-api-key', 'x-service-timestamp', 'x-service-program-id', 'x-service-signature']);

function operations(document) {
  const found = new Map();
  for (const [route, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      if (item[method]) found.set(item[method].operationId, { route, method, operation: item[method], shared: item.parameters ?? [] });
    }
  }
  return found;
}

const firstExample = (content) => (content?.examples ? Object.values(content.examples)[0]?.value : content?.example);

function request(document, { route, method, operation, shared }, step) {
  const resolve = (parameter) => (parameter.$ref ? document.components.parameters[parameter.$ref.split('/').pop()] : parameter);
  const parameters = [...shared, ...(operation.parameters ?? [])].map(resolve);
  const pathValues = {};
  for (const parameter of parameters.filter((p) => p.in === 'path')) {
    const value = step.path?.[parameter.name] ?? parameter.example;
    if (value === undefined) throw new Error(`${operation.operationId}: path parameter ${parameter.name} has no example and no variable`);
    pathValues[parameter.name] = String(value);
  }
  const segments = route.split('/').filter(Boolean).map((segment) => segment.replace(/^\{(.+)\}$/, (_, name) => pathValues[name]));
  // a required query parameter the step does not set takes the document's example (docs/openapi.md#parameter-examples)
  const queryValues = { ...step.query };
  for (const parameter of parameters.filter((p) => p.in === 'query' && p.required && !(p.name in queryValues))) {
    const value = parameter.example ?? parameter.schema?.example ?? parameter.schema?.examples?.[0] ?? parameter.schema?.default ?? parameter.schema?.enum?.[0];
    if (value === undefined) throw new Error(`${operation.operationId}: required query parameter ${parameter.name} has no example: give its zod schema .meta({ examples: [...] }), or set it in the operation's step of JOURNEY in scripts/postman.mjs`);
    queryValues[parameter.name] = String(value);
  }
  const query = Object.entries(queryValues).map(([key, value]) => {
    const parameter = parameters.find((p) => p.in === 'query' && p.name === key);
    if (!parameter) throw new Error(`${operation.operationId}: no query parameter ${key} in the document`);
    return { key, value, description: parameter.description };
  });
  const header = step.as === 'multi' ? [{ key: 'X-Service-Api-Key', value: '{{multiUserApiKey}}', description: 'The MULTI_USER key: the signing script signs with its secret' }] : [];
  for (const parameter of parameters.filter((p) => p.in === 'header')) {
    if (SIGNED.has(parameter.name.toLowerCase())) continue;
    if (parameter.name === 'X-Service-User-Id') {
      header.push({ key: parameter.name, value: step.as === 'multi' ? '{{userId}}' : String(parameter.example), description: parameter.description, disabled: step.as !== 'multi' });
      continue;
    }
    header.push({ key: parameter.name, value: step.header?.[parameter.name] ?? String(parameter.example), description: parameter.description });
  }
  let body;
  const content = operation.requestBody?.content;
  if (content) {
    const [mediaType, media] = Object.entries(content)[0];
    const example = firstExample(media);
    const value = step.body ? step.body(example) : example;
    if (value !== undefined) {
      header.push({ key: 'Content-Type', value: mediaType });
      body = { mode: 'raw', raw: typeof value === 'string' ? value : JSON.stringify(value, null, 2) };
    }
  }
  const successes = Object.keys(operation.responses).filter((code) => /^2\d\d$/.test(code)).map(Number);
  const tests = [
    `pm.test('answers its documented success status (${successes.join(' or ')})', function () {`,
    `  pm.expect(pm.response.code).to.be.oneOf([${successes.join(', ')}]);`,
    '});',
  ];
  const sets = Object.entries(step.set ?? {});
  if (sets.length) {
    tests.push('(function (json) {');
    for (const [variable, expression] of sets) tests.push(`  pm.collectionVariables.set('${variable}', ${expression});`);
    tests.push('})(pm.response.json());');
  }
  const event = [];
  if (step.pre) event.push({ listen: 'prerequest', script: { type: 'text/javascript', exec: [step.pre] } });
  event.push({ listen: 'test', script: { type: 'text/javascript', exec: tests } });
  return {
    name: step.name ?? operation.summary ?? operation.operationId,
    event,
    request: {
      method: method.toUpperCase(),
      header,
      ...(body ? { body } : {}),
      url: {
        raw: `{{baseUrl}}{{sessionPrefix}}/${segments.join('/')}${query.length ? `?${query.map(({ key, value }) => `${key}=${value}`).join('&')}` : ''}`,
        host: ['{{baseUrl}}{{sessionPrefix}}'],
        path: segments,
        ...(query.length ? { query } : {}),
      },
      description: `${operation.operationId}: ${operation.description ?? ''}`.trim(),
    },
  };
}

export function buildCollection(document) {
  const found = operations(document);
  // A /v1 operation the journey does not name runs last, as the document describes it (its parameter and body
  // examples, the SINGLE_USER key): enough for an operation on fixture ids. One that needs an id another request
  // makes, or the MULTI_USER key, gets a step in JOURNEY (test/http/postman.test.ts runs the collection and names it).
  const unnamed = [...found.keys()].filter((id) => found.get(id).route.startsWith('/v1/') && !JOURNEY.some((step) => step.operationId === id));
  const item = [...JOURNEY, ...unnamed.map((operationId) => ({ operationId }))].map((step) => {
    const operation = found.get(step.operationId);
    if (!operation) throw new Error(`scripts/postman.mjs: no operation ${step.operationId} in the document`);
    return request(document, operation, step);
  });
  return {
    info: {
      name: `${document.info.title} ${document.info.version}`,
      description:
        'Every /v1 operation of the OpenAPI document (openapi/openapi.json), in journey order, signed by the collection pre-request script. Generated by scripts/postman.mjs; see docs/openapi.md#postman.',
      schema: 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json',
    },
    event: [{ listen: 'prerequest', script: { type: 'text/javascript', exec: SIGNING_SCRIPT.split('\n') } }],
    variable: VARIABLES.map(([key, value, description]) => ({ key, value, type: 'string', description })),
    item,
  };
}

export function collectionText() {
  return `${JSON.stringify(buildCollection(JSON.parse(readFileSync(DOCUMENT, 'utf8'))), null, 2)}\n`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const text = collectionText();
  if (process.argv.includes('--check')) {
    let committed = '';
    try {
      committed = readFileSync(COLLECTION, 'utf8');
    } catch {
      // missing: differs
    }
    if (committed !== text) {
      process.stderr.write(`${path.relative(root, COLLECTION)} differs from what scripts/postman.mjs writes; run npm run generate\n`);
      process.exit(1);
    }
  } else {
    writeFileSync(COLLECTION, text);
    process.stdout.write(`wrote ${path.relative(root, COLLECTION)}\n`);
  }
}

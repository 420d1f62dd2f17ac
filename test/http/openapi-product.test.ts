import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { routeCatalog } from '../../src/http/route-catalog.js';
import { ERROR_CODES } from '../../src/core/errors.js';
import { buildTestApp, json } from '../helper.js';
import { plainCommand } from '../helpers/node-child.js';

// The OpenAPI document as third-party tools read it (docs/openapi.md): JSON Schema 2020-12 components that
// Ajv compiles as they are, one schema per resource, integers as integers, formats on every instant and
// date, every operation named, described and tagged, X-Service-User-Id and the payout headers declared,
// and the Spectral and Redocly gates with zero errors and zero warnings.

type Json = Record<string, any>;
const exec = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..', '..');
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (
  ajv: Ajv2020,
) => Ajv2020;

async function servedDocument(): Promise<Json> {
  const sandbox = await buildTestApp();
  try {
    return json(await sandbox.app.inject({ method: 'GET', url: '/openapi.json' }));
  } finally {
    await sandbox.close();
  }
}

function operations(document: Json): Array<{ key: string; path: string; method: string; operation: Json }> {
  const found = [];
  for (const [p, item] of Object.entries(document.paths as Json)) {
    for (const method of METHODS) if (item[method]) found.push({ key: `${method.toUpperCase()} ${p}`, path: p, method, operation: item[method] });
  }
  return found;
}

function walk(value: unknown, visit: (node: Json, key: string) => void, key = ''): void {
  if (Array.isArray(value)) for (const item of value) walk(item, visit, key);
  else if (value !== null && typeof value === 'object') {
    visit(value as Json, key);
    for (const [k, item] of Object.entries(value as Json)) walk(item, visit, k);
  }
}

t.test('components are plain JSON Schema 2020-12, one per resource', async (t) => {
  const document = await servedDocument();
  const schemas = document.components.schemas as Json;
  for (const [name, schema] of Object.entries(schemas)) {
    t.notOk('$id' in schema, `${name} has no fragment-only $id`);
    t.notOk('$schema' in schema, `${name} has no $schema`);
    t.notMatch(name, /Input$/, `${name} is not an input copy`);
  }
  // every component is used: reachable from the operations (and webhooks)
  const referenced = new Set<string>();
  walk({ paths: document.paths, webhooks: document.webhooks, components: document.components }, (node) => {
    if (typeof node.$ref === 'string' && node.$ref.startsWith('#/components/schemas/')) referenced.add(node.$ref.slice(21));
  });
  for (const name of Object.keys(schemas)) t.ok(referenced.has(name), `${name} is referenced`);
  for (const name of referenced) t.ok(schemas[name], `#/components/schemas/${name} exists`);

  // Ajv 2020 in strict mode compiles every component as it is published (each one under its own $id)
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  // OpenAPI's discriminator (with its mapping, which Ajv's own discriminator option refuses) is an annotation here
  ajv.addKeyword('discriminator');
  const rewritten = JSON.parse(JSON.stringify(schemas).replace(/"#\/components\/schemas\/([A-Za-z0-9_]+)"/g, '"urn:schema:$1"')) as Json;
  for (const [name, schema] of Object.entries(rewritten)) ajv.addSchema(schema, `urn:schema:${name}`);
  for (const name of Object.keys(rewritten)) {
    t.doesNotThrow(() => ajv.getSchema(`urn:schema:${name}`), `Ajv 2020 compiles ${name}`);
  }
});

t.test('integers, formats and the open error code', async (t) => {
  const document = await servedDocument();
  const list = document.paths['/v1/transactions'].get.parameters as Json[];
  const pageIndex = list.find((parameter) => parameter.name === 'pageIndex')!;
  const pageSize = list.find((parameter) => parameter.name === 'pageSize')!;
  t.same(pageIndex.schema, { type: 'integer', minimum: 0, maximum: 1_000_000_000, default: 0 }, 'pageIndex is an integer');
  t.match(pageSize.schema, { type: 'integer', minimum: 1, default: 25 }, 'pageSize is an integer');
  t.type(pageSize.schema.maximum, 'number');
  // no query parameter anywhere is a digit string any more
  for (const { key, operation } of operations(document)) {
    for (const parameter of (operation.parameters ?? []) as Json[]) {
      t.notOk(parameter.schema?.pattern === '^\\d{1,12}$', `${key} ${parameter.name} is not a digit string`);
    }
  }

  // every instant (*At, now, at) is a date-time, every statement date a date
  let instants = 0;
  walk(document.components, (node) => {
    for (const [name, property] of Object.entries((node.properties ?? {}) as Json)) {
      if (!/(At|^now|^at)$/.test(name)) continue;
      const branches = property.anyOf ?? [property];
      const text = branches.find((branch: Json) => branch.type === 'string' || (Array.isArray(branch.type) && branch.type.includes('string')));
      if (!text) continue;
      instants += 1;
      t.equal(text.format, 'date-time', `${name} has format date-time`);
    }
  });
  t.ok(instants > 30, `${instants} instants checked`);
  const schemas = document.components.schemas;
  t.equal(schemas.Statement.properties.from.format, 'date');
  t.equal(schemas.Statement.properties.to.format, 'date');
  t.equal(schemas.StatementDay.properties.date.format, 'date');
  t.equal(schemas.Beneficiary.properties.dateOfBirth.anyOf[0].format, 'date');

  // errorCode lists the known codes and allows any other string
  const errorCode = schemas.ServiceError.properties.errorCode;
  t.same(errorCode.anyOf[0].enum, [...ERROR_CODES], 'the known codes are listed');
  t.same(errorCode.anyOf[1], { type: 'string' }, 'an unknown code is allowed');
});

t.test('every operation is named, summarised, described and tagged', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const document = json(await sandbox.app.inject({ method: 'GET', url: '/openapi.json' }));
  const ids = new Set<string>();
  const tags = new Set((document.tags as Json[]).map((tag) => tag.name));
  for (const { key, operation } of operations(document)) {
    t.match(operation.operationId, /^[a-z][A-Za-z]+$/, `${key} has a readable operationId`);
    t.notOk(ids.has(operation.operationId), `${key}: operationId ${operation.operationId} is unique`);
    ids.add(operation.operationId);
    t.ok(operation.summary, `${key} has a summary`);
    t.ok(operation.description, `${key} has a description`);
    for (const tag of operation.tags) t.ok(tags.has(tag), `${key}: tag ${tag} is declared at the top level`);
  }
  for (const tag of document.tags as Json[]) t.ok(tag.description, `tag ${tag.name} is described`);
  t.equal(document.paths['/v1/transactions'].get.operationId, 'listTransactions');
  t.equal(document.paths['/v1/transaction-intents/{transactionIntentId}/commit'].post.operationId, 'commitTransactionIntent');
  // every documented route of the catalog names its operation in its own schema (docs/openapi.md#operation-ids),
  // and the document carries that name
  const documented = new Map(operations(document).map((entry) => [entry.key, entry.operation.operationId]));
  const catalog = routeCatalog(sandbox.app).filter((route) => route.method !== 'HEAD' && !route.schema?.hide && route.url !== '/openapi.json');
  for (const route of catalog.filter((candidate) => !candidate.url.startsWith('/docs'))) {
    const key = `${route.method} ${route.url.replace(/:(\w+)/g, '{$1}')}`;
    t.match(route.schema?.operationId, /^[a-z][A-Za-z]+$/, `${route.method} ${route.url} has an operationId in its schema`);
    t.equal(documented.get(key), route.schema?.operationId, `${key} is documented under its schema's operationId`);
  }
});

t.test('headers, optional bodies, files and the statement answer', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const document = json(await sandbox.app.inject({ method: 'GET', url: '/openapi.json' }));
  const userId = { $ref: '#/components/parameters/ServiceUserId' };
  t.match(document.components.parameters.ServiceUserId, { name: 'X-Service-User-Id', in: 'header', required: false, schema: { type: 'string' } });
  const userScoped = ['/v1/accounts', '/v1/enrollment', '/v1/beneficiaries', '/v1/transaction-intents'];
  for (const p of userScoped) t.same((document.paths[p].get.parameters as Json[]).filter((x) => x.$ref), [userId], `GET ${p} declares X-Service-User-Id`);
  const transactions = (document.paths['/v1/transactions'].get.parameters as Json[]).find((x) => x.name === 'X-Service-User-Id');
  t.match(transactions, { in: 'header', required: false, description: /whole programme/ }, 'the programme-wide list says what leaving it out does');
  t.notOk(
    (document.paths['/v1/users'].get.parameters ?? []).some((x: Json) => x.$ref || x.name === 'X-Service-User-Id'),
    'the programme-level users list does not take it',
  );
  t.notOk(document.paths['/_emulator/clock'].post.parameters?.some((x: Json) => x.$ref), 'nor does the control plane');

  // the header is really honoured as declared: a MULTI_USER key needs it, and it selects the user
  const withHeader = await sandbox.request('GET', '/v1/accounts', undefined, {
    apiKey: 'pk_sandbox_multi',
    secret: 'sk_sandbox_multi_secret',
    userId: 'usr_jane',
  });
  t.equal(withHeader.statusCode, 200);
  const without = await sandbox.request('GET', '/v1/accounts', undefined, { apiKey: 'pk_sandbox_multi', secret: 'sk_sandbox_multi_secret' });
  t.equal(without.statusCode, 400);
  t.equal(json(without).errorCode, 'USER_ID_HEADER_REQUIRED');

  const payout = document.paths['/v1/payout-origination/{format}'].post;
  const headers = Object.fromEntries((payout.parameters as Json[]).filter((x) => x.in === 'header').map((x) => [x.name, x]));
  t.match(headers['Idempotency-Key'], { required: true, schema: { minLength: 8, maxLength: 128 } });
  t.match(headers['X-Service-Timestamp'], { required: true, schema: { type: 'string', format: 'date-time' } });
  t.match(headers['X-Service-Signature'], { required: true, schema: { pattern: '^sha256=[A-Fa-f0-9]{64}$' } });
  t.same(headers['X-Service-User-Id'] ?? (payout.parameters as Json[]).find((x) => x.$ref), userId);
  const body = payout.requestBody;
  t.equal(body.required, true);
  t.match(body.content['text/plain'].schema, {
    type: 'string',
    contentEncoding: 'base64',
    contentMediaType: 'application/json',
    contentSchema: { $ref: '#/components/schemas/PayoutJsonPayload' },
  });
  t.match(body.description, /pacs\.008/);

  t.equal(document.paths['/v1/auth/token'].post.requestBody.required, false, 'the token body may be left out');
  const noBody = await sandbox.request('POST', '/v1/auth/token');
  t.equal(noBody.statusCode, 200, 'and a token is issued without one');

  const file = document.paths['/v1/statement-files/{fileId}'].get.responses['200'].content;
  t.same(file['text/csv'].schema, { type: 'string', format: 'binary' });
  t.same(file['application/pdf'].schema, { type: 'string', format: 'binary' });
  const statement = document.paths['/v1/accounts/{accountId}/statement'].get.responses['200'].content['application/json'].schema;
  t.same(
    statement.oneOf.map((branch: Json) => branch.$ref),
    ['#/components/schemas/Statement', '#/components/schemas/StatementLink'],
  );
  t.match(statement.description, /format json/);
});

t.test('Spectral (spectral:oas) and Redocly lint: zero errors, zero warnings', async (t) => {
  const document = await servedDocument();
  const dir = mkdtempSync(path.join(tmpdir(), 'openapi-lint-'));
  const file = path.join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(document));
  const bin = (name: string) => path.join(ROOT, 'node_modules', '.bin', name);

  const started = Date.now();
  const spectral = await exec(...plainCommand(bin('spectral'), ['lint', '--ruleset', path.join(ROOT, '.spectral.yaml'), '--format', 'json', '--fail-severity', 'hint', '--quiet', file]), {
    cwd: ROOT,
  }).catch((error: { stdout: string; code: number }) => error);
  t.match(spectral.stdout, /^\s*\[/, 'Spectral ran and reported as JSON');
  const results = JSON.parse(spectral.stdout) as Json[];
  t.same(
    results.map((result) => `${result.code} ${result.path.join('.')}: ${result.message}`),
    [],
    `Spectral: no error, warning, info or hint (${Date.now() - started} ms)`,
  );

  const redoclyStarted = Date.now();
  // Redocly lints the committed copy (equal to the served document: test/http/openapi-static.test.ts), the file its
  // scoped exceptions in .redocly.lint-ignore.yaml name
  const redocly = await exec(...plainCommand(bin('redocly'), ['lint', '--config', path.join(ROOT, 'redocly.yaml'), '--format', 'json', 'openapi/openapi.json']), {
    cwd: ROOT,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  }).catch((error: { stdout: string; code: number }) => error);
  const report = JSON.parse(redocly.stdout) as { totals: { errors: number; warnings: number }; problems: Json[] };
  t.same(
    report.problems.map((problem) => `${problem.ruleId}: ${problem.message}`),
    [],
    `Redocly: no problem (${Date.now() - redoclyStarted} ms)`,
  );
  t.same(report.totals, { errors: 0, warnings: 0, ignored: 1 }, 'one scoped exception: GET /_emulator/health has no 4xx');
});

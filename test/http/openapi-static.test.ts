import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { parse as parseYaml } from 'yaml';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { advance, buildTestApp, json } from '../helper.js';
import { webhookSandbox } from '../helpers/webhook-sandbox.js';

// Where the OpenAPI document lives (docs/openapi.md#where-it-lives): /openapi.json, the same as YAML at
// /openapi.yaml, the committed copy openapi/openapi.json that must equal what the server serves, and the
// transaction webhook of interface 6.1 under the `webhooks` key, checked against real deliveries.

type Json = Record<string, any>;
const ROOT = path.resolve(import.meta.dirname, '..', '..');
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (
  ajv: Ajv2020,
) => Ajv2020;

t.test('openapi/openapi.json is the document the server serves (default configuration)', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const served = json(await sandbox.app.inject({ method: 'GET', url: '/openapi.json' }));
  const stored = JSON.parse(readFileSync(path.join(ROOT, 'openapi', 'openapi.json'), 'utf8'));
  t.same(stored.servers, [{ url: 'http://127.0.0.1:4010' }], 'the copy names the default address');
  // a deep comparison, reported by the first differing key so the fix is obvious
  t.same(Object.keys(stored), Object.keys(served), 'same top-level keys');
  for (const key of Object.keys(served)) {
    if (key === 'paths' || key === 'components') {
      for (const name of new Set([...Object.keys(served[key]), ...Object.keys(stored[key] ?? {})])) {
        t.same(stored[key]?.[name], served[key][name], `${key}.${name} matches (else: npm run openapi)`);
      }
    } else t.same(stored[key], served[key], `${key} matches (else: npm run openapi)`);
  }
});

t.test('GET /openapi.yaml is the same document as YAML', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const asJson = json(await sandbox.app.inject({ method: 'GET', url: '/openapi.json' }));
  const answer = await sandbox.app.inject({ method: 'GET', url: '/openapi.yaml' });
  t.equal(answer.statusCode, 200);
  t.match(answer.headers['content-type'], /^application\/yaml/);
  t.match(answer.body, /^openapi: 3\.1\.0$/m);
  t.same(parseYaml(answer.body), asJson);
  const post = await sandbox.app.inject({ method: 'POST', url: '/openapi.yaml' });
  t.equal(post.statusCode, 405, 'another method is a 405 with the error body');
  t.equal(json(post).errorCode, 'INVALID_REQUEST');
});

t.test('the transaction webhook under `webhooks` matches real deliveries', async (t) => {
  const { receiver, sandbox } = await webhookSandbox(t);
  const document = json(await sandbox.app.inject({ method: 'GET', url: '/openapi.json' }));
  const webhook = document.webhooks?.transaction?.post;
  t.ok(webhook, 'webhooks.transaction.post is documented');
  t.equal(webhook.operationId, 'transactionWebhook');
  t.ok(document.tags.some((tag: Json) => tag.name === 'Webhooks'), 'its tag is declared');
  t.match(webhook.description, /2xx within 10 s/, 'the acknowledgement rule');
  t.match(webhook.description, /5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h and 8 h/, 'the retry schedule');
  const headers: Record<string, Json> = Object.fromEntries((webhook.parameters as Json[]).map((parameter) => [parameter.name, parameter]));
  t.same(Object.keys(headers).sort(), ['X-Service-Api-Key', 'X-Service-Event-Type', 'X-Service-Resource-Type', 'X-Service-Signature', 'X-Service-Timestamp']);
  for (const header of Object.values(headers)) t.ok(header.description && header.required, `${header.name} has its rule`);
  t.equal(webhook.requestBody.content['application/json'].schema.$ref, '#/components/schemas/TransactionWebhookEvent');
  const schemas = document.components.schemas;
  t.notOk(schemas.WebhookTransaction.required.includes('statusReason'), 'a field that may be null is optional in the webhook');
  t.notOk(JSON.stringify(schemas.WebhookTransaction.properties.statusReason).includes('null'), 'and never null');

  // real deliveries: a deposit is recorded, then completes
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'urn:service-sandbox:doc', components: document.components });
  const rewrite = (schema: unknown) => JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"urn:service-sandbox:doc#/components/'));
  const validateBody = ajv.compile(rewrite(webhook.requestBody.content['application/json'].schema));
  const validateHeader: Record<string, ValidateFunction> = Object.fromEntries(Object.values(headers).map((header) => [header.name.toLowerCase(), ajv.compile(header.schema)]));

  const deposit = await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', {
    depositInstructionId: 'di_acme_usd_ach',
    amount: '125.00',
  });
  t.equal(deposit.statusCode, 202, deposit.body);
  await advance(sandbox, 3_600_000);
  const deadline = Date.now() + 10_000;
  while (receiver.requests.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  t.ok(receiver.requests.length >= 2, `${receiver.requests.length} deliveries received`);
  for (const request of receiver.requests) {
    t.ok(validateBody(request.body), `${request.headers['x-service-event-type']} body matches TransactionWebhookEvent ${JSON.stringify(validateBody.errors)}`);
    t.notOk(JSON.stringify(request.body.transaction).includes('null'), 'no null in the transaction');
    for (const [name, validate] of Object.entries(validateHeader)) {
      t.ok(validate(request.headers[name]), `${name}: ${String(request.headers[name])} matches its schema`);
    }
  }
  t.notOk(validateBody({ transaction: {}, metadata: {} }), 'the schema is not empty: a bare body fails');
});

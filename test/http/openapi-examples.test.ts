import { readFileSync } from 'node:fs';
import t from 'tap';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { EXAMPLES_FILE } from '../../src/http/openapi-examples.js';
import { captureExamples } from '../../scripts/openapi-examples.js';
import { buildTestApp, json } from '../helper.js';

// Examples of the OpenAPI document (docs/openapi.md#examples): real answers of the default fixtures captured
// by a journey (scripts/openapi-examples.ts). Capturing them again must give the committed file byte for
// byte, every /v1 operation has a success and an error example, and each example matches the schema it
// illustrates.

type Json = Record<string, any>;
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (
  ajv: Ajv2020,
) => Ajv2020;

t.test('capturing the examples again gives openapi/examples.json', async (t) => {
  const captured = `${JSON.stringify(await captureExamples(), null, 2)}\n`;
  const stored = readFileSync(EXAMPLES_FILE, 'utf8');
  // compared per operation first, so a failure names the operation that drifted
  const [now, before] = [JSON.parse(captured) as Json, JSON.parse(stored) as Json];
  for (const operationId of new Set([...Object.keys(now), ...Object.keys(before)])) {
    t.same(before[operationId], now[operationId], `${operationId} examples are current (else: npm run openapi)`);
  }
  t.equal(stored, captured, 'the file is byte for byte what the capture writes');
});

t.test('every /v1 operation has examples of its success and its main errors, each matching its schema', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const document = json(await sandbox.app.inject({ method: 'GET', url: '/openapi.json' }));
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ $id: 'urn:service-sandbox:doc', components: document.components });
  const compile = (schema: unknown) => ajv.compile(JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"urn:service-sandbox:doc#/components/')));

  let checked = 0;
  for (const [path, item] of Object.entries(document.paths as Json)) {
    for (const [method, operation] of Object.entries(item as Json)) {
      const label = `${method.toUpperCase()} ${path}`;
      const statuses = Object.entries(operation.responses as Json).filter(([, response]) => response.content?.['application/json']?.examples);
      if (path.startsWith('/v1/')) {
        const binary = path === '/v1/statement-files/{fileId}';
        if (!binary) t.ok(statuses.some(([status]) => status.startsWith('2')), `${label} has a success example`);
        const errors = statuses.filter(([status]) => !status.startsWith('2'));
        t.ok(errors.length > 0, `${label} has an error example`);
      }
      for (const [status, response] of statuses) {
        const media = response.content['application/json'];
        const validate = compile(media.schema);
        for (const [name, example] of Object.entries(media.examples as Json)) {
          t.ok(example.summary, `${label} ${status} ${name} has a summary`);
          t.ok(validate(example.value), `${label} ${status} ${name} matches its schema ${JSON.stringify(validate.errors ?? [])}`);
          checked += 1;
        }
      }
      const requestMedia = operation.requestBody?.content?.['application/json'];
      for (const [name, example] of Object.entries((requestMedia?.examples ?? {}) as Json)) {
        const validate = compile(requestMedia.schema);
        t.ok(validate(example.value), `${label} request ${name} matches the body schema ${JSON.stringify(validate.errors ?? [])}`);
        checked += 1;
      }
    }
  }
  t.ok(checked >= 60, `${checked} examples checked`);

  const payout = document.paths['/v1/payout-origination/{format}'].post.requestBody.content['text/plain'];
  const payload = JSON.parse(Buffer.from(payout.examples.json.value, 'base64').toString('utf8'));
  t.ok(compile(payout.schema.contentSchema)(payload), 'the payout example decodes to a PayoutJsonPayload');
  const list = document.paths['/v1/transactions'].get.responses['200'].content['application/json'].examples.page.value;
  t.equal(list.pageSize, 2, 'examples are real answers: the list asked for two per page');
});

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';

// The Postman collection (docs/openapi.md#postman), in process (a fast file of `npm run test:unit`): the committed
// openapi/service-sandbox.postman_collection.json is what scripts/postman.mjs writes from the committed document
// (else: npm run generate), every /v1 operation has a request, and a /v1 operation the journey does not name still
// gets one, from the document's examples. test/http/postman.test.ts runs the collection with newman.

type Json = Record<string, any>;
const ROOT = path.resolve(import.meta.dirname, '..', '..');
const postman = () =>
  import(pathToFileURL(path.join(ROOT, 'scripts', 'postman.mjs')).href) as Promise<{ buildCollection(document: Json): Json; collectionText(): string; COLLECTION: string }>;

t.test('the committed collection is what scripts/postman.mjs writes from the document', async (t) => {
  const { collectionText, COLLECTION } = await postman();
  t.equal(readFileSync(COLLECTION, 'utf8'), collectionText(), 'no drift (else: npm run generate)');
  const collection = JSON.parse(readFileSync(COLLECTION, 'utf8'));
  const document = JSON.parse(readFileSync(path.join(ROOT, 'openapi', 'openapi.json'), 'utf8'));
  const v1 = Object.entries(document.paths as Record<string, Record<string, { operationId?: string }>>).flatMap(([route, item]) =>
    route.startsWith('/v1/') ? Object.values(item).flatMap((operation) => (operation.operationId ? [operation.operationId] : [])) : [],
  );
  const named = new Set((collection.item as Array<{ request: { description: string } }>).map((item) => item.request.description.split(':')[0]));
  t.same(v1.filter((operationId) => !named.has(operationId)), [], `every /v1 operation (${v1.length}) has a request`);
  t.same(
    collection.variable.map((variable: { key: string }) => variable.key),
    ['baseUrl', 'sessionPrefix', 'apiKey', 'apiSecret', 'multiUserApiKey', 'multiUserApiSecret', 'programId'],
    'variables for the base URL, the keys and the session prefix',
  );
  const raws: string[] = collection.item.map((item: { request: { url: { raw: string } } }) => item.request.url.raw);
  t.notOk(
    raws.some((raw) => /\{[A-Za-z]+\}/.test(raw.replace(/\{\{[^}]+\}\}/g, ''))),
    'no path keeps an OpenAPI template: fixture ids or chained variables',
  );
});

t.test('a /v1 operation the journey does not name runs last, from the document examples', async (t) => {
  const { buildCollection } = await postman();
  const document = JSON.parse(readFileSync(path.join(ROOT, 'openapi', 'openapi.json'), 'utf8'));
  document.paths['/v1/accounts/{accountId}/widgets'] = {
    get: {
      operationId: 'listWidgets',
      summary: 'List widgets',
      parameters: [
        { name: 'accountId', in: 'path', required: true, schema: { type: 'string' }, example: 'acct_acme_usd' },
        { name: 'since', in: 'query', required: true, schema: { type: 'string', examples: ['2026-02-01'] } },
      ],
      responses: { 200: { description: 'ok' } },
    },
  };
  const collection = buildCollection(document);
  const last = collection.item.at(-1);
  t.equal(last.request.description.split(':')[0], 'listWidgets', 'appended after the journey');
  t.equal(last.request.url.raw, '{{baseUrl}}{{sessionPrefix}}/v1/accounts/acct_acme_usd/widgets?since=2026-02-01', 'path and required query from the examples');

  document.paths['/v1/accounts/{accountId}/widgets'].get.parameters[1].schema = { type: 'string' };
  t.throws(() => buildCollection(document), /listWidgets: required query parameter since has no example: give its zod schema \.meta\(\{ examples/, 'a required query parameter without an example names what to add');
});

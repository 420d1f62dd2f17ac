import t from 'tap';
import { finishDocument, type DocumentPart, type RouteNotes } from '../../src/http/openapi-document.js';
import { documentParts, modules } from '../../src/modules.js';

// Each module gives its own part of the OpenAPI document through its descriptor, and the last pass assembles them
// (docs/openapi.md#what-each-area-adds): what a part gives lands on its operation, and a key two parts give is refused.

type Json = Record<string, any>;

/** A document as the generator leaves it: one operation with one undescribed path parameter. */
function generated(): Json {
  return {
    openapi: '3.1.0',
    info: { title: 'parts', version: '0' },
    paths: {
      '/v1/things/{thingId}': {
        get: {
          operationId: 'getThing',
          parameters: [{ name: 'thingId', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { '200': { description: 'OK', content: { 'application/json': { schema: { type: 'object', properties: { count: { type: 'integer' }, delta: { type: 'integer' } } } } } } },
        },
      },
    },
    components: { schemas: {} },
  };
}

const noNotes: RouteNotes = new Map();

t.test("a part's notes, rewrite, headers, signed integers and whole-document addition are applied", async (t) => {
  const part: DocumentPart = {
    parameters: { thingId: { description: 'The id of a thing', example: 'thg_1' } },
    signedIntegers: ['delta'],
    operations: { 'GET /v1/things/{thingId}': (operation) => void (operation.summary = 'rewritten by its module') },
    responseHeaders: { 'GET /v1/things/{thingId}': { '200': { 'X-Thing': { schema: { type: 'string' } } } } },
    finish: (document) => void (document.webhooks = {}),
  };
  const document = finishDocument(generated(), noNotes, [part]);
  const operation = document.paths['/v1/things/{thingId}'].get;
  t.same(operation.parameters[0], { name: 'thingId', in: 'path', required: true, schema: { type: 'string' }, description: 'The id of a thing', example: 'thg_1' });
  t.equal(operation.summary, 'rewritten by its module');
  t.same(operation.responses['200'].headers, { 'X-Thing': { schema: { type: 'string' } } });
  const properties = operation.responses['200'].content['application/json'].schema.properties;
  t.equal(properties.count.minimum, 0, 'a count is never negative');
  t.equal(properties.delta.minimum, undefined, 'a signed integer of a part keeps its sign');
  t.same(document.webhooks, {});
});

t.test('without the parts, the pass knows nothing of a domain', async (t) => {
  const operation = finishDocument(generated(), noNotes, []).paths['/v1/things/{thingId}'].get;
  t.equal(operation.parameters[0].description, undefined);
  t.equal(operation.summary, undefined);
});

t.test('a key two modules give is refused, naming it', async (t) => {
  const note = { parameters: { thingId: { description: 'one' } } };
  t.throws(() => finishDocument(generated(), noNotes, [note, note]), /parameter thingId is given by two modules/);
  const rewrite = { operations: { 'GET /v1/things/{thingId}': () => {} } };
  t.throws(() => finishDocument(generated(), noNotes, [rewrite, rewrite]), /GET \/v1\/things\/\{thingId\} is given by two modules/);
});

t.test("the app's modules give their parts without a clash", async (t) => {
  t.ok(documentParts.length >= 10, 'the domains, the control plane and faults give parts');
  const payouts = modules.find((module) => module.name === 'payouts');
  t.ok(payouts?.openapi?.operations?.['POST /v1/payout-origination/{format}'], 'the payout headers are the payouts domain\'s');
  t.ok(modules.find((module) => module.name === 'webhooks')?.openapi?.finish, 'the webhook is the webhooks domain\'s');
});

import t from 'tap';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { buildTestApp, json } from '../helper.js';

// The document says what the server checks (docs/openapi.md#rules-between-fields): the rules between fields as
// oneOf / dependentRequired, closed sets and patterns, and the snapshot upload's body. A validator reading the
// document alone refuses what the server refuses, and accepts what it accepts.

type Json = Record<string, any>;
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

t.test('the document states the rules the server checks', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const document = json(await sandbox.app.inject({ method: 'GET', url: '/openapi.json' })) as Json;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ ...document, $id: 'openapi.json' });
  const component = (name: string) => ajv.compile({ $ref: `openapi.json#/components/schemas/${name}` });
  const requestSchema = (path: string, method: string) => document.paths[path][method].requestBody.content['application/json'].schema as Json;

  t.test('PUT /_emulator/snapshots/{name} declares its file body', async (t) => {
    const body = document.paths['/_emulator/snapshots/{name}'].put.requestBody;
    t.equal(body?.required, true);
    t.same(Object.keys(body.content), ['application/octet-stream', 'application/vnd.sqlite3', 'application/x-sqlite3']);
  });

  t.test('the simulated deposit amount has the decimal pattern', async (t) => {
    const amount = component('MockDepositRequest');
    for (const value of ['1e5', '-1.00', '1,000.00', ' 1', '.5']) {
      t.notOk(amount({ depositInstructionId: 'di_x', amount: value }), `document refuses ${JSON.stringify(value)}`);
      const answer = await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_x', amount: value });
      t.equal(answer.statusCode, 400, `server refuses ${JSON.stringify(value)}`);
    }
    t.ok(amount({ depositInstructionId: 'di_x', amount: '100.00' }));
  });

  t.test('exactly one of credit and refundOf', async (t) => {
    const intent = component('CreateTransactionIntentRequest');
    const base = { idempotencyKey: 'rules-1', debitAccountId: 'acct_acme_usd', debitAmount: '10.00' };
    const credit = { instrumentType: 'ACCOUNT', accountId: 'acct_acme_eur' };
    t.ok(intent({ ...base, credit }), 'credit alone');
    t.ok(intent({ ...base, refundOf: 'txn_1' }), 'refundOf alone');
    t.ok(intent({ ...base, credit, refundOf: null }), 'refundOf null is none');
    t.notOk(intent({ ...base, credit, refundOf: 'txn_1' }), 'both');
    t.notOk(intent(base), 'neither');
    t.notOk(intent({ ...base, credit: null, refundOf: null }), 'both null');
    for (const [name, body] of [['both', { ...base, credit, refundOf: 'txn_1' }], ['neither', base]] as const) {
      t.equal((await sandbox.request('POST', '/v1/transaction-intents', body)).statusCode, 400, `server refuses ${name}`);
    }
  });

  t.test('exactly one field on POST /_emulator/clock', async (t) => {
    const clock = ajv.compile(requestSchema('/_emulator/clock', 'post'));
    for (const body of [{ advanceMs: 0 }, { freezeAt: '2027-01-01T00:00:00Z' }, { realtime: true }]) t.ok(clock(body), JSON.stringify(body));
    for (const body of [{}, { advanceMs: 1, realtime: true }, { freezeAt: '2027-01-01T00:00:00Z', advanceMs: 1 }]) {
      t.notOk(clock(body), `document refuses ${JSON.stringify(body)}`);
      t.equal((await sandbox.app.inject({ method: 'POST', url: '/_emulator/clock', payload: body })).statusCode, 400, `server refuses ${JSON.stringify(body)}`);
    }
  });

  t.test('latency: ms, or minMs with maxMs', async (t) => {
    const latency = component('FaultEffectLatency');
    t.ok(latency({ type: 'latency', ms: 5 }));
    t.ok(latency({ type: 'latency', minMs: 1, maxMs: 5 }));
    // the rule stays in prose in the document: Prism's mock fakes a oneOf branch alone, and Ajv's strict mode and
    // Redocly refuse branches that name their fields (docs/openapi.md#rules-between-fields); the server refuses
    for (const effect of [{ type: 'latency' }, { type: 'latency', ms: 5, minMs: 1, maxMs: 5 }, { type: 'latency', minMs: 1 }, { type: 'latency', maxMs: 5 }, { type: 'latency', ms: 5, maxMs: 5 }]) {
      t.ok(latency(effect), `the document's shape admits ${JSON.stringify(effect)}`);
      const answer = await sandbox.app.inject({ method: 'POST', url: '/_emulator/faults', payload: { effect } });
      t.equal(answer.statusCode, 400, `server refuses ${JSON.stringify(effect)}`);
    }
  });

  t.test('a beneficiary country is one of the server\'s codes', async (t) => {
    const countries: Json[] = [];
    JSON.stringify(document.components.schemas, (key, value: unknown) => {
      if (key === 'country' && value && typeof value === 'object' && 'enum' in value) countries.push(value as Json);
      return value;
    });
    t.ok(countries.length >= 2, 'the address and the bank instrument');
    for (const schema of countries) {
      const country = ajv.compile(schema);
      t.notOk(country('AA'), 'AA matches the pattern, not the set');
      t.ok(country('DE'));
      t.equal(schema.enum.length, 249);
    }
    const answer = await sandbox.request('POST', '/v1/beneficiaries', {
      type: 'BUSINESS',
      businessName: 'Country Test',
      address: { line1: '1 Main St', city: 'Nowhere', postalCode: '12345', country: 'AA' },
    });
    t.equal(answer.statusCode, 400);
    t.ok((json(answer).validationErrors as Array<{ fieldRef: string }>).some((item) => item.fieldRef === 'address.country'), 'the server refuses AA');
  });
});

import t, { type Test } from 'tap';
import fc from 'fast-check';
import { z } from 'zod';
import type { FastifyPluginAsync, LightMyRequestResponse } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { errorBodySchema } from '../../src/core/errors.js';
import { CREDENTIALS, buildTestApp, json, type Identity } from '../helper.js';

// docs/decisions.md#error-body-everywhere: every non-2xx answer has the interface 7.1 body, including unknown routes,
// wrong methods, malformed JSON, oversized bodies and internal faults; bad input never gives a 500.

const MULTI: Identity = { apiKey: CREDENTIALS.multi.apiKey, secret: CREDENTIALS.multi.secret };

function expectError(t: Test, response: LightMyRequestResponse, status: number, errorCode: string | undefined): Record<string, any> {
  t.equal(response.statusCode, status, `status ${status}`);
  t.match(response.headers['content-type'], /^application\/json/);
  const body = json(response);
  const parsed = errorBodySchema.strict().safeParse(body);
  t.ok(parsed.success, `interface 7.1 error body, nothing else: ${response.body.slice(0, 120)}`);
  t.equal(body.errorCode, errorCode);
  return body;
}

// Probe routes that fail on purpose, to see what a client gets from an internal fault.
const faultyRoutes: FastifyPluginAsync = async (app) => {
  app.get('/test/throws', { config: { auth: { modes: ['none'], user: 'programme' } } }, async () => {
    throw new Error('boom: secret sk_sandbox_multi_secret leaked in an internal message');
  });
};
const badResponseRoute: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/test/bad-response',
    { config: { auth: { modes: ['none'], user: 'programme' } }, schema: { response: { 200: z.object({ amount: z.string() }) } } },
    async () => ({ amount: 12 }) as unknown as { amount: string },
  );
};

t.test('error bodies', async (t) => {
  const sandbox = await buildTestApp({ plugins: [faultyRoutes, badResponseRoute as FastifyPluginAsync] });
  t.teardown(sandbox.close);

  t.test('unknown route: 404 with the error body', async (t) => {
    for (const url of ['/v1/nope', '/', '/v1/accounts/acct_acme_usd/nope', '/_emulator/nope']) {
      const body = expectError(t, await sandbox.app.inject({ method: 'GET', url }), 404, 'NOT_FOUND');
      t.match(body.message, url.split('?')[0]!);
    }
    expectError(t, await sandbox.app.inject({ method: 'POST', url: '/v2/accounts', payload: { a: 1 } }), 404, 'NOT_FOUND');
  });

  t.test('wrong method on a known path: 405 with an Allow header', async (t) => {
    const cases: Array<[string, string, string]> = [
      ['DELETE', '/v1/accounts', 'GET, HEAD'],
      ['POST', '/v1/accounts', 'GET, HEAD'],
      ['PUT', '/v1/accounts/acct_acme_usd', 'GET, HEAD'],
      ['PATCH', '/v1/accounts/anything-at-all', 'GET, HEAD'],
      ['GET', '/v1/auth/token', 'POST'],
      ['DELETE', '/v1/accounts/', 'GET, HEAD'],
      ['PUT', '/_emulator/clock', 'GET, HEAD, POST'],
    ];
    for (const [method, url, allow] of cases) {
      const response = await sandbox.app.inject({ method: method as 'GET', url });
      const body = expectError(t, response, 405, 'INVALID_REQUEST');
      t.equal(response.headers.allow, allow, `${method} ${url}`);
      t.match(body.message, new RegExp(`${method}.*allowed: ${allow}`));
    }
    const withQuery = await sandbox.app.inject({ method: 'DELETE', url: '/v1/accounts?pageSize=1' });
    t.equal(withQuery.statusCode, 405, 'the query string does not change the match');
  });

  t.test('malformed JSON: 400 InvalidFormat on body', async (t) => {
    for (const payload of ['{bad', '{"externalId": "x",}', '"unterminated', '{"a":1}{"b":2}']) {
      const response = await sandbox.app.inject({
        method: 'POST',
        url: '/v1/auth/users',
        headers: { ...sandbox.sign('POST', '/v1/auth/users', payload, MULTI), 'content-type': 'application/json' },
        payload,
      });
      const body = expectError(t, response, 400, undefined);
      t.match(body.validationErrors, [{ type: 'InvalidFormat', fieldRef: 'body' }], payload);
      t.match(body.message, /not valid JSON/);
    }
    const charset = await sandbox.app.inject({
      method: 'POST',
      url: '/_emulator/clock',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      payload: '{"advanceMs":',
    });
    expectError(t, charset, 400, undefined);
  });

  t.test('prototype-poisoning keys are refused as malformed', async (t) => {
    const payload = '{"advanceMs":1,"__proto__":{"polluted":true}}';
    const response = await sandbox.app.inject({ method: 'POST', url: '/_emulator/clock', headers: { 'content-type': 'application/json' }, payload });
    const body = expectError(t, response, 400, undefined);
    t.match(body.validationErrors, [{ type: 'InvalidFormat', fieldRef: 'body' }]);
    t.equal(({} as Record<string, unknown>).polluted, undefined);
    const harmless = await sandbox.app.inject({
      method: 'POST',
      url: '/_emulator/clock',
      headers: { 'content-type': 'application/json' },
      payload: '{"advanceMs":0,"note":"constructor"}',
    });
    t.equal(harmless.statusCode, 400, 'the word alone is fine; the unknown key is what fails');
    t.match(json(harmless).validationErrors[0].message, /note|exactly one/);
  });

  t.test('a body over 1 MiB: 413', async (t) => {
    const payload = JSON.stringify({ externalId: 'big', type: 'PERSON', name: 'x'.repeat(1024 * 1024) });
    const response = await sandbox.app.inject({
      method: 'POST',
      url: '/v1/auth/users',
      headers: { ...sandbox.sign('POST', '/v1/auth/users', payload, MULTI), 'content-type': 'application/json' },
      payload,
    });
    const body = expectError(t, response, 413, 'INVALID_REQUEST');
    t.match(body.message, /1048576 bytes/);
    const justUnder = JSON.stringify({ advanceMs: 0, pad: 'x'.repeat(1000) });
    t.equal((await sandbox.app.inject({ method: 'POST', url: '/_emulator/clock', headers: { 'content-type': 'application/json' }, payload: justUnder })).statusCode, 400, 'small bodies reach validation');
  });

  t.test('an unsupported content type: 415', async (t) => {
    for (const type of ['application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const payload = type.startsWith('application/xml') ? '<user/>' : 'externalId=x';
      const response = await sandbox.app.inject({
        method: 'POST',
        url: '/v1/auth/users',
        headers: { ...sandbox.sign('POST', '/v1/auth/users', payload, MULTI), 'content-type': type },
        payload,
      });
      const body = expectError(t, response, 415, 'INVALID_REQUEST');
      t.match(body.message, /application\/json/, 'says what is accepted');
    }
  });

  t.test('a POST without a body schema takes an empty body whatever its content type', async (t) => {
    for (const headers of [{ 'content-type': 'application/json' }, { 'content-type': 'application/x-www-form-urlencoded' }, {}]) {
      const response = await sandbox.app.inject({ method: 'POST', url: '/_emulator/reset', headers, payload: '' });
      t.equal(response.statusCode, 200, JSON.stringify(headers));
    }
    // an optional body (POST /v1/auth/token takes { scopes? }) may be absent or empty; JSON null is not an object
    // (docs/decisions.md#null-body)
    for (const payload of [undefined, '', 'null']) {
      const headers: Record<string, string> = sandbox.sign('POST', '/v1/auth/token', payload ?? '');
      if (payload !== undefined) headers['content-type'] = 'application/json';
      const response = await sandbox.app.inject({ method: 'POST', url: '/v1/auth/token', headers, payload });
      t.equal(response.statusCode, payload === 'null' ? 400 : 200, `token with body ${JSON.stringify(payload)}`);
    }
  });

  t.test('a required body that is missing: 400 MissingRequestBody', async (t) => {
    const body = expectError(t, await sandbox.request('POST', '/v1/auth/users', undefined, MULTI), 400, undefined);
    t.match(body.validationErrors, [{ type: 'MissingRequestBody' }]);
  });

  t.test('an internal fault: 500 INTERNAL_ERROR without details or stack', async (t) => {
    const thrown = await sandbox.app.inject({ method: 'GET', url: '/test/throws' });
    const body = expectError(t, thrown, 500, 'INTERNAL_ERROR');
    t.same(body, { message: 'Internal error', errorCode: 'INTERNAL_ERROR' });
    t.notMatch(thrown.body, /boom|sk_sandbox|at .*\.ts|stack/);

    const mismatch = await sandbox.app.inject({ method: 'GET', url: '/test/bad-response' });
    expectError(t, mismatch, 500, 'INTERNAL_ERROR');
    t.notMatch(mismatch.body, /stack|at .*\.ts/);
  });

  t.test('a database fault inside a real route: 500 INTERNAL_ERROR', async (t) => {
    const faulty = await buildTestApp();
    t.teardown(faulty.close);
    faulty.ctx.db.exec('DROP TABLE access_tokens');
    const response = await faulty.request('POST', '/v1/auth/token');
    const body = expectError(t, response, 500, 'INTERNAL_ERROR');
    t.notMatch(JSON.stringify(body), /access_tokens|SQLITE|no such table/i);
  });
});

t.test('bad input never gives a 500 (property)', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const text = fc.string({ maxLength: 12, unit: 'binary' });

  await fc.assert(
    fc.asyncProperty(fc.constantFrom('pageSize', 'pageIndex', 'nope'), text, async (name, value) => {
      const url = `/v1/accounts?${name}=${encodeURIComponent(value)}&${name}=${encodeURIComponent(value)}x`;
      const response = await sandbox.request('GET', url);
      if (response.statusCode >= 500) throw new Error(`${url} -> ${response.statusCode} ${response.body}`);
      if (response.statusCode >= 300 && !errorBodySchema.safeParse(json(response)).success) throw new Error(`bad error body ${response.body}`);
    }),
    { numRuns: 150, seed: 42 },
  );

  await fc.assert(
    fc.asyncProperty(fc.oneof(fc.jsonValue(), fc.record({ externalId: fc.jsonValue(), type: fc.jsonValue(), name: fc.jsonValue(), email: fc.jsonValue() }, { requiredKeys: [] })), async (value) => {
      const response = await sandbox.request('POST', '/v1/auth/users', JSON.stringify(value ?? null), MULTI);
      if (response.statusCode >= 500) throw new Error(`${JSON.stringify(value)} -> ${response.statusCode} ${response.body}`);
      if (response.statusCode >= 300 && !errorBodySchema.safeParse(json(response)).success) throw new Error(`bad error body ${response.body}`);
    }),
    { numRuns: 300, seed: 7 },
  );

  for (const url of ['/v1/accounts/%zz', '/v1/accounts/%E0%A4%A', `/v1/accounts/${'a'.repeat(5000)}`, '/v1/accounts?pageSize=%00', '/v1/users?pageIndex=1e400']) {
    const response = await sandbox.request('GET', url, undefined, url.startsWith('/v1/users') ? MULTI : {});
    t.ok(response.statusCode >= 400 && response.statusCode < 500, `${url.slice(0, 40)} -> ${response.statusCode}`);
    t.ok(errorBodySchema.safeParse(json(response)).success);
  }
  t.pass('no 500 from random query values and bodies');
});

import t from 'tap';
import { z } from 'zod';
import type { FastifyPluginAsync } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { buildTestApp, json } from '../helper.js';
import { checkerFor } from '../helpers/conformance.js';

// Response conformance (docs/robustness.md#response-conformance-every-test). test/helper.ts validates every response of
// every buildTestApp() app against the app's own /openapi.json (test/helpers/conformance.ts) and fails the file on a
// mismatch; the whole suite is the real check. This file proves the check bites, and that the document gives every
// operation the error body of interface 7.1.

// A probe route that bypasses its own serializer: the document promises { amount: string }, the wire says 12.
const driftingRoute: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/test/drifting',
    { config: { auth: { modes: ['none'], user: 'programme' } }, schema: { response: { 200: z.object({ amount: z.string() }) } } },
    async (_request, reply) => reply.type('application/json; charset=utf-8').send('{"amount":12}' as never),
  );
  app.get(
    '/test/html',
    { config: { auth: { modes: ['none'], user: 'programme' } }, schema: { response: { 200: z.object({ amount: z.string() }) } } },
    async (_request, reply) => reply.type('text/html').send('<p>not the documented JSON</p>' as never),
  );
};

t.test('the hook reports a response that does not match the document, with route, status and reason', async (t) => {
  const sandbox = await buildTestApp({ plugins: [driftingRoute as FastifyPluginAsync] });
  t.teardown(sandbox.close);

  const ok = await sandbox.request('GET', '/v1/accounts/acct_acme_usd');
  t.equal(ok.statusCode, 200);
  t.same(sandbox.conformance.mismatches, [], 'a real answer conforms');
  t.ok(sandbox.conformance.checked >= 1, 'and was checked');

  await sandbox.app.inject({ method: 'GET', url: '/test/drifting' });
  t.equal(sandbox.conformance.mismatches.length, 1, 'the drifting answer is recorded');
  t.match(sandbox.conformance.mismatches[0], { method: 'GET', route: '/test/drifting', status: 200, documented: '200', problem: /\/amount must be string/ });

  await sandbox.app.inject({ method: 'GET', url: '/test/html' });
  t.match(sandbox.conformance.mismatches[1], { route: '/test/html', problem: /a text\/html body was sent but the document declares application\/json/ });

  // an error answer of a documented route is checked against its status (or `default`)
  const notFound = await sandbox.request('GET', '/v1/accounts/acct_nope');
  t.equal(notFound.statusCode, 404);
  t.equal(sandbox.conformance.mismatches.length, 2, 'the 404 error body conforms');
  sandbox.conformance.mismatches.length = 0; // expected here; close() would fail the file otherwise
});

t.test('the checker: statuses, default responses, unmatched routes', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const checker = checkerFor(sandbox.app.swagger() as never);
  const base = { method: 'GET', routeUrl: '/v1/accounts/:accountId', url: '/v1/accounts/x', contentType: 'application/json; charset=utf-8' };
  t.equal(checker.check({ ...base, status: 404, body: '{"message":"no","errorCode":"NOT_FOUND"}' }), null, 'a ServiceError 404');
  t.match(checker.check({ ...base, status: 404, body: '{"message":"no","code":"X"}' }), { documented: '404', problem: /additional properties/ });
  t.match(checker.check({ ...base, status: 503, body: '{"error":"down"}' }), { documented: 'default', problem: /message/ }, 'an undocumented status falls back to default');
  t.match(checker.check({ ...base, status: 200, body: '{"id":1}' }), { documented: '200' });
  t.match(
    checker.check({ method: 'GET', routeUrl: undefined, url: '/nowhere', status: 404, contentType: 'application/json', body: '{"error":"Not Found"}' }),
    { documented: 'ServiceError' },
    'an error of no route must still be the ServiceError body',
  );
  t.equal(checker.check({ ...base, status: 204, body: 'null' }), null, 'a 204 has no body on the wire');
  t.equal(
    checker.check({ method: 'GET', routeUrl: '/v1/statement-files/:fileId', url: '/v1/statement-files/sf_1', status: 200, contentType: 'application/pdf', body: '' }),
    null,
    'a file download matches its declared media types',
  );
});

t.test('the document gives every operation the ServiceError body for its errors', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const document = json(await sandbox.app.inject({ method: 'GET', url: '/openapi.json' }));
  const ref = { $ref: '#/components/schemas/ServiceError' };
  let operations = 0;
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, { responses: Record<string, any> }>>)) {
    for (const [method, operation] of Object.entries(item)) {
      operations += 1;
      const label = `${method.toUpperCase()} ${path}`;
      // (examples of real answers may sit beside the schema: docs/openapi.md#examples)
      const jsonOnly = (content: Record<string, any> | undefined) => ({ types: Object.keys(content ?? {}), schema: content?.['application/json']?.schema });
      t.same(jsonOnly(operation.responses.default?.content), { types: ['application/json'], schema: ref }, `${label}: default is the ServiceError body`);
      for (const [status, response] of Object.entries(operation.responses)) {
        if (!/^[45]/.test(status)) continue;
        t.same(jsonOnly(response.content), { types: ['application/json'], schema: ref }, `${label} ${status}: the ServiceError body`);
      }
    }
  }
  t.ok(operations >= 45, `${operations} operations`);
});

t.test('router-level failures answer the ServiceError body (found by the fuzz test)', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  // a path that does not percent-decode and a parameter over maxParamLength never reach the error handler
  const badUrl = await sandbox.app.inject({ method: 'GET', url: '/v1/accounts/%FF%FE' });
  t.equal(badUrl.statusCode, 400);
  t.same(json(badUrl), { message: 'The request URL is malformed', errorCode: 'INVALID_REQUEST' });
  const tooLong = await sandbox.app.inject({ method: 'GET', url: `/v1/accounts/${'a'.repeat(1100)}` });
  t.equal(tooLong.statusCode, 414);
  t.match(json(tooLong), { message: /longer than this emulator accepts/, errorCode: 'INVALID_REQUEST' });
  t.equal(Object.keys(json(tooLong)).sort().join(), 'errorCode,message');
});

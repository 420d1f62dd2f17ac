import t from 'tap';
import { Validator } from '@seriousme/openapi-schema-validator';
import { routeCatalog } from '../../src/http/route-catalog.js';
import { buildTestApp, json } from '../helper.js';

// OpenAPI 3.1 generated from the zod schemas at /openapi.json, Swagger UI at /docs; every route
// has tags, a summary, request and response schemas (errors included) and an auth policy.

const UNDOCUMENTED = (url: string) => url === '/openapi.json' || url === '/openapi.yaml' || url === '/docs' || url.startsWith('/docs/');

t.test('GET /openapi.json is a valid OpenAPI 3.1 document', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const response = await sandbox.app.inject({ method: 'GET', url: '/openapi.json' });
  t.equal(response.statusCode, 200);
  const document = json(response);
  t.equal(document.openapi, '3.1.0');

  const validator = new Validator();
  const result = await validator.validate(structuredClone(document));
  t.same(result.errors, undefined, 'no validation errors');
  t.equal(result.valid, true);
  t.equal(validator.version, '3.1');

  // every $ref points at a schema that exists (the validator does not resolve component refs)
  const refs = new Set<string>();
  JSON.stringify(document, (key, value) => {
    if (key === '$ref' && typeof value === 'string') refs.add(value);
    return value;
  });
  t.ok(refs.size > 0);
  for (const ref of refs) {
    const [, kind, name] = /^#\/components\/(\w+)\/(.+)$/.exec(ref) ?? [];
    t.ok(kind && name && document.components[kind]?.[name], `${ref} resolves`);
  }

  t.test('every security requirement names a declared scheme', async (t) => {
    // (Spectral's oas3-operation-security-defined is off for the bearer scopes: .spectral.yaml)
    for (const item of Object.values(document.paths) as Array<Record<string, { security?: Array<Record<string, string[]>> }>>) {
      for (const operation of Object.values(item)) {
        for (const requirement of operation.security ?? []) {
          for (const scheme of Object.keys(requirement)) t.ok(document.components.securitySchemes[scheme], `${scheme} is declared`);
        }
      }
    }
  });

  t.test('security schemes of interface 5 and per-operation requirements', async (t) => {
    t.match(document.components.securitySchemes, {
      bearer: { type: 'http', scheme: 'bearer' },
      serviceApiKey: { type: 'apiKey', in: 'header', name: 'X-Service-Api-Key' },
      serviceTimestamp: { type: 'apiKey', in: 'header', name: 'X-Service-Timestamp' },
      serviceProgramId: { type: 'apiKey', in: 'header', name: 'X-Service-Program-Id' },
      serviceSignature: { type: 'apiKey', in: 'header', name: 'X-Service-Signature' },
    });
    const hmac = { serviceApiKey: [], serviceTimestamp: [], serviceProgramId: [], serviceSignature: [] };
    t.same(document.paths['/v1/users'].get.security, [hmac], 'interface 4.11: HMAC only');
    t.same(document.paths['/v1/auth/token'].post.security, [hmac], 'token issuance is HMAC only');
    t.same(document.paths['/v1/accounts'].get.security, [hmac, { bearer: ['accounts:read'] }], 'both modes, with the bearer scope');
    t.same(document.paths['/_emulator/clock'].post.security, [{}, { adminToken: [] }], 'control plane: open, or the admin token when set');
  });

  t.test('error responses are documented with the ServiceError body', async (t) => {
    const schemas = document.components.schemas;
    t.match(schemas.ServiceError, { type: 'object', required: ['message'] });
    t.same(Object.keys(schemas.ServiceError.properties).sort(), ['errorCode', 'message', 'validationErrors']);
    const accounts = document.paths['/v1/accounts/{accountId}'].get.responses;
    for (const status of ['400', '401', '403', '404', 'default']) {
      t.same(accounts[status]?.content?.['application/json']?.schema, { $ref: '#/components/schemas/ServiceError' }, `GET /v1/accounts/{accountId} ${status}`);
      t.not(accounts[status].description, 'Default Response', 'each status is described');
    }
  });
});

t.test('every route has tags, a summary, response schemas with errors, and an auth policy', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const document = json(await sandbox.app.inject({ method: 'GET', url: '/openapi.json' }));
  const all = routeCatalog(sandbox.app).filter((route) => route.method !== 'HEAD' && !UNDOCUMENTED(route.url));
  for (const route of all) t.ok(route.auth, `${route.method} ${route.url} states its config.auth policy`);
  // Hidden routes (the dashboard's static files) stay out of the document; interface routes never hide.
  for (const route of all.filter((candidate) => candidate.schema?.hide)) t.notMatch(route.url, /^\/v1\//, `${route.url} is hidden`);
  const routes = all.filter((route) => !route.schema?.hide);
  t.ok(routes.length >= 8, `${routes.length} documented routes`);

  for (const route of routes) {
    const label = `${route.method} ${route.url}`;
    const schema = route.schema;
    // A route without credentials or input (health) can fail only with the shared `default` response.
    const cannotBeRefused = route.auth?.modes.includes('none') && !schema?.body && !schema?.querystring && !schema?.params;
    t.ok(schema?.tags && schema.tags.length > 0, `${label} has tags`);
    t.ok(schema?.summary, `${label} has a summary`);
    const statuses = Object.keys(schema?.response ?? {});
    t.ok(statuses.some((status) => /^2/.test(status)), `${label} documents its success response`);
    if (!cannotBeRefused) t.ok(statuses.some((status) => /^[45]/.test(status)), `${label} documents its error responses`);

    const openapiPath = route.url.replace(/:(\w+)/g, '{$1}');
    const operation = document.paths[openapiPath]?.[route.method.toLowerCase()];
    t.ok(operation, `${label} appears in /openapi.json`);
    if (!operation) continue;
    t.same(operation.tags, schema?.tags);
    t.ok(operation.responses.default, `${label} has the default error response`);
    if (['POST', 'PUT', 'PATCH'].includes(route.method) && schema?.body) t.ok(operation.requestBody, `${label} documents its body`);
  }
});

t.test('/docs serves Swagger UI', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const page = await sandbox.app.inject({ method: 'GET', url: '/docs' });
  t.equal(page.statusCode, 200);
  t.match(page.headers['content-type'], /text\/html/);
  t.match(page.body, /Swagger UI/);
  // docs/robustness.md#web-pages: no page may frame it
  for (const answer of [page, await sandbox.app.inject({ method: 'GET', url: '/docs/static/swagger-ui.css' })]) {
    t.match(answer.headers, { 'content-security-policy': "frame-ancestors 'none'", 'x-frame-options': 'DENY', 'x-content-type-options': 'nosniff' });
  }
  const spec = await sandbox.app.inject({ method: 'GET', url: '/docs/json' });
  t.equal(spec.statusCode, 200);
  t.equal(json(spec).openapi, '3.1.0', 'the UI loads the same document');
  const asset = await sandbox.app.inject({ method: 'GET', url: '/docs/static/swagger-ui.css' });
  t.equal(asset.statusCode, 200, 'static assets are served');
  // the UI is built on the first /docs request (cold start: docs/benchmarks.md); its misses are still the error body of
  // interface 7
  const head = await sandbox.app.inject({ method: 'HEAD', url: '/docs' });
  t.equal(head.statusCode, 200);
  t.equal(head.headers['content-length'], String(Buffer.byteLength(page.body)), 'HEAD reports the length of the page');
  const missing = await sandbox.app.inject({ method: 'GET', url: '/docs/no-such-file.js' });
  t.equal(missing.statusCode, 404);
  t.equal(json(missing).errorCode, 'NOT_FOUND');
  const post = await sandbox.app.inject({ method: 'POST', url: '/docs' });
  t.equal(post.statusCode, 405);
  t.equal(post.headers.allow, 'GET, HEAD');
  const postElsewhere = await sandbox.app.inject({ method: 'POST', url: '/docs/nope' });
  t.equal(postElsewhere.statusCode, 404, 'another /docs path is unknown, not a 405');
  t.equal((await sandbox.app.inject({ method: 'GET', url: '/docs/json/' })).statusCode, 200, 'a trailing slash is ignored, as on every route');
  // the UI's own refusals carry the error body of interface 7
  const forbidden = await sandbox.app.inject({ method: 'GET', url: '/docs/static/%00' });
  t.equal(forbidden.statusCode, 403);
  t.same(Object.keys(json(forbidden)).sort(), ['errorCode', 'message']);
  const range = await sandbox.app.inject({ method: 'GET', url: '/docs/static/swagger-ui.css', headers: { range: 'bytes=5-1' } });
  t.equal(range.statusCode, 416);
  t.equal(json(range).errorCode, 'INVALID_REQUEST');
});

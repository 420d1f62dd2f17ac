import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import Converter from 'openapi-to-postmanv2';
import { signRequest } from '../../src/lib/hmac.js';
import { buildTestApp, CREDENTIALS } from '../helper.js';

// The document imported into Postman as Postman's own import does it (docs/openapi.md#importing-the-document-into-postman):
// openapi-to-postmanv2's convertV2 with Postman's import setting "parameter generation: example", run in the
// collection's order against a fresh server (default fixtures, port 0). Every request is signed as the project's own
// collection signs (scripts/postman.mjs): the MULTI_USER key (the document's X-Service-User-Id example names the user;
// the user-management operations need that key), the payout variant under /v1/payout-origination/, nothing for
// /v1/statement-files/. newman is not used: it is no devDependency (test/http/postman.test.ts installs it on
// demand into .peers/ and runs it as a child process, which keeps a file out of `npm run test:unit`); the
// requests here are sent as converted, only the four X-Service-* headers added.
//
// What cannot answer 2xx on a fresh server, by operation, and why (everything else must):
const NOT_2XX_ON_A_FRESH_SERVER: Record<string, string> = {
  // The default fixtures have no information request and no transaction intent (fixtures/default.json): their
  // ids exist only once a request made them, so the document's example is the id the examples' journey made.
  getInformationRequest: 'no information request in the default fixtures',
  writeInformationRequestEntries: 'no information request in the default fixtures',
  submitInformationRequest: 'no information request in the default fixtures',
  getTransactionIntent: 'no transaction intent in the default fixtures',
  commitTransactionIntent: 'no transaction intent in the default fixtures',
  cancelTransactionIntent: 'no transaction intent in the default fixtures',
  // the query carries the signature of a link the server signed (a StatementLink's url): no document can hold one
  downloadStatementFile: 'the link signature is made by the server when it answers GET /v1/accounts/{accountId}/statement',
};

type Json = Record<string, any>;

interface ConvertedItem {
  name: string;
  request: {
    method: string;
    url: { path?: string[]; query?: Array<{ key: string; value: string | null; disabled?: boolean }>; variable?: Array<{ key: string; value: string }> };
    header?: Array<{ key: string; value: string; disabled?: boolean }>;
    body?: { mode?: string; raw?: string };
  };
}

/** openapi-to-postmanv2 with Postman's import settings: the requests of the collection, in its order. */
export function convert(documentText: string): Promise<ConvertedItem[]> {
  return new Promise((resolve, reject) => {
    Converter.convertV2({ type: 'string', data: documentText }, { parametersResolution: 'Example', folderStrategy: 'Paths' }, (error: { message: string } | null, result?: Json) => {
      if (error || !result?.result) return reject(new Error(error?.message ?? result?.reason ?? 'conversion failed'));
      const items: ConvertedItem[] = [];
      const walk = (list: Json[]) => list.forEach((item) => (item.item ? walk(item.item) : items.push(item as ConvertedItem)));
      walk(result.output[0].data.item);
      resolve(items);
    });
  });
}

/** The document's operationId for a converted request (its path as `:name` segments). */
function operationIdOf(document: Json, item: ConvertedItem): string {
  const segments = item.request.url.path ?? [];
  for (const [route, operations] of Object.entries(document.paths as Json)) {
    const parts = route.split('/').filter(Boolean);
    if (parts.length !== segments.length) continue;
    if (!parts.every((part, index) => (part.startsWith('{') ? segments[index] === `:${part.slice(1, -1)}` : part === segments[index]))) continue;
    const operation = (operations as Json)[item.request.method.toLowerCase()];
    if (operation) return operation.operationId as string;
  }
  throw new Error(`no operation for ${item.request.method} /${segments.join('/')}`);
}

t.test('the document imported into Postman: every request a fresh server can answer with 2xx does', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const documentText = (await sandbox.app.inject({ method: 'GET', url: '/openapi.json' })).body;
  const document = JSON.parse(documentText) as Json;
  await sandbox.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(sandbox.app.server.address() as AddressInfo).port}`;

  // every parameter, /v1 and control plane, says its value: its own example, its schema's, a default or a closed set
  // (no invented values)
  const resolve = (parameter: Json): Json => (parameter.$ref ? document.components.parameters[String(parameter.$ref).split('/').pop()!] : parameter);
  const said = (parameter: Json): unknown => {
    const schema = parameter.schema ?? {};
    return parameter.example ?? schema.example ?? schema.examples?.[0] ?? schema.default ?? schema.enum?.[0];
  };
  for (const [route, operations] of Object.entries(document.paths as Json)) {
    for (const [method, operation] of Object.entries(operations as Json)) {
      if (typeof operation !== 'object' || !(operation as Json).responses) continue;
      for (const parameter of ((operation as Json).parameters ?? []).map(resolve)) {
        t.not(said(parameter), undefined, `${method.toUpperCase()} ${route}: ${parameter.in} parameter ${parameter.name} has an example`);
      }
    }
  }

  // a control-plane read with every query example at once answers 200 on a fresh server: the examples name what the
  // default fixtures have and agree with each other (docs/openapi.md#parameter-examples)
  for (const [route, operations] of Object.entries(document.paths as Json)) {
    const operation = (operations as Json).get as Json | undefined;
    if (!route.startsWith('/_emulator/') || !operation) continue;
    const parameters = ((operation.parameters ?? []) as Json[]).map(resolve);
    if (!parameters.some((parameter) => parameter.in === 'query')) continue;
    if (operation.responses?.['200']?.content?.['text/event-stream']) continue; // the listen stream stays open
    let path = route;
    const query = new URLSearchParams();
    for (const parameter of parameters) {
      if (parameter.in === 'path') path = path.replace(`{${parameter.name}}`, encodeURIComponent(String(said(parameter))));
      if (parameter.in === 'query') query.set(parameter.name, String(said(parameter)));
    }
    const answer = await sandbox.app.inject({ method: 'GET', url: `${path}?${query}` });
    t.equal(answer.statusCode, 200, `GET ${path}?${query} with its examples: ${answer.body.slice(0, 300)}`);
  }

  const items = (await convert(documentText)).filter((item) => item.request.url.path?.[0] === 'v1');
  const v1 = Object.entries(document.paths as Json).filter(([route]) => route.startsWith('/v1/')).flatMap(([, operations]) => Object.keys(operations as Json));
  t.equal(items.length, v1.length, 'one request per /v1 operation');

  const statuses: Record<string, number> = {};
  for (const item of items) {
    const operationId = operationIdOf(document, item);
    const variables = Object.fromEntries((item.request.url.variable ?? []).map(({ key, value }) => [key, value]));
    const path = `/${(item.request.url.path ?? []).map((segment) => (segment.startsWith(':') ? encodeURIComponent(variables[segment.slice(1)] ?? '') : segment)).join('/')}`;
    const query = (item.request.url.query ?? []).filter((entry) => !entry.disabled).map(({ key, value }) => `${encodeURIComponent(key)}=${encodeURIComponent(value ?? '')}`);
    const url = new URL(`${base}${path}${query.length ? `?${query.join('&')}` : ''}`);
    const target = `${url.pathname}${url.search}`;
    const headers: Record<string, string> = {};
    for (const header of item.request.header ?? []) if (!header.disabled) headers[header.key.toLowerCase()] = header.value;
    const body = item.request.body?.mode === 'raw' ? (item.request.body.raw ?? '') : undefined;
    const method = item.request.method.toUpperCase();
    if (!path.startsWith('/v1/statement-files/')) {
      const { apiKey, secret } = CREDENTIALS.multi;
      const payout = path.startsWith('/v1/payout-origination/');
      const timestamp = payout ? new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') : String(Date.now());
      const signature = payout
        ? `sha256=${createHmac('sha256', secret).update(`${apiKey}${timestamp}${method}${target}${body ?? ''}`).digest('hex')}`
        : signRequest({ apiKey, secret, timestamp, method, target, body: body ?? '' });
      Object.assign(headers, { 'x-service-api-key': apiKey, 'x-service-timestamp': timestamp, 'x-service-program-id': CREDENTIALS.programmeId, 'x-service-signature': signature });
    }
    const answer = await fetch(url, { method, headers, body: body === undefined || method === 'GET' ? undefined : body });
    statuses[operationId] = answer.status;
    const text = await answer.text();
    const expected = NOT_2XX_ON_A_FRESH_SERVER[operationId];
    if (expected === undefined) t.ok(answer.status < 300, `${operationId}: ${method} ${target} answers ${answer.status} ${answer.status < 300 ? '' : text.slice(0, 300)}`);
    else t.ok(answer.status >= 400, `${operationId}: ${method} ${target} answers ${answer.status} (${expected})`);
  }
  const ok = Object.values(statuses).filter((status) => status < 300).length;
  t.equal(ok, items.length - Object.keys(NOT_2XX_ON_A_FRESH_SERVER).length, `${ok} of ${items.length} requests answer 2xx: ${JSON.stringify(statuses)}`);
});

import { readFileSync } from 'node:fs';
import { METHODS, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import t from 'tap';
import type { Test } from 'tap';
import { z } from 'zod';
import { buildTestApp, json, type TestApp } from '../helper.js';
import { base64, countTransactions, fund, postPayout } from '../helpers/funding.js';
import { routeCatalog } from '../../src/http/route-catalog.js';
import { isCalendarDay, utcMs } from '../../src/lib/calendar.js';
import { parseInstantMs } from '../../src/domains/transactions/transactions.schema.js';
import { EMAIL_PATTERN } from '../../src/http/formats.js';

// HTTP and format edges (docs/decisions.md#status-codes, #null-body, #email-addresses, #clock-range;
// docs/payouts.md#the-pacs008-payload-iso-20022): each answered with the error body, none reinterpreted.

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request over a real socket with any method Node's client sends (fetch refuses some, inject others). */
function raw(port: number, method: string, path: string, options: { type?: string; body?: string } = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (options.type) headers['content-type'] = options.type;
    if (options.body !== undefined) headers['content-length'] = String(Buffer.byteLength(options.body));
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** A CONNECT request written by hand: Node's server hands it to `connect` listeners, not to the app. */
function rawConnect(port: number, target: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
  });
}

async function listening(t: Test): Promise<{ sandbox: TestApp; port: number }> {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  await sandbox.app.listen({ port: 0, host: '127.0.0.1' });
  return { sandbox, port: (sandbox.app.server.address() as { port: number }).port };
}

// Every method Node's HTTP parser accepts, but CONNECT (below, by hand).
const OTHER_METHODS = METHODS.filter((method) => method !== 'CONNECT');
const BODIES: Array<{ name: string; type?: string; body?: string }> = [
  { name: 'no body, no Content-Type' },
  { name: 'malformed JSON', type: 'application/json', body: '{' },
  { name: 'an XML body', type: 'text/xml', body: '<a/>' },
  { name: 'a form body', type: 'application/x-www-form-urlencoded', body: 'a=1' },
];

t.test('a method a path does not take: 405 with Allow; an unknown path: 404; whatever the method and body', async (t) => {
  const { sandbox, port } = await listening(t);
  const session = json(await sandbox.app.inject({ method: 'POST', url: '/_emulator/sessions' }));
  const known = [
    { path: '/v1/accounts', allow: 'GET, HEAD' },
    { path: '/_emulator/clock', allow: 'GET, HEAD, POST' },
    { path: `/_sessions/${session.id}/v1/accounts`, allow: 'GET, HEAD' },
  ];
  const failures: string[] = [];
  // Each method with one of the bodies in turn; the methods that usually carry a body with all of them.
  for (const [index, method] of OTHER_METHODS.entries()) {
    const variants = ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'QUERY'].includes(method) ? BODIES : [BODIES[index % BODIES.length]!];
    for (const variant of variants) {
      for (const { path, allow } of known) {
        if (allow.split(', ').includes(method)) continue;
        const answer = await raw(port, method, path, variant);
        const ok = answer.status === 405 && answer.headers.allow === allow && (method === 'HEAD' || json({ body: answer.body } as never).errorCode === 'INVALID_REQUEST');
        if (!ok) failures.push(`${method} ${path} (${variant.name}): ${answer.status} ${answer.body.slice(0, 120)}`);
      }
      for (const path of ['/nope', '/_emulator/nope', `/_sessions/${session.id}/v1/nope`]) {
        const answer = await raw(port, method, path, variant);
        const ok = answer.status === 404 && answer.headers.allow === undefined && (method === 'HEAD' || json({ body: answer.body } as never).errorCode === 'NOT_FOUND');
        if (!ok) failures.push(`${method} ${path} (${variant.name}): ${answer.status} ${answer.body.slice(0, 120)}`);
      }
    }
  }
  t.same(failures, [], `${OTHER_METHODS.length} methods on known and unknown paths`);

  const query = await raw(port, 'QUERY', '/v1/accounts');
  t.equal(query.status, 405, 'QUERY without a Content-Type');
  t.match(json({ body: query.body } as never).message, /Method QUERY is not allowed on \/v1\/accounts; allowed: GET, HEAD/);

  const connectKnown = await rawConnect(port, '/v1/accounts');
  t.match(connectKnown, /^HTTP\/1\.1 405 /, 'CONNECT on a known path');
  t.match(connectKnown, /\r\nallow: GET, HEAD\r\n/i);
  t.match(connectKnown, /"errorCode":"INVALID_REQUEST"/);
  t.match(await rawConnect(port, '/nope'), /^HTTP\/1\.1 404 [\s\S]*"errorCode":"NOT_FOUND"/, 'CONNECT on an unknown path');
  t.match(await rawConnect(port, 'example.com:443'), /^HTTP\/1\.1 404 [\s\S]*No route for CONNECT example.com:443/, 'CONNECT as a proxy');
  t.match(await rawConnect(port, `/_sessions/${session.id}/v1/accounts`), /^HTTP\/1\.1 405 /, 'CONNECT in a session');
  t.equal((await raw(port, 'GET', '/_emulator/health')).status, 200, 'the server still answers');
});

t.test('JSON null where an object is required: 400 on every route that takes a body; no body stays fine', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  // Every route with a JSON body, found from the catalog; the payout's body is Base64 text, not JSON.
  const withBody = routeCatalog(sandbox.app).filter((route) => route.schema?.body instanceof z.ZodType && !route.schema.body.safeParse('text').success);
  t.ok(withBody.length >= 25, `${withBody.length} routes take a JSON body`);
  const optional = withBody.filter((route) => (route.schema!.body as z.ZodType).safeParse(undefined).success).map((route) => `${route.method} ${route.url}`);
  t.ok(optional.includes('POST /v1/auth/token') && optional.includes('POST /_emulator/settle') && optional.includes('POST /_emulator/sessions'), 'optional bodies among them');
  const failures: string[] = [];
  for (const route of withBody) {
    const url = route.url.replace(/:[A-Za-z]+/g, 'x');
    const answer = await sandbox.request(route.method, url, 'null');
    const body = json(answer);
    if (answer.statusCode !== 400 || body.validationErrors?.[0]?.fieldRef !== 'body' || !/not null/.test(body.message)) {
      failures.push(`${route.method} ${route.url}: ${answer.statusCode} ${answer.body.slice(0, 160)}`);
    }
  }
  t.same(failures, [], 'null refused everywhere');
  const token = await sandbox.request('POST', '/v1/auth/token', 'null');
  t.same(json(token), {
    message: 'body must be a JSON object, not null',
    validationErrors: [{ type: 'InvalidFormat', fieldRef: 'body', message: 'body must be a JSON object, not null' }],
  });
  const sessionsBefore = json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/sessions' })).data.length;
  const nullSession = await sandbox.app.inject({ method: 'POST', url: '/_emulator/sessions', payload: 'null', headers: { 'content-type': 'application/json' } });
  t.equal(nullSession.statusCode, 400);
  t.equal(json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/sessions' })).data.length, sessionsBefore, 'no session made');

  // Absent bodies on the optional-body routes: as before.
  t.equal((await sandbox.request('POST', '/v1/auth/token')).statusCode, 200, 'token without a body');
  t.equal((await sandbox.app.inject({ method: 'POST', url: '/_emulator/settle' })).statusCode, 200, 'settle without a body');
  t.equal((await sandbox.app.inject({ method: 'POST', url: '/_emulator/settle', headers: { 'content-type': 'application/json' } })).statusCode, 200, 'empty JSON body');
  t.equal((await sandbox.app.inject({ method: 'POST', url: '/_emulator/enrollment/usr_jane/revoke' })).statusCode, 200, 'revoke without a body');
  t.equal((await sandbox.app.inject({ method: 'POST', url: '/_emulator/sessions' })).statusCode, 201, 'a session without a body');
});

t.test('emails: RFC 5321/1123 label rules, in the server and the document', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const refused = ['ada@example-.com', 'ada@-example.com', `ada@${'b'.repeat(64)}.com`, `${'a'.repeat(65)}@example.com`, 'ada@example.c', 'ada@example.123', '.ada@example.com', 'ada..b@example.com', 'ada@example..com'];
  const accepted = ['ada@example.com', 'ada.lovelace+sandbox@mail.example-co.uk', `${'a'.repeat(64)}@${'b'.repeat(63)}.com`, "o'brien@123.example"];
  const document = json(await sandbox.app.inject({ method: 'GET', url: '/openapi.json' }));
  const patterns = new Set<string>();
  JSON.stringify(document, (key, value: unknown) => {
    if (key === 'email' && value && typeof value === 'object' && 'pattern' in value) patterns.add((value as { pattern: string }).pattern);
    return value;
  });
  t.same([...patterns], [EMAIL_PATTERN.source], 'every email in the document has the server\'s pattern');
  const documented = new RegExp([...patterns][0]!, 'u');
  for (const email of refused) {
    t.notOk(documented.test(email), `the document refuses ${email}`);
    const beneficiary = await sandbox.request('POST', '/v1/beneficiaries', { name: 'Email Test', type: 'BUSINESS', email, idempotencyKey: `email-${email.length}` });
    t.equal(beneficiary.statusCode, 400, `beneficiary ${email}`);
    t.ok(
      (json(beneficiary).validationErrors as Array<{ type: string; fieldRef: string }>).some((item) => item.type === 'InvalidFormat' && item.fieldRef === 'email'),
      `beneficiary ${email}: email named`,
    );
    const user = await sandbox.request('POST', '/v1/auth/users', { externalId: `email-${email.length}`, type: 'PERSON', name: 'Email Test', email }, { apiKey: 'pk_sandbox_multi', secret: 'sk_sandbox_multi_secret' });
    t.equal(user.statusCode, 400, `user ${email}`);
    t.match(json(user).message, /email must be an email address/);
  }
  for (const [index, email] of accepted.entries()) {
    t.ok(documented.test(email), `the document accepts ${email}`);
    const user = await sandbox.request('POST', '/v1/auth/users', { externalId: `email-ok-${index}`, type: 'PERSON', name: 'Email Test', email }, { apiKey: 'pk_sandbox_multi', secret: 'sk_sandbox_multi_secret' });
    t.equal(user.statusCode, 201, `user ${email}: ${user.body}`);
  }
});

t.test('instants and dates are read as written for years 0000-9999', async (t) => {
  t.equal(utcMs(99, 1, 1), Date.parse('0099-01-01T00:00:00Z'), 'not 1999');
  t.equal(utcMs(0, 2, 29, 12, 30, 15), Date.parse('0000-02-29T12:30:15Z'));
  t.ok(isCalendarDay(0, 2, 29), 'year 0 is a leap year');
  t.notOk(isCalendarDay(100, 2, 29), 'year 100 is not');
  t.notOk(isCalendarDay(2026, 2, 30));
  t.equal(parseInstantMs('0099-01-01T00:00:00Z', 'lower'), Date.parse('0099-01-01T00:00:00Z'));
  t.equal(parseInstantMs('0000-01-01T00:30:00+01:00', 'lower'), Date.parse('0000-01-01T00:30:00+01:00'));

  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const inOrder = await sandbox.request('GET', '/v1/transactions?minUpdatedAt=0099-01-01T00:00:00Z&maxUpdatedAt=0150-01-01T00:00:00Z');
  t.equal(inOrder.statusCode, 200, `bounds in order: ${inOrder.body}`);
  t.same(json(inOrder).data, []);
  const reversed = await sandbox.request('GET', '/v1/transactions?minUpdatedAt=0150-01-01T00:00:00Z&maxUpdatedAt=0099-01-01T00:00:00Z');
  t.equal(reversed.statusCode, 400, 'reversed bounds are still refused');
  const reachesNow = await sandbox.request('GET', '/v1/transactions?minUpdatedAt=0001-01-01T00:00:00Z');
  t.ok(json(reachesNow).data.length > 0, 'year 1 is before every transaction');
  const statement = await sandbox.request('GET', '/v1/accounts/acct_acme_usd/statement?from=0099-01-01&to=0099-01-31');
  t.equal(statement.statusCode, 400);
  t.notMatch(statement.body, /not a calendar date|real calendar day/, 'read as the year 99: a real day, refused for its range only');
});

t.test('the clock holds instants up to 9999-12-31T23:59:59.999Z', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const clock = (payload: unknown) => sandbox.app.inject({ method: 'POST', url: '/_emulator/clock', payload: payload as object });
  const beyond = await clock({ freezeAt: '9999-12-31T23:59:59.999-00:01' });
  t.equal(beyond.statusCode, 400, 'freezeAt past the last instant (an offset takes it there)');
  t.match(json(beyond).validationErrors, [{ type: 'InvalidValue', fieldRef: 'freezeAt' }]);
  t.match(json(beyond).message, /past 9999-12-31T23:59:59.999Z/);
  t.equal((await clock({ freezeAt: '9999-12-31T23:59:59.990Z' })).statusCode, 200);
  const advancePast = await clock({ advanceMs: 10 });
  t.equal(advancePast.statusCode, 400, 'advancing past the last instant');
  t.match(json(advancePast).validationErrors, [{ type: 'InvalidValue', fieldRef: 'advanceMs' }]);
  const toTheEnd = await clock({ advanceMs: 9 });
  t.equal(json(toTheEnd).now, '9999-12-31T23:59:59.999Z', 'up to it is fine');
  // Time flowing from the last millisecond stops there instead of printing +010000-...
  t.equal((await clock({ realtime: true })).statusCode, 200);
  const later = json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/clock' }));
  t.equal(later.now, '9999-12-31T23:59:59.999Z');
  const accounts = await sandbox.request('GET', '/v1/accounts');
  t.equal(accounts.statusCode, 200);
  t.notMatch(accounts.body, /\+0100/, 'no instant past the range in an answer');

  const session = await sandbox.app.inject({ method: 'POST', url: '/_emulator/sessions', payload: { clock: '9999-12-31T23:59:59-01:00' } });
  t.equal(session.statusCode, 400, 'a session clock past the last instant');
  t.match(json(session).validationErrors, [{ fieldRef: 'clock' }]);
  t.match(json(session).message, /up to 9999-12-31T23:59:59.999Z/);
});

t.test('a pacs.008 that is not well-formed XML is refused before any field is read', async (t) => {
  const xml = readFileSync(new URL('../../fixtures/pacs008-usd-ach.xml', import.meta.url), 'utf8');
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  fund(sandbox.ctx, 'acct_acme_usd', '10000.00');
  const before = countTransactions(sandbox);
  const withoutAmount = xml.replace(/<IntrBkSttlmAmt[^>]*>[^<]*<\/IntrBkSttlmAmt>/, '');
  for (const [name, text, pattern] of [
    ['an undefined entity', xml.replace('Invoice GLX-2026-0042', 'Invoice &nope; GLX'), /the entity &nope; is not defined/],
    ['an undefined entity, the amount missing too', withoutAmount.replace('Invoice GLX-2026-0042', '&nope;'), /the entity &nope; is not defined/],
    ['an undefined entity in an attribute', xml.replace('Ccy="USD"', 'Ccy="&usd;"'), /the entity &usd; is not defined/],
    ['a reference to no character', xml.replace('Invoice GLX-2026-0042', 'Invoice &#0;'), /&#0; names no XML character/],
    ['a reference past Unicode', xml.replace('Invoice GLX-2026-0042', 'Invoice &#x110000;'), /&#x110000; names no XML character/],
  ] as const) {
    const answer = await postPayout(sandbox, { format: 'pacs008', body: base64(text) });
    t.equal(answer.statusCode, 400, name);
    t.match(json(answer).validationErrors, [{ type: 'InvalidFormat', fieldRef: 'body' }], name);
    t.match(json(answer).message, /^The decoded payload is not well-formed XML: /, name);
    t.match(json(answer).message, pattern, name);
    t.match(json(answer).message, /\(line \d+, column \d+\)/, `${name}: says where`);
  }
  t.equal(countTransactions(sandbox), before, 'no payout from a refused message');
  // What is well-formed stays accepted: predefined entities, character references, an entity-like text in a comment.
  const fine = xml.replace('Invoice GLX-2026-0042', 'Invoice &amp; &#65;&#x42; GLX<!-- &nope; -->');
  const accepted = await postPayout(sandbox, { format: 'pacs008', body: base64(fine) });
  t.equal(accepted.statusCode, 202, accepted.body);
});

import t from 'tap';
import { buildTestApp, CREDENTIALS, json } from '../helper.js';
import { fund } from '../helpers/funding.js';
import { RequestJournal, type RecordedRequest } from '../../src/emulator/journal.service.js';

// Request journal (docs/test-kit.md#request-journal, docs/decisions.md#journal): bounded ring buffer, secrets redacted,
// filters.
t.test('journal records requests with secrets and signatures redacted', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);

  const token = json(await sandbox.request('POST', '/v1/auth/token', {}));
  t.ok(token.accessToken, 'token issued');
  await sandbox.request('GET', '/v1/accounts', undefined, { bearer: token.accessToken });
  await sandbox.request('GET', '/v1/accounts/acct_nope');
  await sandbox.request('POST', '/v1/auth/users', { externalId: 'journal-1', type: 'PERSON', name: 'Jo' }, {
    apiKey: CREDENTIALS.multi.apiKey,
    secret: CREDENTIALS.multi.secret,
  });

  const response = await sandbox.app.inject({ method: 'GET', url: '/_emulator/requests' });
  t.equal(response.statusCode, 200);
  const { data, capacity } = json(response);
  t.equal(capacity, 1000);
  t.same(
    data.map((entry: { method: string; path: string; status: number }) => `${entry.method} ${entry.path} ${entry.status}`),
    ['POST /v1/auth/token 200', 'GET /v1/accounts 200', 'GET /v1/accounts/acct_nope 404', 'POST /v1/auth/users 201'],
    'oldest first, own requests not journaled',
  );
  const text = JSON.stringify(data);
  t.notOk(text.includes(token.accessToken), 'no access token anywhere in the journal');
  t.notOk(text.includes(CREDENTIALS.single.secret), 'no API secret');
  t.notOk(/[0-9a-f]{64}/.test(text), 'no signature');
  t.equal(data[0].responseBody.accessToken, '[REDACTED]');
  t.equal(data[0].requestHeaders['x-service-signature'], '[REDACTED]');
  t.equal(data[1].requestHeaders.authorization, '[REDACTED]');
  t.equal(data[1].authMode, 'bearer');
  t.equal(data[1].userId, 'usr_acme');
  t.equal(data[3].requestBody.externalId, 'journal-1');
  t.equal(data[3].programmeId, 'prg_sandbox');
  // measured by the journal's own clock, with logging off too (the test app is silent)
  t.ok(data.every((entry: { latencyMs: number }) => entry.latencyMs > 0 && entry.latencyMs < 60_000), 'every latency is measured');
  t.ok(data.every((entry: { at: string }) => Math.abs(Date.parse(entry.at) - Date.now()) < 60_000), 'arrival on the wall clock');

  const filtered = (query: string) => sandbox.app.inject({ method: 'GET', url: `/_emulator/requests?${query}` }).then((r) => json(r).data);
  t.equal((await filtered('method=post')).length, 2, 'method filter is case-insensitive');
  t.equal((await filtered('pathPrefix=/v1/accounts')).length, 2);
  t.equal((await filtered('status=404')).length, 1);
  t.equal((await filtered('limit=1'))[0].path, '/v1/auth/users', 'limit keeps the newest');
  t.equal((await filtered('since=2999-01-01T00:00:00Z')).length, 0);

  for (const bad of ['status=99', 'pathPrefix=v1', 'since=yesterday', 'limit=0', 'method=G3T']) {
    const refused = await sandbox.app.inject({ method: 'GET', url: `/_emulator/requests?${bad}` });
    t.equal(refused.statusCode, 400, bad);
    t.ok(json(refused).validationErrors.length > 0);
  }

  const cleared = await sandbox.app.inject({ method: 'DELETE', url: '/_emulator/requests' });
  t.equal(cleared.statusCode, 204);
  t.equal((await filtered('')).length, 0);
});

t.test('journal is a bounded ring buffer', async (t) => {
  const sandbox = await buildTestApp({ config: { journalSize: 3 } });
  t.teardown(sandbox.close);
  for (let i = 0; i < 7; i += 1) await sandbox.app.inject({ method: 'GET', url: `/v1/nope-${i}` });
  const { data, capacity } = json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/requests' }));
  t.equal(capacity, 3);
  t.same(data.map((entry: { path: string }) => entry.path), ['/v1/nope-4', '/v1/nope-5', '/v1/nope-6']);
  t.same(data.map((entry: { seq: number }) => entry.seq), [5, 6, 7]);
});

/** A recorded GET whose JSON answer is `responseRaw`, for the ring tests below. */
const recordedGet = (i: number, responseRaw: string, responseType = 'application/json; charset=utf-8'): RecordedRequest => ({
  atMs: 0,
  method: 'GET',
  path: `/v1/p-${i}`,
  query: null,
  status: 200,
  latencyMs: 0,
  programmeId: null,
  userId: null,
  authMode: null,
  faults: [],
  headers: {},
  requestRaw: null,
  requestType: undefined,
  responseRaw,
  responseType,
});

// JSON answers the journal keeps whole are held as bytes in one ring per journal (src/emulator/journal.service.ts,
// BodyRing): however the ring wraps, every entry whose body is still in the ring reads back exactly.
t.test('bodies kept in the ring read back exactly, across wraps', async (t) => {
  const recorded = (i: number, chars: number, fill = ''): RecordedRequest =>
    // multi-byte characters too: the ring holds UTF-8 bytes
    recordedGet(i, JSON.stringify({ i, text: `é€😀${fill ? fill.repeat(chars) : String(i).repeat(chars)}` }));
  for (const [capacity, chars, count, fill] of [
    [3, 5_000, 20, ''], // small bodies: many wraps of the ring
    [2, 31_000, 9, ''], // bodies near the 32 KiB cap: a small journal never drops an answer it still lists
    [2, 10_000, 9, '€'], // 30 KB of UTF-8 from 10,000 characters: the ring is sized in bytes
    [5, 100, 12, ''], // below the size the ring takes
  ] as const) {
    const journal = new RequestJournal(capacity);
    const sent: string[] = [];
    for (let i = 0; i < count; i += 1) {
      const entry = recorded(i, chars, fill);
      sent.push(entry.responseRaw as string);
      journal.add(entry);
      const expected = sent.slice(-capacity).map((text) => JSON.parse(text));
      t.same(
        journal.all().map((e) => e.responseBody),
        expected,
        `capacity ${capacity}, ${chars} chars, after ${i + 1}`,
      );
    }
    journal.clear();
    t.same(journal.all(), [], 'cleared');
    // read only once, after every add: each body is decoded from the ring when the journal is read
    const unread = new RequestJournal(capacity);
    for (let i = 0; i < count; i += 1) unread.add(recorded(i, chars, fill));
    t.same(
      unread.all().map((e) => e.responseBody),
      sent.slice(-capacity).map((text) => JSON.parse(text)),
      `capacity ${capacity}, ${chars} chars, read once at the end`,
    );
  }
});

// docs/test-kit.md#request-journal: the ring is the journal's budget for answers; when a body does not fit, the
// oldest bodies give up their place and their entries read back with a note, while every entry stays listed.
t.test('past the ring budget the oldest answers read back as a note, the newest exactly', async (t) => {
  const entry = (i: number): RecordedRequest => recordedGet(i, JSON.stringify({ i, text: 'é'.repeat(10_000) }), 'application/json'); // 20,017 bytes of UTF-8
  const journal = new RequestJournal(10, 64 * 1024);
  const sent: string[] = [];
  for (let i = 0; i < 10; i += 1) {
    const recorded = entry(i);
    sent.push(recorded.responseRaw as string);
    journal.add(recorded);
    // read as it goes: what a read builds is not kept, so it cannot hold answers past the budget
    if (i === 1) t.same(journal.all().map((e) => e.responseBody), sent.map((text) => JSON.parse(text)), 'the first two read back whole');
  }
  const bodies = journal.all().map((e) => e.responseBody);
  t.equal(bodies.length, 10, 'every entry is listed');
  const exact = bodies.filter((body, i) => typeof body === 'object' && JSON.stringify(body) === sent[i]).length;
  // 64 KiB holds three 20 KB bodies, or two when the third would cross the ring's end
  t.ok(exact >= 2 && exact <= 3, `the newest bodies read back exactly (${exact})`);
  t.same(
    bodies.slice(10 - exact).map((body) => JSON.stringify(body)),
    sent.slice(10 - exact),
    'the exact ones are the newest',
  );
  for (const body of bodies.slice(0, 10 - exact)) {
    t.equal(body, '[20017 bytes not kept: the journal keeps its newest 64 KiB of answers]', 'older ones: a note with the size');
  }
  journal.clear();
  journal.add(entry(10));
  t.same(journal.all()[0]!.responseBody, JSON.parse(entry(10).responseRaw as string), 'after a clear the ring starts again');
});

// docs/test-kit.md#request-journal: request bodies of 2-32 KiB have a ring of their own with the same budget, so 1,000
// entries of 32 KiB requests no longer hold 32 MB per sandbox; small bodies, and every entry, stay.
t.test('past the budget the oldest request bodies read back as a note; small ones and every entry stay', async (t) => {
  const journal = new RequestJournal(12, 64 * 1024);
  const sent: string[] = [];
  for (let i = 0; i < 10; i += 1) {
    const body = JSON.stringify({ i, text: 'é'.repeat(10_000) }); // 20,017 bytes of UTF-8
    sent.push(body);
    journal.add({ ...recordedGet(i, '{}'), method: 'POST', requestRaw: i % 2 === 0 ? body : Buffer.from(body), requestType: 'application/json' });
  }
  journal.add({ ...recordedGet(10, '{}'), method: 'POST', requestRaw: '{"small":true}', requestType: 'application/json' });
  const bodies = journal.all().map((e) => e.requestBody);
  t.equal(bodies.length, 11, 'every entry is listed');
  t.same(bodies[10], { small: true }, 'a small body is kept as it came');
  const exact = bodies.slice(0, 10).filter((body, i) => JSON.stringify(body) === sent[i]).length;
  t.ok(exact >= 2 && exact <= 3, `the newest large bodies read back exactly, from a string or a Buffer (${exact})`);
  t.same(bodies.slice(10 - exact, 10).map((body) => JSON.stringify(body)), sent.slice(10 - exact), 'the exact ones are the newest');
  for (const body of bodies.slice(0, 10 - exact)) {
    t.equal(body, '[20017 bytes not kept: the journal keeps its newest 64 KiB of request bodies]', 'older ones: a note with the size');
  }
  journal.clear();
  t.same(journal.all(), [], 'cleared');
});

t.test('an entry keeps at most 4 KiB of header values, each cut with a note; usual headers stay whole', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  await sandbox.app.inject({ method: 'GET', url: '/v1/accounts', headers: { 'x-usual': 'kept' } });
  await sandbox.app.inject({ method: 'GET', url: '/v1/accounts', headers: { 'x-first': 'a'.repeat(3_000), 'x-second': 'b'.repeat(3_000), 'x-third': 'c' } });
  const [usual, large] = json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/requests' })).data;
  t.equal(usual.requestHeaders['x-usual'], 'kept');
  t.equal(large.requestHeaders['x-first'], 'a'.repeat(3_000), 'the first value fits whole');
  t.match(large.requestHeaders['x-second'], /^b+\.\.\.\[truncated \d+ chars\]$/, 'the next is cut, with a note');
  const kept = Object.values(large.requestHeaders as Record<string, string>).reduce((sum, value) => sum + value.replace(/\.\.\.\[truncated \d+ chars\]$/, '').length, 0);
  t.equal(kept, 4 * 1024, 'exactly 4 KiB of values kept');
  t.equal(large.requestHeaders['x-third'], '...[truncated 1 chars]', 'a value past the budget keeps only its note');
});

t.test('journal size 0 disables recording', async (t) => {
  const sandbox = await buildTestApp({ config: { journalSize: 0 } });
  t.teardown(sandbox.close);
  await sandbox.app.inject({ method: 'GET', url: '/v1/accounts' });
  t.same(json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/requests' })).data, []);
});

t.test('large JSON bodies are noted, not stored whole', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const big = JSON.stringify({ padding: 'x'.repeat(300 * 1024) });
  await sandbox.app.inject({ method: 'POST', url: '/v1/auth/users', payload: big, headers: { 'content-type': 'application/json' } });
  const { data } = json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/requests' }));
  t.equal(data.length, 1);
  t.ok(String(data[0].requestBody).length < 20 * 1024, 'truncated');
});

t.test('a large text answer is journaled as its head and a note', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const served = await sandbox.app.inject({ method: 'GET', url: '/openapi.json' });
  t.equal(served.statusCode, 200);
  t.ok(served.body.length > 64 * 1024, `the document is large (${served.body.length} chars)`);
  const { data } = json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/requests?pathPrefix=/openapi.json' }));
  t.equal(data.length, 1);
  const body = String(data[0].responseBody);
  t.equal(body.slice(0, 16 * 1024), served.body.slice(0, 16 * 1024), 'the first 16 KiB are kept as they were sent');
  t.match(body.slice(16 * 1024), /^\.\.\.\[truncated \d+ chars\]$/, 'then a truncation note');
  t.ok(body.length < 17 * 1024, 'nothing more');
});

t.test('long path parameters get the error body, not a bare 414', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const response = await sandbox.request('GET', `/v1/accounts/acct_${'x'.repeat(300)}`);
  t.equal(response.statusCode, 400, 'over the 128-character id bound');
  t.notOk('errorCode' in json(response), 'no errorCode: validationErrors describe it (interface 7.1)');
  t.equal(json(response).validationErrors[0].fieldRef, 'accountId');
  const unknownRoute = await sandbox.app.inject({ method: 'GET', url: `/_emulator/webhooks/deliveries/${'y'.repeat(600)}` });
  t.equal(unknownRoute.statusCode, 404);
  t.equal(json(unknownRoute).errorCode, 'NOT_FOUND');
});

t.test('with ADMIN_TOKEN the dashboard page loads but its data needs the token', async (t) => {
  const sandbox = await buildTestApp({ config: { adminToken: 'admin-secret-token' } });
  t.teardown(sandbox.close);
  t.equal((await sandbox.app.inject({ method: 'GET', url: '/_emulator/ui' })).statusCode, 200);
  t.equal((await sandbox.app.inject({ method: 'GET', url: '/_emulator/ui/app.js' })).statusCode, 200);
  const data = await sandbox.app.inject({ method: 'GET', url: '/_emulator/requests' });
  t.equal(data.statusCode, 401);
  t.equal(json(data).errorCode, 'UNAUTHORIZED');
  const withToken = await sandbox.app.inject({ method: 'GET', url: '/_emulator/requests', headers: { 'x-admin-token': 'admin-secret-token' } });
  t.equal(withToken.statusCode, 200);
  t.equal((await sandbox.app.inject({ method: 'POST', url: '/_emulator/ui' })).statusCode, 401, 'only GET is open');
});

// docs/benchmarks.md#the-request-journal: a built JSON answer is encoded once, into the ring, and those bytes are what
// the socket writes; while the socket writes them the ring never gives them up (a newer answer is then not kept in the
// ring, and reads back from its own text), and once sent they leave in order as any other.
t.test('an answer encoded once is held in the ring until it is sent', async (t) => {
  const text = (i: number) => JSON.stringify({ i, text: 'é'.repeat(10_000) }); // 20,017 bytes of UTF-8
  const journal = new RequestJournal(10, 64 * 1024);
  const held = journal.encodeAnswer(text(0));
  t.ok(held, 'the answer is encoded into the ring');
  t.equal(held!.bytes.toString('utf8'), text(0), 'its bytes are the answer');
  const copy = Buffer.from(held!.bytes);
  journal.add(recordedGet(0, held as unknown as string));
  for (let i = 1; i < 8; i += 1) journal.add(recordedGet(i, text(i)));
  t.same(held!.bytes, copy, 'while being sent its bytes are never overwritten, however many answers follow');
  const bodies = journal.all().map((e) => e.responseBody);
  t.same(bodies[0], JSON.parse(text(0)), 'the held answer reads back whole');
  t.same(bodies.slice(1).map((body) => JSON.stringify(body)), [1, 2, 3, 4, 5, 6, 7].map(text), 'answers the ring could not take read back from their own text');

  held!.sent();
  for (let i = 8; i < 12; i += 1) journal.add(recordedGet(i, text(i)));
  const after = journal.all().map((e) => e.responseBody);
  t.equal(after.length, 10, 'every entry is listed');
  t.same(after.slice(-2).map((body) => JSON.stringify(body)), [text(10), text(11)], 'once sent, the ring takes newer answers again');
  t.not(held!.bytes.toString('utf8'), text(0), 'and the sent bytes gave up their place');

  const again = journal.encodeAnswer(text(20));
  journal.clear();
  t.equal(again!.bytes.toString('utf8'), text(20), 'a clear leaves the bytes still being sent where they are');
  journal.add(recordedGet(21, text(21)));
  t.equal(again!.bytes.toString('utf8'), text(20), 'the ring after a clear is a new one');
});

t.test('a built JSON answer goes out over a socket as the bytes the journal keeps, unchanged', async (t) => {
  // every list answer built (no read cache): the page is a string, which the journal encodes for the socket
  const sandbox = await buildTestApp({ config: { readCache: 'off' } });
  t.teardown(sandbox.close);
  for (const amount of ['1.00', '2.00', '3.00']) fund(sandbox.ctx, 'acct_acme_usd', amount);
  const address = await sandbox.app.listen({ port: 0, host: '127.0.0.1' });
  const expected = await sandbox.request('GET', '/v1/transactions'); // the same answer through inject
  t.ok(expected.body.length >= 2048, 'the page is large enough for the ring');
  const answer = await fetch(`${address}/v1/transactions`, { headers: sandbox.sign('GET', '/v1/transactions', '') });
  const body = await answer.text();
  t.equal(answer.status, 200);
  t.equal(body, expected.body, 'the bytes on the socket are the answer');
  t.equal(answer.headers.get('content-length'), String(Buffer.byteLength(body)), 'its length is its UTF-8 bytes');
  t.match(answer.headers.get('content-type'), /application\/json/);
  const entries = json(await sandbox.app.inject({ method: 'GET', url: '/_emulator/requests?pathPrefix=/v1/transactions' })).data as Array<{ responseBody: unknown; status: number }>;
  t.equal(entries.length, 2);
  t.same(entries[1]!.responseBody, JSON.parse(body), 'the journal reads back the answer sent');
});

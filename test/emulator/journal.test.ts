import t from 'tap';
import { buildTestApp, CREDENTIALS, json } from '../helper.js';
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

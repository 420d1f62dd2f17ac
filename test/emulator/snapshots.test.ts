import Database from 'better-sqlite3';
import t from 'tap';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, json, AS_JANE, type TestApp } from '../helper.js';
import { captureSnapshot } from '../../src/snapshots/snapshot.js';

// Snapshots (docs/control-plane.md#snapshots): save, list, restore, delete, export and upload the whole state.

const MULTI = { apiKey: 'pk_sandbox_multi', secret: 'sk_sandbox_multi_secret' };

function control(sandbox: TestApp, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown): Promise<LightMyRequestResponse> {
  return sandbox.app.inject({
    method,
    url,
    ...(body === undefined ? {} : { payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
}

function upload(sandbox: TestApp, name: string, bytes: Buffer | string, contentType = 'application/octet-stream'): Promise<LightMyRequestResponse> {
  return sandbox.app.inject({ method: 'PUT', url: `/_emulator/snapshots/${name}`, payload: bytes, headers: { 'content-type': contentType } });
}

/** The sandbox deposit answers `{ message: "Deposit txn_... accepted..." }` (interface 4.13). */
function depositId(response: LightMyRequestResponse): string {
  const id = /Deposit (txn_[a-z0-9]+)/.exec(json(response).message)?.[1];
  if (!id) throw new Error(`no transaction id in ${response.body}`);
  return id;
}

/** The answers a client would compare: every list and detail that the changes below touch. */
async function observe(sandbox: TestApp): Promise<string[]> {
  const reads = [
    sandbox.request('GET', '/v1/transactions?pageSize=200'),
    sandbox.request('GET', '/v1/accounts/acct_acme_usd'),
    sandbox.request('GET', '/v1/accounts/acct_jane_usd', undefined, AS_JANE),
    sandbox.request('GET', '/v1/users', undefined, MULTI),
    sandbox.request('GET', '/v1/transactions', undefined, MULTI),
    control(sandbox, 'GET', '/_emulator/clock'),
    control(sandbox, 'GET', '/_emulator/webhooks/endpoint?programId=prg_sandbox'),
    control(sandbox, 'GET', '/_emulator/webhooks/deliveries'),
  ];
  return (await Promise.all(reads)).map((response) => `${response.statusCode} ${response.body.replace(/"offsetMs":-?\d+/, '"offsetMs":_')}`);
}

/** Changes of every kind: money in flight, a new user, a token, the clock, the webhook endpoint. */
async function change(sandbox: TestApp): Promise<string> {
  const deposit = await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', {
    depositInstructionId: 'di_acme_usd_ach',
    amount: '250.00',
    reference: 'snapshot-test',
  });
  t.equal(deposit.statusCode, 202, deposit.body);
  const user = await sandbox.request('POST', '/v1/auth/users', { externalId: 'snap-user-1', type: 'PERSON', name: 'Snap Shot' }, MULTI);
  t.equal(user.statusCode, 201, user.body);
  await sandbox.request('GET', '/v1/enrollment', undefined, { ...MULTI, userId: json(user).id });
  t.equal((await control(sandbox, 'PUT', '/_emulator/webhooks/endpoint', { url: 'http://127.0.0.1:9/hook', programId: 'prg_sandbox' })).statusCode, 200);
  t.equal((await control(sandbox, 'POST', '/_emulator/clock', { advanceMs: 500 })).statusCode, 200);
  return depositId(deposit);
}

t.test('save, change everything, restore: every answer as before, and the same future', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);

  const saved = await control(sandbox, 'POST', '/_emulator/snapshots', { name: 'baseline' });
  t.equal(saved.statusCode, 201, saved.body);
  t.match(json(saved), { name: 'baseline', clock: '2026-03-01T12:00:00.000Z', clockMode: 'frozen', tables: Number, rows: Number });
  t.ok(json(saved).rows > 100, 'the default fixtures are in it');
  const before = await observe(sandbox);

  const firstDeposit = await change(sandbox);
  t.not((await observe(sandbox)).join('\n'), before.join('\n'), 'the changes show');

  const restored = await control(sandbox, 'POST', '/_emulator/snapshots/baseline/restore');
  t.equal(restored.statusCode, 200, restored.body);
  t.match(json(restored), { status: 'restored', snapshot: { name: 'baseline' }, durationMs: Number });
  t.same(await observe(sandbox), before, 'byte-identical answers after the restore');

  // the id sequence came back too: the same request makes the same transaction again
  const again = await change(sandbox);
  t.equal(again, firstDeposit, 'the same transaction id as the first time');
  t.equal((await control(sandbox, 'POST', '/_emulator/snapshots/baseline/restore')).statusCode, 200, 'a snapshot can be restored again');
  t.same(await observe(sandbox), before);
});

t.test('jobs in flight are part of the state', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const deposit = await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: '10.00', reference: 'in-flight' });
  t.equal(deposit.statusCode, 202, deposit.body);
  const id = depositId(deposit);
  t.equal((await control(sandbox, 'POST', '/_emulator/snapshots', { name: 'pending' })).statusCode, 201);
  await control(sandbox, 'POST', '/_emulator/clock', { advanceMs: 5000 });
  const settled = await sandbox.request('GET', `/v1/transactions/${id}`);
  t.equal(json(settled).status, 'COMPLETED', settled.body);
  await control(sandbox, 'POST', '/_emulator/snapshots/pending/restore');
  t.equal(json(await sandbox.request('GET', `/v1/transactions/${id}`)).status, 'PENDING', 'pending again');
  t.equal(json(await control(sandbox, 'GET', '/_emulator/clock')).now, '2026-03-01T12:00:00.000Z', 'the clock is back at the snapshot instant');
  await control(sandbox, 'POST', '/_emulator/clock', { advanceMs: 5000 });
  t.equal(json(await sandbox.request('GET', `/v1/transactions/${id}`)).status, 'COMPLETED', 'and its settlement job runs again');
});

t.test('a flowing clock is restored flowing, at the snapshot instant', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  await control(sandbox, 'POST', '/_emulator/clock', { realtime: true });
  const saved = json(await control(sandbox, 'POST', '/_emulator/snapshots', { name: 'flowing' }));
  t.equal(saved.clockMode, 'realtime');
  await control(sandbox, 'POST', '/_emulator/clock', { advanceMs: 86_400_000 });
  await control(sandbox, 'POST', '/_emulator/snapshots/flowing/restore');
  const clock = json(await control(sandbox, 'GET', '/_emulator/clock'));
  t.equal(clock.mode, 'realtime');
  const drift = Date.parse(clock.now) - Date.parse(saved.clock);
  t.ok(drift >= 0 && drift < 5000, `the clock reads the snapshot instant again (drift ${drift} ms)`);
});

t.test('list, read, replace and delete; names and unknown snapshots', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  t.same(json(await control(sandbox, 'GET', '/_emulator/snapshots')), { data: [] }, 'none at first');
  t.equal((await control(sandbox, 'POST', '/_emulator/snapshots', { name: 'b-2' })).statusCode, 201);
  t.equal((await control(sandbox, 'POST', '/_emulator/snapshots', { name: 'a.1' })).statusCode, 201);
  await control(sandbox, 'POST', '/_emulator/clock', { advanceMs: 1000 });
  const replaced = await control(sandbox, 'POST', '/_emulator/snapshots', { name: 'b-2' });
  t.equal(replaced.statusCode, 200, 'the same name again replaces it');
  t.equal(json(replaced).clock, '2026-03-01T12:00:01.000Z');
  t.same(
    json(await control(sandbox, 'GET', '/_emulator/snapshots')).data.map((item: { name: string }) => item.name),
    ['a.1', 'b-2'],
    'listed by name',
  );
  t.equal(json(await control(sandbox, 'GET', '/_emulator/snapshots/a.1')).clock, '2026-03-01T12:00:00.000Z');

  t.equal((await control(sandbox, 'DELETE', '/_emulator/snapshots/a.1')).statusCode, 204);
  for (const [method, url] of [
    ['GET', '/_emulator/snapshots/a.1'],
    ['DELETE', '/_emulator/snapshots/a.1'],
    ['POST', '/_emulator/snapshots/a.1/restore'],
    ['GET', '/_emulator/snapshots/a.1/export'],
  ] as const) {
    const response = await control(sandbox, method, url);
    t.equal(response.statusCode, 404, `${method} ${url}`);
    t.match(json(response).message, /No snapshot named "a\.1"; saved: b-2/);
  }

  for (const body of [{}, { name: '' }, { name: '../etc' }, { name: 'x'.repeat(65) }, { name: 7 }, { name: 'ok', extra: true }]) {
    const response = await control(sandbox, 'POST', '/_emulator/snapshots', body);
    t.equal(response.statusCode, 400, JSON.stringify(body));
    t.ok(json(response).validationErrors?.length, 'names the field');
  }
  t.equal((await control(sandbox, 'GET', '/_emulator/snapshots/has%20space')).statusCode, 400, 'a bad name in the path');
  t.equal(json(await control(sandbox, 'GET', '/_emulator/snapshots')).data.length, 1, 'nothing stored by the refusals');
});

t.test('export and upload: a SQLite file that another sandbox restores to the same answers', async (t) => {
  const source = await buildTestApp();
  t.teardown(source.close);
  await change(source);
  await control(source, 'POST', '/_emulator/snapshots', { name: 'moved' });
  const expected = await observe(source);

  const exported = await control(source, 'GET', '/_emulator/snapshots/moved/export');
  t.equal(exported.statusCode, 200);
  t.equal(exported.headers['content-type'], 'application/vnd.sqlite3');
  t.match(exported.headers['content-disposition'], /attachment; filename="moved\.sandbox-snapshot"/);
  const file = exported.rawPayload;
  t.equal(file.subarray(0, 16).toString('latin1'), 'SQLite format 3\0', 'a SQLite database file');
  const opened = new Database(file, { readonly: true });
  t.equal((opened.prepare("SELECT value FROM snapshot_info WHERE key = 'format'").get() as { value: string }).value, 'service-sandbox-snapshot/1');
  t.ok((opened.prepare('SELECT COUNT(*) AS n FROM transactions').get() as { n: number }).n > 30, 'the rows are readable with any SQLite tool');
  opened.close();

  const target = await buildTestApp({ start: '2026-05-01T00:00:00.000Z' });
  t.teardown(target.close);
  const uploaded = await upload(target, 'imported', file);
  t.equal(uploaded.statusCode, 201, uploaded.body);
  t.match(json(uploaded), { name: 'imported', clock: '2026-03-01T12:00:00.500Z' });
  t.equal((await upload(target, 'imported', file, 'application/vnd.sqlite3')).statusCode, 200, 'uploading again replaces it');
  t.equal((await control(target, 'POST', '/_emulator/snapshots/imported/restore')).statusCode, 200);
  t.same(await observe(target), expected, 'the other sandbox answers byte for byte as the source did');
});

t.test('bad uploads are refused and store nothing', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  await control(sandbox, 'POST', '/_emulator/snapshots', { name: 'good' });
  const good = (await control(sandbox, 'GET', '/_emulator/snapshots/good/export')).rawPayload;

  const edited = (edit: (db: Database.Database) => void): Buffer => {
    const db = new Database(good);
    edit(db);
    const bytes = db.serialize();
    db.close();
    return bytes;
  };
  const plainSqlite = (() => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE x (a)');
    const bytes = db.serialize();
    db.close();
    return bytes;
  })();

  const cases: Array<[string, Buffer | string, RegExp]> = [
    ['an empty body', Buffer.alloc(0), /the body is empty/],
    ['text that is not a database', Buffer.from('hello, this is not a snapshot at all'.repeat(40)), /not a (readable )?SQLite database file/],
    ['a truncated file', good.subarray(0, 2000), /not a (readable )?SQLite database file|missing/],
    ['a SQLite file that is no snapshot', plainSqlite, /no snapshot_info table/],
    ['another format marker', edited((db) => db.exec("UPDATE snapshot_info SET value = 'other/9' WHERE key = 'format'")), /format is "other\/9"/],
    ['another schema version', edited((db) => db.exec("UPDATE snapshot_info SET value = '3' WHERE key = 'schema_version'")), /snapshot_info says schema version 3, but its tables are those of version \d+/],
    ['a table missing', edited((db) => db.exec('DROP TABLE beneficiaries')), /table beneficiaries is missing/],
    ['a column missing', edited((db) => db.exec('ALTER TABLE users DROP COLUMN name')), /table users has columns/],
    ['no clock', edited((db) => db.exec("DELETE FROM snapshot_info WHERE key = 'clock_ms'")), /clock is missing/],
  ];
  for (const [label, bytes, message] of cases) {
    const response = await upload(sandbox, 'bad', bytes);
    t.equal(response.statusCode, 400, label);
    const body = json(response);
    t.match(body.message, message, label);
    t.match(body.validationErrors, [{ type: 'InvalidValue', fieldRef: 'body' }], label);
  }
  const asJson = await sandbox.app.inject({ method: 'PUT', url: '/_emulator/snapshots/bad', payload: '{"a":1}', headers: { 'content-type': 'application/json' } });
  t.equal(asJson.statusCode, 415, 'a JSON body is not a file');
  t.match(json(asJson).message, /application\/octet-stream/);
  t.same(
    json(await control(sandbox, 'GET', '/_emulator/snapshots')).data.map((item: { name: string }) => item.name),
    ['good'],
    'nothing stored by any refusal',
  );
  const octet = await sandbox.app.inject({ method: 'POST', url: '/_emulator/reset', payload: good, headers: { 'content-type': 'application/octet-stream' } });
  t.equal(octet.statusCode, 415, 'other routes still refuse binary bodies');
});

t.test('every table ends exactly as saved, whatever happened in between (rows compared one by one)', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  await change(sandbox);
  const saved = json(await control(sandbox, 'POST', '/_emulator/snapshots', { name: 'busy' }));
  const tablesOf = () => JSON.stringify(captureSnapshot(sandbox.ctx, 'probe').tables);
  const expected = tablesOf();

  // a reset rewrites every table (rows come back under other rowids), then more changes of every kind
  await control(sandbox, 'POST', '/_emulator/reset');
  await control(sandbox, 'POST', '/_emulator/clock', { advanceMs: 3_600_000 });
  await change(sandbox);
  await sandbox.request('POST', '/v1/sandbox/accounts/acct_jane_usd/deposits', { depositInstructionId: 'di_jane_usd_ach', amount: '3.00', reference: 'jane' }, AS_JANE);
  t.not(tablesOf(), expected);

  const restored = await control(sandbox, 'POST', '/_emulator/snapshots/busy/restore');
  t.equal(restored.statusCode, 200, restored.body);
  t.equal(tablesOf(), expected, 'every row of every table, the list counters included');
  t.equal(json(await control(sandbox, 'GET', '/_emulator/clock')).now, saved.clock);
  const list = json(await sandbox.request('GET', '/v1/transactions?pageSize=1', undefined, MULTI));
  const counted = (sandbox.ctx.db.prepare("SELECT COUNT(*) AS n FROM transactions WHERE programme_id = 'prg_sandbox'").get() as { n: number }).n;
  t.equal(list.totalRecords, counted, 'the programme counters agree with the rows');
});

// docs/control-plane.md#snapshots: after a save or a restore, restoring the same snapshot compares only the tables
// written since (noted by TEMP triggers); everything else still ends exactly as saved.
t.test('restoring the snapshot the state last equalled: only the written tables are compared, and every table ends as saved', async (t) => {
  const dir = (await import('node:fs')).mkdtempSync((await import('node:path')).join((await import('node:os')).tmpdir(), 'snapshot-tracking-'));
  const file = `${dir}/sandbox.db`;
  const sandbox = await buildTestApp({ db: file });
  t.teardown(sandbox.close);
  const tablesOf = () => JSON.stringify(captureSnapshot(sandbox.ctx, 'probe').tables);
  t.equal((await control(sandbox, 'POST', '/_emulator/snapshots', { name: 'base' })).statusCode, 201);
  const base = tablesOf();
  t.equal((await control(sandbox, 'POST', '/_emulator/snapshots', { name: 'other' })).statusCode, 201);

  for (let round = 0; round < 3; round += 1) {
    await change(sandbox);
    t.not(tablesOf(), base, `round ${round}: the state moved`);
    t.equal((await control(sandbox, 'POST', '/_emulator/snapshots/base/restore')).statusCode, 200);
    t.equal(tablesOf(), base, `round ${round}: every table as saved`);
  }

  // A failed request writes nothing and notes nothing that matters; the next restore is still exact.
  const refused = await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: '-1' });
  t.equal(refused.statusCode, 400);
  await change(sandbox);
  t.equal((await control(sandbox, 'POST', '/_emulator/snapshots/base/restore')).statusCode, 200);
  t.equal(tablesOf(), base, 'after a refused request and more changes');

  // Another connection's commit is not noted by this one's triggers: the restore then compares every table.
  const second = new Database(file);
  // (api_keys: a table no request of this test writes, so only the fallback can undo the change)
  second.prepare("UPDATE api_keys SET secret = 'changed by another process' WHERE api_key = 'pk_sandbox_multi'").run();
  second.close();
  t.not(tablesOf(), base, 'the other connection changed a table');
  t.equal((await control(sandbox, 'POST', '/_emulator/snapshots/base/restore')).statusCode, 200);
  t.equal(tablesOf(), base, 'the other connection\'s change is undone too');

  // Restoring another snapshot, then this one again: full comparisons, exact both times.
  await change(sandbox);
  t.equal((await control(sandbox, 'POST', '/_emulator/snapshots/other/restore')).statusCode, 200);
  await change(sandbox);
  t.equal((await control(sandbox, 'POST', '/_emulator/snapshots/base/restore')).statusCode, 200);
  t.equal(tablesOf(), base, 'after a restore of another snapshot in between');
  (await import('node:fs')).rmSync(dir, { recursive: true, force: true });
});

import t from 'tap';
import Database from 'better-sqlite3';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ReadCache, changeMarker, readCacheOf } from '../../src/db/read-cache.js';
import { listTransactionsPage } from '../../src/domains/transactions/transactions-list.service.js';
import { AS_ACME_MULTI, AS_JANE, AS_OTHER, buildTestApp, json } from '../helper.js';
import { expectStatus, getJson } from '../helpers/money-in.js';

// db/read-cache.ts: answers kept while the change marker (total_changes() + PRAGMA data_version for commits of
// other connections) is unchanged, and what the two users of it (the transactions list, API keys) answer through HTTP.

function tempDir(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'sandbox-read-cache-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function scratchDb(file = ':memory:'): Database.Database {
  const db = new Database(file);
  if (file !== ':memory:') db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  db.exec('CREATE TABLE IF NOT EXISTS scratch (id INTEGER PRIMARY KEY, v TEXT); CREATE TABLE IF NOT EXISTS other (v TEXT)');
  return db;
}

/** A cache of strings sized by their length, and a build that counts its calls. */
function counting(db: Database.Database, maxEntries = 100, maxBytes = 1_000) {
  const cache = new ReadCache<any>(db, { maxEntries, maxBytes }, (value) => (typeof value === 'string' ? value.length : 1));
  const builds: string[] = [];
  const get = (key: string, value: any = { key }) => cache.get(key, () => (builds.push(key), value));
  return { cache, builds, get };
}

t.test('ReadCache: a hit is the very same value, built once; keys are separate', async (t) => {
  const db = scratchDb();
  t.teardown(() => db.close());
  const { cache, builds, get } = counting(db);
  const first = get('a');
  t.equal(get('a'), first, 'the same object');
  t.equal(get('a', { other: true }), first, 'the build of a hit is not called');
  t.same(builds, ['a']);
  t.not(get('b'), first, 'another key has its own value');
  t.same(builds, ['a', 'b']);
  t.equal(cache.size, 2);

  const one = readCacheOf<string>(db, 'x', { maxEntries: 1, maxBytes: 1 }, () => 1);
  t.equal(readCacheOf(db, 'x', { maxEntries: 9, maxBytes: 9 }, () => 1), one, 'one named cache per handle');
  t.not(readCacheOf(db, 'y', { maxEntries: 1, maxBytes: 1 }, () => 1), one, 'another name, another cache');
  const db2 = scratchDb();
  t.teardown(() => db2.close());
  t.not(readCacheOf(db2, 'x', { maxEntries: 1, maxBytes: 1 }, () => 1), one, 'another handle, another cache');
});

t.test('ReadCache: any row written on the connection makes the next get rebuild', async (t) => {
  const db = scratchDb();
  t.teardown(() => db.close());
  const { builds, get } = counting(db);
  const marker = changeMarker(db);
  db.prepare('SELECT * FROM scratch').all();
  t.equal(changeMarker(db), marker, 'reads do not move the marker');
  db.prepare('UPDATE scratch SET v = ? WHERE id = -1').run('x');
  t.equal(changeMarker(db), marker, 'a write of no row does not either');

  const writes: Array<[string, () => unknown]> = [
    ['INSERT', () => db.prepare("INSERT INTO scratch (id, v) VALUES (1, 'a')").run()],
    ['UPDATE', () => db.prepare("UPDATE scratch SET v = 'b' WHERE id = 1").run()],
    ['DELETE', () => db.prepare('DELETE FROM scratch WHERE id = 1').run()],
    ['INSERT in an unrelated table', () => db.prepare("INSERT INTO other VALUES ('z')").run()],
    ['INSERT in a transaction', () => db.transaction(() => db.prepare("INSERT INTO other VALUES ('y')").run())()],
  ];
  let previous = get('k');
  for (const [name, write] of writes) {
    t.equal(get('k'), previous, `before ${name}: a hit`);
    const count = builds.length;
    write();
    const next = get('k', { after: name });
    t.not(next, previous, `after ${name}: rebuilt`);
    t.equal(builds.length, count + 1);
    previous = next;
  }
});

t.test('ReadCache: maxEntries evicts the least recently used', async (t) => {
  const db = scratchDb();
  t.teardown(() => db.close());
  const { cache, builds, get } = counting(db, 2);
  get('a');
  get('b');
  get('a'); // touched: b is now the least recently used
  get('c');
  t.equal(cache.size, 2);
  t.same(builds, ['a', 'b', 'c']);
  get('a');
  get('c');
  t.same(builds, ['a', 'b', 'c'], 'a (touched) and c kept');
  get('b');
  t.same(builds, ['a', 'b', 'c', 'b'], 'b was evicted and is rebuilt');
  t.equal(cache.size, 2);
});

t.test('ReadCache: maxBytes evicts; a value larger than maxBytes is returned, not stored', async (t) => {
  const db = scratchDb();
  t.teardown(() => db.close());
  const { cache, builds, get } = counting(db, 100, 10);
  get('a', 'aaaa');
  get('b', 'bbbb');
  t.equal(cache.size, 2);
  get('c', 'cccc'); // 12 bytes > 10: a goes
  t.equal(cache.size, 2);
  t.equal(get('b', 'B'), 'bbbb');
  t.equal(get('c', 'C'), 'cccc');
  t.equal(get('a', 'A'), 'A', 'a was evicted and rebuilt');
  t.same(builds, ['a', 'b', 'c', 'a']);

  t.equal(cache.size, 3, 'b, c and the smaller a: 9 bytes');
  const big = 'x'.repeat(11);
  t.equal(get('big', big), big, 'returned');
  t.equal(get('big', 'y'.repeat(11)), 'y'.repeat(11), 'but not stored: built again');
  t.same(builds.filter((key) => key === 'big'), ['big', 'big']);
  t.equal(cache.size, 3, 'and nothing was evicted for it');
  t.same([get('a', '-'), get('b', '-'), get('c', '-')], ['A', 'bbbb', 'cccc'], 'all still hits');
  t.equal(builds.length, 6);
});

t.test('ReadCache: a build that throws stores nothing and the error propagates', async (t) => {
  const db = scratchDb();
  t.teardown(() => db.close());
  const { cache, builds, get } = counting(db);
  const failure = new Error('build failed');
  t.throws(() => cache.get('k', () => { throw failure; }), failure);
  t.equal(cache.size, 0);
  const value = get('k');
  t.same(builds, ['k'], 'the next get builds');
  t.equal(get('k'), value);
});

/** The end of the current run of JavaScript: a data_version reading is kept until then. */
const nextRun = () => new Promise<void>((resolve) => setImmediate(resolve));

t.test('changeMarker: a commit by another connection is seen from the next run of JavaScript on', async (t) => {
  const file = path.join(tempDir(t), 'scratch.db');
  const db = scratchDb(file);
  const other = scratchDb(file);
  t.teardown(() => (other.close(), db.close()));
  const { builds, get } = counting(db);

  const before = changeMarker(db);
  const value = get('k');
  other.prepare("INSERT INTO scratch (v) VALUES ('from the other connection')").run();
  t.equal(changeMarker(db), before, 'within one run the reading is kept (a request\'s key and page share it)');
  t.equal(get('k'), value, 'so the entry is served within that run');
  t.same(builds, ['k']);

  await nextRun();
  const after = changeMarker(db);
  t.not(after, before, 'in the next run the commit moves the marker');
  t.equal(after.split(':')[0], before.split(':')[0], 'through data_version: this connection wrote nothing');
  t.not(get('k'), value, 'and the entry is rebuilt');
  t.same(builds, ['k', 'k']);
  await nextRun();
  t.equal(changeMarker(db), after, 'a later run without a commit keeps the marker');
  t.equal(db.prepare('SELECT v FROM scratch').pluck().get(), 'from the other connection');
  t.match(after, /^\d+:\d+$/, 'a file database: total_changes and data_version');

  // this connection's own commits move total_changes() at once, within the run
  const own = changeMarker(db);
  db.prepare("INSERT INTO scratch (v) VALUES ('own')").run();
  t.not(changeMarker(db), own, 'an own write is seen at once');

  const memory = scratchDb();
  t.teardown(() => memory.close());
  const m0 = changeMarker(memory);
  t.match(m0, /^\d+$/, 'an in-memory database has no other connection: total_changes alone');
  memory.prepare("INSERT INTO scratch (v) VALUES ('x')").run();
  t.not(changeMarker(memory), m0, 'and its own writes move it');
});

t.test('changeMarker: other connections\' commits in WAL and rollback-journal modes, through links', async (t) => {
  const dir = tempDir(t);
  // WAL (the emulator's mode), a checkpoint and WAL restart included
  const walFile = path.join(dir, 'wal.db');
  const db = scratchDb(walFile);
  const other = scratchDb(walFile);
  t.teardown(() => (other.close(), db.close()));
  let previous = changeMarker(db);
  for (const [label, write] of [
    ['an insert', () => other.prepare("INSERT INTO other (v) VALUES ('a')").run()],
    ['an update', () => other.prepare("UPDATE other SET v = 'b'").run()],
    ['a commit after a full checkpoint (the WAL restarts)', () => (other.pragma('wal_checkpoint(TRUNCATE)'), other.prepare("INSERT INTO other (v) VALUES ('c')").run())],
  ] as const) {
    write();
    await nextRun();
    const next = changeMarker(db);
    t.not(next, previous, `${label} by another connection moves the marker`);
    previous = next;
  }
  db.prepare('SELECT COUNT(*) FROM other').get();
  await nextRun();
  t.equal(changeMarker(db), previous, 'reads do not move it');

  // a rollback-journal file
  const plainFile = path.join(dir, 'plain.db');
  const plain = new Database(plainFile);
  plain.exec('CREATE TABLE other (v TEXT)');
  const plainOther = new Database(plainFile);
  t.teardown(() => (plainOther.close(), plain.close()));
  const before = changeMarker(plain);
  await nextRun();
  t.equal(changeMarker(plain), before, 'unchanged without commits');
  plainOther.prepare("INSERT INTO other (v) VALUES ('x')").run();
  await nextRun();
  t.not(changeMarker(plain), before, 'a commit by another connection moves it');

  // a handle opened through a symlink sees commits made through the real path
  mkdirSync(path.join(dir, 'real'));
  const realFile = path.join(dir, 'real', 'x.db');
  scratchDb(realFile).close();
  const linkFile = path.join(dir, 'x.db');
  symlinkSync(realFile, linkFile);
  const linked = scratchDb(linkFile);
  const real = scratchDb(realFile);
  t.teardown(() => (real.close(), linked.close()));
  const linkedBefore = changeMarker(linked);
  real.prepare("INSERT INTO other (v) VALUES ('through the real path')").run();
  await nextRun();
  t.not(changeMarker(linked), linkedBefore, 'the commit is seen');
});

t.test('HTTP: repeated list answers are identical; API writes and reset are seen at once', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const first = await sandbox.request('GET', '/v1/transactions');
  // The service's own cache (an existing named cache is returned as is: these limits are not applied).
  const pages = readCacheOf<Buffer>(sandbox.ctx.db, 'transactions-list', { maxEntries: 1, maxBytes: 1 }, (page) => page.length);
  let built = 0; // count the service's builds through its cache instance
  const original = pages.get.bind(pages);
  pages.get = (key, build) => original(key, () => (built += 1, build()));
  const again = await sandbox.request('GET', '/v1/transactions');
  t.equal(built, 0, 'the second request is answered from the cache');
  t.equal(first.statusCode, 200);
  t.match(first.headers['content-type'], /^application\/json/);
  t.equal(again.body, first.body, 'byte-identical');
  t.equal(pages.size, 1, 'one entry for the one query');
  const fixtures = json(first);
  t.equal(fixtures.totalRecords, 30);

  const direct = { pageIndex: 0, pageSize: 25, sortBy: 'CREATED_AT', sortDirection: 'DESC' } as const;
  const acme = { programmeId: 'prg_sandbox', userId: 'usr_acme' };
  const buffer = listTransactionsPage(sandbox.ctx, acme, direct);
  t.equal(listTransactionsPage(sandbox.ctx, acme, direct), buffer, 'unchanged database: the very same Buffer');
  t.equal(built, 0, 'the route\'s parsed query has this key: the HTTP answer\'s entry');
  t.equal(buffer.toString(), first.body);

  const accepted = expectStatus(
    await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: '40.00' }),
    202,
  );
  const id = /(txn_[a-z0-9]+)/.exec(accepted.message)![1]!;
  t.not(listTransactionsPage(sandbox.ctx, acme, direct), buffer, 'a write: a new Buffer');
  const deposited = await getJson(sandbox, '/v1/transactions');
  t.equal(deposited.totalRecords, 31, 'the deposit is counted');
  t.match(deposited.data[0], { id, status: 'PENDING', debitAmount: '40.00' });
  t.same(await getJson(sandbox, '/v1/transactions'), deposited);
  t.equal(built, 1, 'one build after the write (by the direct call, the route\'s key), then hits');

  expectStatus(await sandbox.app.inject({ method: 'POST', url: `/_emulator/transactions/${id}/status`, payload: { status: 'COMPLETED' } }), 200);
  const forced = await getJson(sandbox, '/v1/transactions');
  t.match(forced.data[0], { id, status: 'COMPLETED' }, 'the forced status, not the cached PENDING');
  t.equal(forced.totalRecords, 31);

  expectStatus(await sandbox.app.inject({ method: 'POST', url: '/_emulator/reset' }), 200);
  const reset = await sandbox.request('GET', '/v1/transactions');
  t.equal(reset.body, first.body, 'after reset: the fixtures\' answer again');
});

t.test('HTTP: callers and queries never share an entry', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const ids = (page: any) => page.data.map((item: any) => item.id);
  for (let round = 0; round < 2; round += 1) {
    const label = round === 0 ? 'built' : 'from the cache';
    const acme = await getJson(sandbox, '/v1/transactions', AS_ACME_MULTI);
    const jane = await getJson(sandbox, '/v1/transactions', AS_JANE);
    const other = await getJson(sandbox, '/v1/transactions', AS_OTHER);
    const single = await getJson(sandbox, '/v1/transactions');
    const programme = await getJson(sandbox, '/v1/transactions', { apiKey: 'pk_sandbox_multi', secret: 'sk_sandbox_multi_secret' });
    const otherProgramme = await getJson(sandbox, '/v1/transactions', { ...AS_OTHER, userId: undefined });
    t.equal(programme.totalRecords, 38, `the programme: both users (${label})`);
    t.ok(ids(programme).some((id: string) => id.startsWith('txn_hist_jane')) && ids(programme).some((id: string) => id.startsWith('txn_hist_acme')), `both users' rows (${label})`);
    t.same(otherProgramme, { data: [], pageIndex: 0, pageSize: 25, totalRecords: 0 }, `another programme at programme scope (${label})`);
    t.equal(acme.totalRecords, 30, `acme (${label})`);
    t.equal(jane.totalRecords, 8, `jane (${label})`);
    t.ok(ids(jane).every((id: string) => id.startsWith('txn_hist_jane')), `only jane's rows for jane (${label})`);
    t.notOk(ids(acme).some((id: string) => id.startsWith('txn_hist_jane')), `none of jane's for acme (${label})`);
    t.same(other, { data: [], pageIndex: 0, pageSize: 25, totalRecords: 0 }, `another programme's user (${label})`);
    t.same(single, acme, `the SINGLE_USER key of usr_acme: the same user, the same answer (${label})`);
    t.not(JSON.stringify(programme), JSON.stringify(acme), `the programme's page is not a user's (${label})`);

    const small = await getJson(sandbox, '/v1/transactions?pageSize=5');
    const ascending = await getJson(sandbox, '/v1/transactions?sortDirection=ASC');
    const smallAscending = await getJson(sandbox, '/v1/transactions?pageSize=5&sortDirection=ASC');
    t.equal(small.pageSize, 5);
    t.same(ids(small), ids(acme).slice(0, 5), `pageSize=5 (${label})`);
    const all = ids(await getJson(sandbox, '/v1/transactions?pageSize=30'));
    t.equal(all.length, 30);
    t.same(ids(ascending), [...all].reverse().slice(0, 25), `sortDirection=ASC (${label})`);
    t.same(ids(smallAscending), [...all].reverse().slice(0, 5), `pageSize=5&sortDirection=ASC (${label})`);
  }
});

t.test('programme-scope pages: keyed apart from every user\'s, dropped by any write', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const query = { pageIndex: 0, pageSize: 25, sortBy: 'CREATED_AT', sortDirection: 'DESC' } as const;
  const programme = { programmeId: 'prg_sandbox', userId: null };
  const acme = { programmeId: 'prg_sandbox', userId: 'usr_acme' };
  const programmePage = listTransactionsPage(sandbox.ctx, programme, query);
  const acmePage = listTransactionsPage(sandbox.ctx, acme, query);
  t.equal(JSON.parse(programmePage.toString()).totalRecords, 38);
  t.equal(JSON.parse(acmePage.toString()).totalRecords, 30);
  t.equal(listTransactionsPage(sandbox.ctx, programme, query), programmePage, 'the programme page from the cache');
  t.equal(listTransactionsPage(sandbox.ctx, acme, query), acmePage, 'acme\'s page from the cache, not the programme\'s');
  t.equal(listTransactionsPage(sandbox.ctx, { programmeId: 'prg_other', userId: null }, query).toString(), '{"data":[],"pageIndex":0,"pageSize":25,"totalRecords":0}', 'another programme: its own entry');
  // Over HTTP, in both orders: the programme first, then a user, then the programme again.
  const asProgramme = { apiKey: 'pk_sandbox_multi', secret: 'sk_sandbox_multi_secret' };
  t.equal((await getJson(sandbox, '/v1/transactions', asProgramme)).totalRecords, 38);
  t.equal((await getJson(sandbox, '/v1/transactions', AS_JANE)).totalRecords, 8, 'jane after the programme: jane\'s page');
  t.equal((await getJson(sandbox, '/v1/transactions', asProgramme)).totalRecords, 38, 'the programme after jane: the programme\'s page');

  // A write by one user invalidates the programme's page as it does the user's.
  expectStatus(await sandbox.request('POST', '/v1/sandbox/accounts/acct_jane_usd/deposits', { depositInstructionId: 'di_jane_usd_ach', amount: '9.00' }, AS_JANE), 202);
  t.not(listTransactionsPage(sandbox.ctx, programme, query), programmePage, 'a write: a new programme page');
  const after = await getJson(sandbox, '/v1/transactions', asProgramme);
  t.equal(after.totalRecords, 39, 'jane\'s deposit in the programme\'s total at once');
  t.match(after.data[0], { status: 'PENDING', debitAmount: '9.00' });
  t.equal((await getJson(sandbox, '/v1/transactions')).totalRecords, 30, 'acme unchanged');
});

t.test('HTTP on a database file: another connection\'s commits are seen by the very next request', async (t) => {
  const file = path.join(tempDir(t), 'state.db');
  const sandbox = await buildTestApp({ db: file });
  const other = new Database(file);
  other.pragma('busy_timeout = 5000');
  t.teardown(async () => {
    other.close();
    await sandbox.close();
  });

  const first = await getJson(sandbox, '/v1/transactions');
  t.equal(await getJson(sandbox, '/v1/transactions').then(JSON.stringify), JSON.stringify(first), 'cached');
  const newest = first.data[0];
  t.match(newest, { id: 'txn_hist_acme_usd_019', debitReference: 'PO-88630' });
  const stored = other.prepare('SELECT rest_json FROM transactions WHERE id = ?').pluck().get(newest.id) as string;
  other.prepare('UPDATE transactions SET rest_json = ? WHERE id = ?').run(JSON.stringify({ ...JSON.parse(stored), debitReference: 'PO-EDITED' }), newest.id);
  const edited = await getJson(sandbox, '/v1/transactions');
  t.match(edited.data[0], { id: newest.id, debitReference: 'PO-EDITED' }, 'the stored JSON written by the other connection');
  t.same(edited.data.slice(1), first.data.slice(1));

  t.equal((await sandbox.request('GET', '/v1/transactions', undefined, AS_JANE)).statusCode, 200, 'the MULTI_USER key works (and is cached)');
  const key = other.prepare('SELECT * FROM api_keys WHERE api_key = ?').get('pk_sandbox_multi') as Record<string, unknown>;
  other.prepare('DELETE FROM api_keys WHERE api_key = ?').run('pk_sandbox_multi');
  const unknown = await sandbox.request('GET', '/v1/transactions', undefined, AS_JANE);
  t.equal(unknown.statusCode, 401, 'the deleted key is refused on the very next request');
  t.match(unknown.body, /Unknown API key/);
  t.equal((await sandbox.request('GET', '/v1/transactions')).statusCode, 200, 'the SINGLE_USER key still works');

  other.prepare('INSERT INTO api_keys (api_key, programme_id, secret, integration_type, user_id) VALUES (@api_key, @programme_id, @secret, @integration_type, @user_id)').run(key);
  const restored = await sandbox.request('GET', '/v1/transactions', undefined, AS_JANE);
  t.equal(restored.statusCode, 200, 'the key inserted again is accepted on the very next request');
  t.equal(json(restored).totalRecords, 8);
});

t.test('HTTP with --read-cache off: same answers, nothing kept', async (t) => {
  const sandbox = await buildTestApp({ config: { readCache: 'off' } });
  t.teardown(sandbox.close);
  const cached = await buildTestApp();
  t.teardown(cached.close);
  const first = await sandbox.request('GET', '/v1/transactions?pageSize=5');
  t.equal(first.statusCode, 200);
  t.equal(first.body, (await cached.request('GET', '/v1/transactions?pageSize=5')).body, 'the same answer as with the cache');
  t.equal((await sandbox.request('GET', '/v1/transactions?pageSize=5')).body, first.body);
  const pages = readCacheOf<Buffer>(sandbox.ctx.db, 'transactions-list', { maxEntries: 1, maxBytes: 1 }, (page) => page.length);
  t.equal(pages.size, 0, 'no page was stored');
  t.equal((await sandbox.request('GET', '/v1/accounts')).statusCode, 200, 'keys are read from the database each time');
  const unknown = await sandbox.request('GET', '/v1/accounts', undefined, { apiKey: 'pk_nope', secret: 'x' });
  t.equal(unknown.statusCode, 401);
});

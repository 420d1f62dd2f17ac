import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, json, type TestApp } from '../helper.js';
import { DEFAULT_FIXTURES } from '../../src/config.js';
import type { Db } from '../../src/db/db.js';
import { BULK_RESTORE_ROWS, CHUNK_ROWS, readTables, readTablesSteps, WrittenMeanwhileError } from '../../src/db/snapshot-tables.js';
import { withoutTriggers } from '../../src/db/triggers.js';
import { createSessionRegistry } from '../../src/sessions/sessions.registry.js';
import { openSandbox } from '../../src/sandbox.js';
import { getSnapshot, heldInTurns } from '../../src/emulator/snapshots.service.js';
import { captureSnapshotSteps, restoreSnapshotSteps } from '../../src/snapshots/snapshot.js';
import { runNow } from '../../src/lib/turns.js';
import { clockMoveUnderWay, holdSandbox } from '../../src/scheduler/scheduler.js';

// Big states (docs/control-plane.md#big-states): past BULK_RESTORE_ROWS a restore is written without the schema's
// triggers and, for a table taking many writes, without its indexes; the first reset empties the tables the same way;
// a big snapshot's sessions note what they write. Whatever the path, every table must end exactly as saved, and the
// schema exactly as it was.

const HISTORY = 3_000; // deposits on top of the default fixtures: about 10,000 rows in all

function bigFixtures(dir: string): string {
  const fixtures = JSON.parse(readFileSync(DEFAULT_FIXTURES, 'utf8'));
  const programme = fixtures.programmes[0];
  for (let i = 0; i < HISTORY; i += 1) {
    const day = String(1 + (i % 28)).padStart(2, '0');
    programme.history.push({
      id: `txn_bulk_${i}`,
      accountId: 'acct_acme_usd',
      type: 'DEPOSIT',
      createdAt: `2026-02-${day}T10:00:00.000Z`,
      completedAt: `2026-02-${day}T10:05:00.000Z`,
      amount: `${1 + (i % 50)}.00`,
      rail: 'US.USD.ACH',
      payer: { displayName: `Payer ${i}` },
    });
  }
  const file = path.join(dir, 'big-fixtures.json');
  writeFileSync(file, JSON.stringify(fixtures));
  return file;
}

const rowCount = (db: Db): number => readTables(db).reduce((sum, table) => sum + table.rows.length, 0);
const schemaOf = (db: Db): unknown[] => db.prepare("SELECT type, name, tbl_name, sql FROM main.sqlite_master ORDER BY type, name").all();
/**
 * A session's tables against the root's: without `programmes` (a session sends where its creator said, whatever the
 * snapshot's webhook URL) and `meta` (a session records its own clock), and `sqlite_sequence` by name (its rows come in
 * the order the tables were first written).
 */
function comparable(tables: ReturnType<typeof readTables>): unknown[] {
  return tables
    .filter((table) => table.name !== 'programmes' && table.name !== 'meta')
    .map((table) => (table.name === 'sqlite_sequence' ? { ...table, rows: [...table.rows].sort((a, b) => String(a[0]).localeCompare(String(b[0]))) } : table));
}

function thrownBy(act: () => unknown): unknown {
  try {
    act();
  } catch (error) {
    return error;
  }
  return undefined;
}

const control = (sandbox: TestApp, method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown): Promise<LightMyRequestResponse> =>
  sandbox.app.inject({ method, url, ...(body === undefined ? {} : { payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } }) });

async function deposit(sandbox: TestApp, prefix = '', reference = 'bulk'): Promise<void> {
  const answer = await sandbox.request('POST', `${prefix}/v1/sandbox/accounts/acct_acme_usd/deposits`, { depositInstructionId: 'di_acme_usd_ach', amount: '25.00', reference });
  t.equal(answer.statusCode, 202, answer.body);
}

/** What the list counters say against what the rows are: the triggers keep them, so a lost trigger shows here. */
async function listTotal(sandbox: TestApp, prefix = ''): Promise<number> {
  const answer = await sandbox.request('GET', `${prefix}/v1/transactions?accountId=acct_acme_usd&pageSize=1`);
  t.equal(answer.statusCode, 200, answer.body);
  return json(answer).totalRecords;
}

t.test('a big state: reset, restore and a snapshot\'s sessions end exactly as saved, schema and counters too', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'snapshots-bulk-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // a database file, as the root's usually is (its WAL and page cache are part of what a bulk write changes)
  const sandbox = await buildTestApp({ db: path.join(dir, 'sandbox.db'), config: { fixtures: bigFixtures(dir), maxSessions: 4 } });
  t.teardown(() => sandbox.close());
  const db = sandbox.ctx.db;
  const schema = schemaOf(db);
  t.ok(rowCount(db) > BULK_RESTORE_ROWS, `the state is big enough for the bulk path (${rowCount(db)} rows)`);

  await deposit(sandbox);
  t.equal((await control(sandbox, 'POST', '/_emulator/clock', { advanceMs: 3_600_000 })).statusCode, 200);
  await deposit(sandbox, '', 'pending at the snapshot');
  const totalSaved = await listTotal(sandbox);
  t.equal((await control(sandbox, 'POST', '/_emulator/snapshots', { name: 'big' })).statusCode, 201);
  const saved = readTables(db);

  // the first reset empties every table without its triggers and indexes, then seeds the fixtures with them
  t.equal((await control(sandbox, 'POST', '/_emulator/reset')).statusCode, 200);
  t.same(schemaOf(db), schema, 'reset gives every trigger and index back');
  t.equal(await listTotal(sandbox), totalSaved - 2, 'the fixtures again: the two deposits are gone');
  await deposit(sandbox, '', 'after the reset');
  t.equal(await listTotal(sandbox), totalSaved - 1, 'the counters follow a new row: the triggers are back');

  // restore: every row of the saved state differs from the fixtures' or is new
  const restored = await control(sandbox, 'POST', '/_emulator/snapshots/big/restore');
  t.equal(restored.statusCode, 200, restored.body);
  t.same(readTables(db), saved, 'every table as saved, the counters and listing tables included');
  t.same(schemaOf(db), schema, 'the restore gives every trigger and index back');
  await deposit(sandbox, '', 'after the restore');
  t.equal(await listTotal(sandbox), totalSaved + 1);

  // the later reset goes back through the kept image of the fixtures (a restore with many rows to delete)
  t.equal((await control(sandbox, 'POST', '/_emulator/reset')).statusCode, 200);
  t.equal(await listTotal(sandbox), totalSaved - 2);
  t.same(schemaOf(db), schema);

  // sessions from the big snapshot: the first restores it and keeps its database as the image, the second opens that
  const ids: string[] = [];
  for (let i = 0; i < 2; i += 1) {
    const made = await control(sandbox, 'POST', '/_emulator/sessions', { snapshot: 'big' });
    t.equal(made.statusCode, 201, made.body);
    ids.push(json(made).id);
  }
  for (const id of ids) {
    const sessionDb = sandbox.sessions.get(id)!.sandbox.ctx.db;
    t.same(comparable(readTables(sessionDb)), comparable(saved), `session ${ids.indexOf(id) + 1} starts as saved`);
    t.same(schemaOf(sessionDb), schema, 'with the whole schema');
    const prefix = `/_sessions/${id}`;
    t.equal(await listTotal(sandbox, prefix), totalSaved);
    await deposit(sandbox, prefix, 'in the session');
    t.equal(await listTotal(sandbox, prefix), totalSaved + 1);
    const before = readTables(sessionDb);
    t.equal((await control(sandbox, 'POST', `${prefix}/_emulator/reset`)).statusCode, 200);
    // its reset compares only the tables it wrote since it started (it notes them from the start)
    t.same(comparable(readTables(sessionDb)), comparable(saved), 'its reset goes back to the snapshot');
    t.notSame(before, readTables(sessionDb));
    t.equal(await listTotal(sandbox, prefix), totalSaved);
  }
});

t.test('a big restore takes turns: others are answered meanwhile, the sandbox\'s own requests wait for its end', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'snapshots-bulk-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const sandbox = await buildTestApp({ config: { fixtures: bigFixtures(dir), maxSessions: 2 } });
  t.teardown(() => sandbox.close());
  const session = json(await control(sandbox, 'POST', '/_emulator/sessions', {}));
  await deposit(sandbox);
  const totalSaved = await listTotal(sandbox);
  t.equal((await control(sandbox, 'POST', '/_emulator/snapshots', { name: 'big' })).statusCode, 201);
  t.equal((await control(sandbox, 'POST', '/_emulator/reset')).statusCode, 200); // every saved row to write again

  // the restore's own steps, driven by hand under the root's hold: paused half way until the other requests have their
  // answers, so nothing here depends on how fast either is
  const snapshot = getSnapshot(sandbox.ctx, 'big');
  let done = false;
  let rootAnswer: Promise<boolean> | undefined;
  const answered = await holdSandbox(sandbox.ctx, async () => {
    const steps = restoreSnapshotSteps(sandbox.ctx, snapshot);
    for (let i = 0; i < 3; i += 1) t.notOk(steps.next().done, 'the restore has more steps');
    t.ok(sandbox.ctx.db.inTransaction, 'half way: its transaction is open');
    // the root's own list, asked now, waits for the end of the hold
    rootAnswer = listTotal(sandbox).then((total) => done && total === totalSaved);
    const others = await Promise.all([
      sandbox.app.inject({ method: 'GET', url: '/_emulator/health' }).then((answer) => [answer.statusCode, done]),
      sandbox.request('GET', `/_sessions/${session.id}/v1/accounts`).then((answer) => [answer.statusCode, done]),
    ]);
    t.ok(sandbox.ctx.db.inTransaction, 'still half way once they are answered');
    while (!steps.next().done);
    done = true;
    return others;
  });
  t.same(answered, [[200, false], [200, false]], 'the health check and another sandbox were answered while the restore was half way');
  t.ok(await rootAnswer, "the root's own request waited for the restore and saw it whole");
  t.equal(sandbox.ctx.db.inTransaction, false);
  t.equal(clockMoveUnderWay(sandbox.ctx), null, 'and the hold is let go');
  t.same(comparable(readTables(sandbox.ctx.db)), comparable(snapshot.tables), 'every table as saved');
});

t.test('a write on the connection while a big save or restore takes turns: noticed, nothing done, a 409', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'snapshots-bulk-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const sandbox = await buildTestApp({ db: path.join(dir, 'sandbox.db'), config: { fixtures: bigFixtures(dir) } });
  t.teardown(() => sandbox.close());
  const { ctx } = sandbox;
  const db = ctx.db;
  t.equal((await control(sandbox, 'POST', '/_emulator/snapshots', { name: 'big' })).statusCode, 201);
  t.equal((await control(sandbox, 'POST', '/_emulator/reset')).statusCode, 200);
  const before = readTables(db);
  const schema = schemaOf(db);
  // what a handler already running when the hold began could do between two turns, driven by hand: a write half way
  const rename = () => db.prepare("UPDATE programmes SET name = name || ' (renamed)'").run();

  const restore = restoreSnapshotSteps(ctx, getSnapshot(ctx, 'big'));
  for (let i = 0; i < 3; i += 1) t.notOk(restore.next().done);
  rename();
  t.ok(thrownBy(() => restore.next()) instanceof WrittenMeanwhileError, 'the restore notices at its next step');
  t.same(readTables(db), before, 'and leaves every row as it was (the other write with it: it was made inside its transaction)');
  t.same(schemaOf(db), schema, 'every trigger and index too');
  t.equal(db.inTransaction, false);
  t.equal(db.pragma('foreign_keys', { simple: true }), 1);

  const save = captureSnapshotSteps(ctx, 'torn');
  t.notOk(save.next().done);
  rename();
  t.ok(thrownBy(() => runNow(save)) instanceof WrittenMeanwhileError, 'a save notices too: its copy would be torn');
  t.equal(db.inTransaction, false);
  t.match(db.prepare('SELECT name FROM programmes LIMIT 1').pluck().get(), /\(renamed\)$/, 'the other write stays');

  // over HTTP that is a 409 that says to try again, and the outbox is looked at after the hold
  const refused = await heldInTurns(ctx, 'a snapshot was saved', async () => {
    throw new WrittenMeanwhileError('a write');
  }).then(
    () => null,
    (error: unknown) => error,
  );
  t.match(refused, { statusCode: 409, message: /^Another request of this sandbox wrote while a snapshot was saved, so nothing was done: try again/ });
});

t.test('withoutTriggers: a write that fails leaves triggers, indexes and rows as they were', async (t) => {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  db.exec(`
    CREATE TABLE items (id INTEGER PRIMARY KEY, code TEXT NOT NULL);
    CREATE TABLE counts (name TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID;
    CREATE UNIQUE INDEX items_code ON items (code);
    CREATE TRIGGER items_count AFTER INSERT ON items BEGIN UPDATE counts SET n = n + 1 WHERE name = 'items'; END;
    INSERT INTO counts VALUES ('items', 0);
    INSERT INTO items (code) VALUES ('a');
  `);
  const schema = schemaOf(db);
  t.throws(() => withoutTriggers(db, () => undefined), /inside a transaction/, 'refused outside a transaction');

  t.throws(() =>
    db.transaction(() =>
      withoutTriggers(
        db,
        () => {
          db.exec("INSERT INTO items (code) VALUES ('b')");
          throw new Error('the write failed');
        },
        new Set(['items']),
      ),
    )(),
  );
  t.same(schemaOf(db), schema, 'the trigger and index are back');
  t.same(db.prepare('SELECT code FROM items ORDER BY id').pluck().all(), ['a'], 'the row written is gone');

  // an index built again checks its UNIQUE rule: a duplicate written while it was away fails the whole transaction
  t.throws(() => db.transaction(() => withoutTriggers(db, () => db.exec("INSERT INTO items (code) VALUES ('a')"), new Set(['items'])))(), /UNIQUE/);
  t.same(schemaOf(db), schema);
  t.same(db.prepare('SELECT code FROM items ORDER BY id').pluck().all(), ['a']);

  // and a write that succeeds: no trigger fired during it, both are there after it
  const counted = () => db.prepare("SELECT n FROM counts WHERE name = 'items'").pluck().get();
  t.equal(counted(), 1, "the fixture's row was counted");
  db.transaction(() => withoutTriggers(db, () => db.exec("INSERT INTO items (code) VALUES ('c')"), new Set(['items'])))();
  t.equal(counted(), 1, 'the trigger did not fire during the write');
  db.exec("INSERT INTO items (code) VALUES ('d')");
  t.equal(counted(), 2, 'and fires after it');
  t.same(schemaOf(db), schema);
});

t.test('closing the sessions while the first session from a big snapshot restores it waits for that session to stop', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'snapshots-bulk-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const sandbox = await buildTestApp({ config: { fixtures: bigFixtures(dir) } });
  t.teardown(() => sandbox.close());
  t.equal((await control(sandbox, 'POST', '/_emulator/snapshots', { name: 'big' })).statusCode, 201);
  const snapshot = getSnapshot(sandbox.ctx, 'big');
  t.equal(snapshot.sessionImage, undefined, 'no session has opened it yet: the first restores it in turns');

  let createSettled = false;
  const created = sandbox.sessions.create({ snapshot }).finally(() => {
    createSettled = true;
  });
  await sandbox.sessions.close();
  t.ok(createSettled, 'close() answered once the session being created had stopped');
  await t.rejects(created, { statusCode: 503, message: 'The server is shutting down' }, 'and that session is refused');
  t.same(sandbox.sessions.list(), [], 'no session is left');
});

t.test('a save reads every table a chunk at a time, the tables without a rowid in the order of their key', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'snapshots-bulk-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const sandbox = await buildTestApp({ config: { fixtures: bigFixtures(dir) } });
  t.teardown(() => sandbox.close());
  const db = sandbox.ctx.db;
  const accounts = db.prepare('SELECT COUNT(*) FROM transaction_accounts').pluck().get() as number;
  t.ok(accounts > 2 * CHUNK_ROWS, `transaction_accounts (WITHOUT ROWID) holds ${accounts} rows, most of one account: chunks meet inside one account_id`);

  const steps = readTablesSteps(db);
  let turns = 0;
  let next = steps.next();
  for (; !next.done; next = steps.next()) turns += 1;
  const tables = next.value;
  // a turn after each full chunk of every table, sqlite_sequence (read at once) aside
  const expected = tables.filter((table) => table.name !== 'sqlite_sequence').reduce((sum, table) => sum + Math.floor(table.rows.length / CHUNK_ROWS), 0);
  t.equal(turns, expected, `${turns} turns: one after each full chunk, the tables without a rowid included`);
  const read = tables.find((table) => table.name === 'transaction_accounts')!;
  t.same(read.rows, db.prepare('SELECT * FROM transaction_accounts ORDER BY account_id, transaction_id').raw(true).all(), 'every row once, in the order of the key');
  t.same(tables.map((table) => table.rows.length), readTables(db).map((table) => table.rows.length));
});

t.test('sessions created at once from a big snapshot: the first restores it, the others wait and open its image', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'snapshots-bulk-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const sandbox = await buildTestApp({ config: { fixtures: bigFixtures(dir) } });
  t.teardown(() => sandbox.close());
  // every transaction row differs from the fixtures' (the sessions' databases start as those): the restore rewrites them
  sandbox.ctx.db.prepare('UPDATE transactions SET updated_at_ms = updated_at_ms + 1').run();
  t.equal((await control(sandbox, 'POST', '/_emulator/snapshots', { name: 'big' })).statusCode, 201);
  const snapshot = getSnapshot(sandbox.ctx, 'big');
  const opened: Array<Buffer | undefined> = [];
  const registry = createSessionRegistry(sandbox.ctx, (options) => {
    opened.push(options.image);
    return openSandbox(options);
  });
  t.teardown(() => registry.close());
  await registry.end((await registry.create({})).id); // the image of the fixtures, which a first session from a snapshot opens
  opened.length = 0;
  const sessions = await Promise.all([registry.create({ snapshot }), registry.create({ snapshot }), registry.create({ snapshot })]);
  t.ok(snapshot.sessionImage, 'the first kept an image of the snapshot');
  t.same(
    opened.map((image) => image === snapshot.sessionImage),
    [false, true, true],
    'one restore, from the fixtures; the two others opened the snapshot image it kept',
  );
  for (const session of sessions) t.same(comparable(readTables(session.sandbox.ctx.db)), comparable(snapshot.tables), 'each starts as saved');
});

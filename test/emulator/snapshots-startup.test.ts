import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import Database from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startSandbox } from '../../src/index.js';
import { buildTestApp, json } from '../helper.js';
import { CLI, ensureBuilt, signedCall, startServerProcess, type ServerProcess } from '../helpers/server-process.js';
import { plainNode } from '../helpers/node-child.js';

// `--snapshot FILE` (docs/configuration.md#snapshot) on the built server, and the test kit's snapshot()/restore().

function tempDir(t: Test): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'sandbox-snapshot-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const signed = signedCall;

async function control(server: ServerProcess, method: string, target: string, body?: unknown): Promise<any> {
  const response = await fetch(`${server.url}${target}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

/** A snapshot file made in process: the fixtures plus one deposit still PENDING at 12:00:00, frozen. */
async function exportedFile(t: Test, dir: string): Promise<{ file: string; depositId: string; balances: unknown }> {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  const deposit = await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: '42.00', reference: 'from-file' });
  const depositId = /Deposit (txn_[a-z0-9]+)/.exec(json(deposit).message)![1]!;
  await sandbox.app.inject({ method: 'POST', url: '/_emulator/snapshots', payload: { name: 'seeded' } });
  const file = path.join(dir, 'seeded.sandbox-snapshot');
  writeFileSync(file, (await sandbox.app.inject({ method: 'GET', url: '/_emulator/snapshots/seeded/export' })).rawPayload);
  const balances = json(await sandbox.request('GET', '/v1/accounts/acct_acme_usd')).balances;
  return { file, depositId, balances };
}

t.before(ensureBuilt);

t.test('--snapshot FILE: the server starts from the file, and reset goes back to it', async (t) => {
  const dir = tempDir(t);
  const { file, depositId, balances } = await exportedFile(t, dir);
  const server = await startServerProcess({ db: ':memory:', clock: null, extraArgs: ['--snapshot', file] });
  t.teardown(server.stop);

  t.equal((await control(server, 'GET', '/_emulator/clock')).body.now, '2026-03-01T12:00:00.000Z', 'the clock of the snapshot, frozen');
  t.equal((await signed(server, 'GET', `/v1/transactions/${depositId}`)).body.status, 'PENDING');
  t.same((await signed(server, 'GET', '/v1/accounts/acct_acme_usd')).body.balances, balances, 'the balances of the snapshot');

  await control(server, 'POST', '/_emulator/clock', { advanceMs: 5000 });
  t.equal((await signed(server, 'GET', `/v1/transactions/${depositId}`)).body.status, 'COMPLETED', 'its jobs run');
  t.equal((await control(server, 'POST', '/_emulator/reset')).status, 200);
  t.equal((await signed(server, 'GET', `/v1/transactions/${depositId}`)).body.status, 'PENDING', 'reset: back to the snapshot, not the fixtures');
  t.equal((await control(server, 'GET', '/_emulator/clock')).body.now, '2026-03-01T12:00:00.000Z');
});

t.test('--snapshot with a later --clock moves forward through the due jobs', async (t) => {
  const dir = tempDir(t);
  const { file, depositId } = await exportedFile(t, dir);
  const server = await startServerProcess({ db: ':memory:', clock: '2026-03-01T12:00:05.000Z', extraArgs: ['--snapshot', file] });
  t.teardown(server.stop);
  t.equal((await control(server, 'GET', '/_emulator/clock')).body.now, '2026-03-01T12:00:05.000Z');
  t.equal((await signed(server, 'GET', `/v1/transactions/${depositId}`)).body.status, 'COMPLETED', 'the deposit settled on the way');
});

t.test('--snapshot on a database file that already holds a sandbox: kept, one warning', async (t) => {
  const dir = tempDir(t);
  const { file, depositId } = await exportedFile(t, dir);
  const db = path.join(dir, 'state.db');
  const first = await startServerProcess({ db, clock: '2026-03-01T12:00:00.000Z' });
  await first.stop();
  const server = await startServerProcess({ db, clock: null, extraArgs: ['--snapshot', file] });
  t.teardown(server.stop);
  t.equal((await signed(server, 'GET', `/v1/transactions/${depositId}`)).status, 404, 'the file on disk wins');
  const warnings = server.output().split('\n').filter((line) => line.includes('--snapshot'));
  t.equal(warnings.length, 1, server.output());
  t.match(warnings[0], /not loaded: the database already holds a sandbox/);
  await control(server, 'POST', '/_emulator/reset');
  t.equal((await signed(server, 'GET', `/v1/transactions/${depositId}`)).body.status, 'PENDING', 'reset goes to the snapshot');
});

t.test('--snapshot refusals: one line naming the flag, exit code 2', async (t) => {
  const dir = tempDir(t);
  const notSnapshot = path.join(dir, 'notes.txt');
  writeFileSync(notSnapshot, 'not a snapshot at all, just text '.repeat(100));
  for (const [args, expected] of [
    [['--snapshot', path.join(dir, 'missing.snapshot')], /--snapshot \/ SNAPSHOT ".*missing\.snapshot": accepts the path of a file exported by .*; no such file/],
    [['--snapshot', dir], /--snapshot \/ SNAPSHOT ".*": accepts the path of a file exported by .*; no such file/],
    [['--snapshot', notSnapshot], /--snapshot \/ SNAPSHOT ".*notes\.txt": not a snapshot this server can start from: the body is not a (readable )?SQLite database file/],
  ] as const) {
    const result = spawnSync(...plainNode([CLI, '--port', '0', ...args]), { encoding: 'utf8', timeout: 20_000 });
    t.equal(result.status, 2, args.join(' '));
    t.match(result.stderr, expected);
    t.equal(result.stderr.trim().split('\n').length, 1, 'one line');
    t.notMatch(result.stderr, /\n\s+at /, 'no stack trace');
  }
});

// docs/configuration.md#snapshot: an export given as --db was written to as a database and switched to WAL, and was then
// refused everywhere as "unable to open database file". Now --db refuses it untouched, and a file an older build did
// switch to WAL mode (header bytes 18 and 19 = 2) is read as the export it is, by --snapshot and by an upload.
t.test('an export as --db is refused untouched; an export switched to WAL mode still loads', async (t) => {
  const dir = tempDir(t);
  const { file, depositId } = await exportedFile(t, dir);
  const bytes = readFileSync(file);
  const asDb = spawnSync(...plainNode([CLI, '--port', '0', '--db', file]), { encoding: 'utf8', timeout: 60_000 });
  t.equal(asDb.status, 2);
  t.match(asDb.stderr, /^service-sandbox: invalid --db \/ DB_PATH ".*seeded\.sandbox-snapshot": cannot use this file: it is a snapshot export, not a database to run on; start from it with --snapshot FILE/);
  t.ok(readFileSync(file).equals(bytes), 'the export is byte for byte as it was');

  const wal = path.join(dir, 'wal.sandbox-snapshot');
  const marked = Buffer.from(bytes);
  marked[18] = 2;
  marked[19] = 2;
  writeFileSync(wal, marked);
  const server = await startServerProcess({ db: ':memory:', clock: null, extraArgs: ['--snapshot', wal] });
  t.teardown(server.stop);
  t.equal((await signed(server, 'GET', `/v1/transactions/${depositId}`)).body.status, 'PENDING', 'the state of the export');
  const upload = await fetch(`${server.url}/_emulator/snapshots/uploaded`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: marked });
  t.equal(upload.status, 201, await upload.text());
  t.ok(readFileSync(wal).equals(marked), 'the file is not changed by reading it');
});

// docs/robustness.md#hostile-files: the file at start gets the checks of an upload, on the built server's worker thread
t.test('--snapshot with a hostile or broken file: one line naming the flag and what is wrong, exit code 2', async (t) => {
  const dir = tempDir(t);
  const { file } = await exportedFile(t, dir);
  const edit = (name: string, sql: string): string => {
    const db = new Database(readFileSync(file));
    db.exec(sql);
    const target = path.join(dir, name);
    writeFileSync(target, db.serialize());
    db.close();
    return target;
  };
  for (const [target, expected] of [
    [edit('view.snapshot', 'DROP TABLE snapshot_sequence; CREATE VIEW snapshot_sequence (name, seq) AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT 1, n FROM r'), /it holds a view \(snapshot_sequence\)/],
    [edit('bogus.snapshot', "UPDATE transactions SET status = 'BOGUS' WHERE rowid = (SELECT MIN(rowid) FROM transactions)"), /table transactions, row id "txn_\w+" \(rowid \d+\): column status is "BOGUS"/],
    // a duplicate user: the start used to fail writing it and blame --db (docs/robustness.md#hostile-files)
    [edit('duplicate.snapshot', 'INSERT INTO users SELECT * FROM users WHERE rowid = (SELECT MIN(rowid) FROM users)'), /table users, row id "usr_\w+" \(rowid \d+\): this build's schema refuses it \(UNIQUE constraint failed: users\./],
  ] as const) {
    const result = spawnSync(...plainNode([CLI, '--port', '0', '--snapshot', target]), { encoding: 'utf8', timeout: 60_000 });
    t.equal(result.status, 2, target);
    t.match(result.stderr, /^service-sandbox: invalid --snapshot \/ SNAPSHOT ".*": not a snapshot this server can start from: /, target);
    t.match(result.stderr, expected, target);
    t.equal(result.stderr.trim().split('\n').length, 1, 'one line');
  }
});

t.test('test kit: snapshot() and restore()', async (t) => {
  const sandbox = await startSandbox({ clock: '2026-03-02T09:00:00.000Z' });
  t.teardown(sandbox.close);
  await sandbox.snapshot('clean');
  const created = await sandbox.signedFetch('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { depositInstructionId: 'di_acme_usd_ach', amount: '5.00', reference: 'kit' });
  t.equal(created.status, 202);
  const id = /Deposit (txn_[a-z0-9]+)/.exec(((await created.json()) as { message: string }).message)![1]!;
  await sandbox.advanceClock(10_000);
  await sandbox.restore('clean');
  t.equal((await sandbox.signedFetch('GET', `/v1/transactions/${id}`)).status, 404, 'the deposit is gone');
  const clock = (await (await fetch(`${sandbox.url}/_emulator/clock`)).json()) as { now: string };
  t.equal(clock.now, '2026-03-02T09:00:00.000Z');
  await t.rejects(sandbox.restore('nope'), /No snapshot named "nope"/);
});

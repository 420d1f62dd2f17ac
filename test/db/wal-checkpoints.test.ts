import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { buildTestApp } from '../helper.js';

// docs/decisions.md#wal-checkpoints: on a database file the app's connection never checkpoints inside a commit
// (only SQLite's backstop checkpoint, once per 16 MiB of WAL: docs/decisions.md#wal-ceiling); a worker thread copies the WAL into the file in the background, and closing the database
// stops it first, so SQLite's checkpoint on close still leaves every row in the file and removes the WAL.

const depositBody = { depositInstructionId: 'di_acme_usd_ach', amount: '10.00', reference: 'wal checkpoints' };

t.test('a database file: no checkpoint in the commit, the worker copies the WAL into the file, close leaves it whole', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'wal-checkpoints-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'sandbox.db');
  const sandbox = await buildTestApp({ db: file });
  let closed = false;
  t.teardown(async () => {
    if (!closed) await sandbox.close();
  });

  t.equal(sandbox.ctx.db.pragma('journal_mode', { simple: true }), 'wal', 'WAL mode');
  t.equal(sandbox.ctx.db.pragma('wal_autocheckpoint', { simple: true }), Math.floor((16 * 1024 * 1024) / (4096 + 24)), "the app's connection checkpoints only as the ceiling's backstop (16 MiB of 4 KiB frames)");
  t.equal(sandbox.ctx.db.pragma('journal_size_limit', { simple: true }), 16 * 1024 * 1024, 'the WAL file is trimmed back to 16 MiB when it starts over');
  t.equal(sandbox.ctx.db.pragma('synchronous', { simple: true }), 1, 'synchronous = NORMAL');

  const sizeBefore = statSync(file).size;
  for (let i = 0; i < 60; i += 1) {
    const response = await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', { ...depositBody, reference: `wal ${i}` });
    t.equal(response.statusCode, 202, `deposit ${i} accepted`);
  }
  const written = (sandbox.ctx.db.prepare('SELECT COUNT(*) AS n FROM transactions').get() as { n: number }).n;

  // the background checkpoint (every 200 ms) copies the new pages into the database file
  const deadline = Date.now() + 30_000; // a generous bound for a loaded machine
  while (statSync(file).size <= sizeBefore && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  t.ok(statSync(file).size > sizeBefore, `the database file grew from ${sizeBefore} bytes without the app's connection checkpointing`);

  await sandbox.close(); // resolves only once the worker has stopped
  closed = true;
  t.notOk(existsSync(`${file}-wal`), "the WAL is gone: the app's connection was the last one and checkpointed on close");

  const reopened = new Database(file, { readonly: true });
  t.teardown(() => reopened.close());
  t.equal((reopened.prepare('SELECT COUNT(*) AS n FROM transactions').get() as { n: number }).n, written, 'every row is in the file');
  t.equal(reopened.pragma('integrity_check', { simple: true }), 'ok', 'integrity_check is clean');
});

t.test('an in-memory database keeps SQLite defaults (no worker, nothing to checkpoint)', async (t) => {
  const sandbox = await buildTestApp();
  t.teardown(sandbox.close);
  t.equal(sandbox.ctx.db.pragma('wal_autocheckpoint', { simple: true }), 1000, 'the default automatic checkpoint');
  const response = await sandbox.request('POST', '/v1/sandbox/accounts/acct_acme_usd/deposits', depositBody);
  t.equal(response.statusCode, 202, 'a deposit is accepted');
});

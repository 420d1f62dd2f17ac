import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

// WAL checkpoints off the request path (docs/decisions.md#wal-checkpoints). By default SQLite checkpoints inside the
// commit that takes the WAL past 1,000 pages: that request copies the WAL into the database file and waits for the
// file's fsync, which on a busy disk is a stall of tens or hundreds of milliseconds for whoever committed. Here the
// app's connection checkpoints by itself only as a backstop, once per WAL_BACKSTOP_BYTES (below); a worker thread with its
// own connection to the same file runs PASSIVE checkpoints (never waiting for, nor blocking, the writer) every
// CHECKPOINT_EVERY_MS.
// Closing the app's connection stops the worker first, synchronously, so that connection is the last one and SQLite's
// own checkpoint on close leaves the whole database in the file, as before.

const CHECKPOINT_EVERY_MS = 200;

/**
 * The WAL's ceiling (docs/decisions.md#wal-ceiling). Under sustained writes the worker's PASSIVE checkpoints never
 * catch up with the writer, and SQLite starts the WAL over only when a write begins with every frame copied: the file
 * grew without bound (5-7 GB under eight writing clients). So the app's connection keeps SQLite's own
 * checkpoint as a backstop: once the WAL holds WAL_BACKSTOP_BYTES of frames, the commit that passes it checkpoints
 * (copying only what the worker has not, the worker having copied most), the next write starts the WAL over, and
 * `journal_size_limit` trims the file back to that size. The promise is WAL_CEILING_BYTES; the backstop is a quarter
 * of it, so the frames written while a worker's checkpoint makes the backstop wait stay well under it.
 */
export const WAL_CEILING_BYTES = 64 * 1024 * 1024;
export const WAL_BACKSTOP_BYTES = WAL_CEILING_BYTES / 4;
/** Each WAL frame is a page and a 24-byte header (SQLite's WAL file format). */
const WAL_FRAME_HEADER_BYTES = 24;
const RUNNING = 0;
const STOPPING = 1;

// The worker's code: a loop that sleeps on the shared word (woken at once by a stop), checkpoints, and on a stop
// closes its connection and says so. CommonJS source, run with `eval`, so it needs no file of its own in the bundle.
const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const control = new Int32Array(workerData.control);
let db = null;
try {
  const Database = require(workerData.driver);
  db = new Database(workerData.path, { fileMustExist: true });
  db.pragma('busy_timeout = 0');
  while (Atomics.load(control, 0) === ${RUNNING}) {
    Atomics.wait(control, 0, ${RUNNING}, workerData.everyMs);
    if (Atomics.load(control, 0) !== ${RUNNING}) break;
    try { db.pragma('wal_checkpoint(PASSIVE)'); } catch { /* busy or closing: the next round */ }
  }
} finally {
  try { if (db) db.close(); } catch {}
  Atomics.store(control, 1, 1);
  Atomics.notify(control, 1);
}
`;

/**
 * Move the checkpoints of a file database in WAL mode to a worker thread. Returns false (and leaves SQLite's own
 * automatic checkpoints on) when no worker can be started.
 */
export function checkpointInBackground(db: Database.Database, path: string): boolean {
  const control = new Int32Array(new SharedArrayBuffer(8));
  let worker: Worker;
  try {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver, path, control: control.buffer, everyMs: CHECKPOINT_EVERY_MS } });
  } catch {
    return false;
  }
  worker.unref();
  worker.on('error', () => {
    // the worker could not open the file or died: SQLite's own checkpoints take over again
    if (db.open) db.pragma('wal_autocheckpoint = 1000');
  });
  // a worker gone for any reason has no connection left to close: a later close must not wait for it
  worker.on('exit', () => Atomics.store(control, 1, 1));
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  db.pragma(`wal_autocheckpoint = ${Math.max(1, Math.floor(WAL_BACKSTOP_BYTES / (pageSize + WAL_FRAME_HEADER_BYTES)))}`);
  db.pragma(`journal_size_limit = ${WAL_BACKSTOP_BYTES}`);
  const close = db.close.bind(db);
  db.close = () => {
    Atomics.store(control, 0, STOPPING);
    Atomics.notify(control, 0);
    // at most one checkpoint in progress to finish; a worker that never started has nothing to close
    Atomics.wait(control, 1, 0, 5_000);
    return close();
  };
  return true;
}

import Database from 'better-sqlite3';
import { migrate } from './migrate.js';
import { checkpointInBackground } from './checkpointer.js';
import type { Db } from './db.js';

export type { Db } from './db.js';

/** Open the database (`:memory:` by default, a file with `--db`), in WAL mode with foreign keys on. */
export function openDatabase(path: string): Db {
  const db = new Database(path);
  if (path !== ':memory:') db.pragma('journal_mode = WAL');
  connectionPragmas(db);
  migrate(db);
  // a file's WAL checkpoints run on a worker thread, not inside a request's commit (docs/decisions.md#wal-checkpoints)
  if (path !== ':memory:' && path !== '' && db.pragma('journal_mode', { simple: true }) === 'wal') checkpointInBackground(db, path);
  return db;
}

/**
 * An in-memory database opened from `image`, the bytes of a database this process migrated and seeded
 * (docs/sessions.md#how-fast): a copy in 0.2 ms where running the migrations takes 18 ms.
 */
export function openImage(image: Buffer): Db {
  const db = new Database(image);
  connectionPragmas(db);
  return db;
}

function connectionPragmas(db: Db): void {
  db.pragma('foreign_keys = ON');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
}

// Prepare each statement once per database handle (docs/architecture.md#folder-map: `prepared()` cache).
const statementCache = new WeakMap<Db, Map<string, Database.Statement>>();

export function prepared<Row = unknown>(db: Db, text: string): Database.Statement<unknown[], Row> {
  let cache = statementCache.get(db);
  if (!cache) {
    cache = new Map();
    statementCache.set(db, cache);
  }
  let statement = cache.get(text);
  if (!statement) {
    statement = db.prepare(text);
    cache.set(text, statement);
  }
  return statement as Database.Statement<unknown[], Row>;
}

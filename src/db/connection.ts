import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { PROJECT_ROOT } from '../config.js';
import { migrate } from './migrate.js';
import { migrations } from './migrations/index.js';
import { checkpointInBackground } from './checkpointer.js';
import type { Db } from './db.js';

export type { Db } from './db.js';

/**
 * The migrated, empty schema, written by the build (`npm run build`: scripts/bundle.mjs) as dist/schema.sqlite: an
 * in-memory database opens a copy of it (about 1 ms) instead of running every migration (about 18 ms; the test
 * kit's startSandbox() 72-77 -> 58-59 ms, docs/benchmarks.md#the-schema-image). Read once per process; absent (a
 * checkout not built), the migrations run.
 */
export const SCHEMA_IMAGE = path.join(PROJECT_ROOT, 'dist', 'schema.sqlite');
let schemaImage: Buffer | null | undefined;

function migratedImage(): Buffer | null {
  if (schemaImage === undefined) {
    try {
      schemaImage = readFileSync(SCHEMA_IMAGE);
    } catch {
      schemaImage = null;
    }
  }
  return schemaImage;
}

const LATEST_MIGRATION = Math.max(...migrations.map((migration) => migration.version));

/** Open the database (`:memory:` by default, a file with `--db`), in WAL mode with foreign keys on. */
export function openDatabase(file: string): Db {
  const image = file === ':memory:' ? migratedImage() : null;
  if (image) {
    const db = openImage(image);
    // an image from another build: the migrations it lacks run below; one from a later build is not used
    if ((db.pragma('user_version', { simple: true }) as number) <= LATEST_MIGRATION) {
      migrate(db);
      return db;
    }
    db.close();
  }
  if (file !== ':memory:' && file !== '') checkDatabaseFile(file);
  const db = new Database(file);
  if (file !== ':memory:') db.pragma('journal_mode = WAL');
  connectionPragmas(db);
  migrate(db);
  // a file's WAL checkpoints run on a worker thread, not inside a request's commit (docs/decisions.md#wal-checkpoints)
  if (file !== ':memory:' && file !== '' && db.pragma('journal_mode', { simple: true }) === 'wal') checkpointInBackground(db, file);
  return db;
}

/** A `--db` file this build must not write to; the message says why (docs/configuration.md). */
export class DatabaseRefusal extends Error {
  override name = 'DatabaseRefusal';
}

/**
 * docs/configuration.md: a `--db` file is checked before anything is written to it, switching it to WAL included, so a
 * refused file is left as it was: opened read-only, it must be empty (a new file) or a sandbox database of this build's
 * schema or an earlier one. Not another application's database (tables, none of them the sandbox's `meta`), not a
 * snapshot export (a copy of the rows to start from with --snapshot), not a database of a later server.
 */
function checkDatabaseFile(file: string): void {
  if (!existsSync(file)) return; // a new file: SQLite creates it below
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").pluck().all() as string[];
    const version = db.pragma('user_version', { simple: true }) as number;
    if (tables.includes('snapshot_info')) {
      throw new DatabaseRefusal('it is a snapshot export, not a database to run on; start from it with --snapshot FILE (and --db NEW-FILE to keep the state)');
    }
    if (tables.length > 0 && (version === 0 || !tables.includes('meta'))) {
      const shown = tables.slice(0, 5).join(', ') + (tables.length > 5 ? `, ... (${tables.length} tables)` : '');
      throw new DatabaseRefusal(`it is a SQLite database of something else (tables ${shown}), not a sandbox's; give a new file, or one a sandbox wrote`);
    }
    if (version > LATEST_MIGRATION) {
      throw new DatabaseRefusal(`its schema is version ${version}, later than this server's ${LATEST_MIGRATION} (a later server wrote it: run that one, or give a new file)`);
    }
  } finally {
    db.close();
  }
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

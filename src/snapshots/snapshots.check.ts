import Database from 'better-sqlite3';
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { errors } from '../core/errors.js';
import type { Db } from '../db/connection.js';
import { createJobQueue } from '../lib/job-queue.js';
import { migrate } from '../db/migrate.js';
import { dropTriggersAndIndexes } from '../db/triggers.js';
import { migrations } from '../db/migrations/index.js';
import { rowProblem } from './snapshots.rules.js';
import { inClockRange } from '../lib/clock.js';
import {
  columnsOf,
  fileTableName,
  fileTableSql,
  keyOf,
  readTables,
  restoreNewDatabase,
  snapshotTables,
  SNAPSHOT_FORMAT,
  SNAPSHOT_INFO_SQL,
  type TableRows,
} from '../db/snapshot-tables.js';

// An uploaded snapshot file is untrusted (docs/robustness.md#hostile-files, docs/control-plane.md#snapshots): a SQLite
// file can hold views and triggers that run whatever query they like the moment a table is read, a corrupt b-tree, or
// rows no request could have written. So before any row of it is read:
//   1. it is opened read-only, as a private in-memory copy, with `trusted_schema` off (better-sqlite3 12 already opens
//      every connection in SQLite's defensive mode, SQLITE_DBCONFIG_DEFENSIVE);
//   2. its sqlite_master (tables, indexes, triggers, views, their SQL normalised) must be exactly the file schema of
//      one migration level this build knows: no view, no trigger, no extra or missing table or index, no later level;
//   3. PRAGMA integrity_check must say ok;
// and then every row of every state table must pass the rules the API writes by (snapshots.rules.ts), and the rows
// together must fit this build's real schema: they are filled into a scratch database of it, where a duplicate key
// or a reference to a row that is not there is refused as a bad row is (checkKeys). A file of an older level is
// filled into a database of that level and migrated as a database file is, then checked the same way.
// The whole check runs on a worker thread with a time bound (checkInWorker), so no file can hold the event loop.

/** A file that is not a snapshot this server can restore; the message says why (a 400 on `body`). */
export class SnapshotRefusal extends Error {}

/** What a checked file holds: the rows of this build's state tables, and the clock. */
export interface CheckedFile {
  clockMs: number;
  clockMode: 'frozen' | 'realtime';
  schemaVersion: number;
  tables: TableRows[];
}

/**
 * How long a check may take before the file is refused (docs/decisions.md#snapshot-files): 30 s, and 1 s more per MiB.
 * Once the schema is known to be plain tables, the work left is linear in the file's size (a 118 MiB file took 52 s
 * on a 2-core machine at load 39, docs/robustness.md#hostile-files); the bound stops a file SQLite would work on
 * without end, not a large honest one.
 */
export function checkTimeLimitMs(bytes: number): number {
  return 30_000 + Math.ceil(bytes / 1_048_576) * 1_000;
}

export interface LevelTable {
  name: string;
  columns: string[];
  key: 'rowid' | number[];
  /** The columns that name a row in a refusal (its primary key), or none: the rowid names it. */
  primaryKey: number[];
}

/** The file schema of one migration level: sqlite_master as an export at that level writes it. */
export interface SchemaLevel {
  version: number;
  /** `type name` -> normalised SQL ('' for SQLite's automatic indexes). */
  entries: Map<string, string>;
  tables: LevelTable[];
}

/** Whitespace and the spaces around punctuation do not make two declarations differ. */
function normalise(sql: string | null): string {
  return (sql ?? '').replace(/\s+/g, ' ').replace(/\s*([(),])\s*/g, '$1').trim();
}

function levelOf(db: Db, version: number): SchemaLevel {
  const tables = snapshotTables(db).map((name): LevelTable => {
    const info = db.prepare('SELECT pk FROM pragma_table_info(?)').all(name) as Array<{ pk: number }>;
    const primaryKey = info.flatMap((column, index) => (column.pk > 0 ? [index] : []));
    return { name, columns: columnsOf(db, name), key: keyOf(db, name), primaryKey };
  });
  const entries = new Map<string, string>([
    ['table snapshot_info', normalise(SNAPSHOT_INFO_SQL)],
    ['index sqlite_autoindex_snapshot_info_1', ''],
  ]);
  for (const table of tables) entries.set(`table ${fileTableName(table.name)}`, normalise(fileTableSql(table.name, table.columns)));
  return { version, entries, tables };
}

/** Made once per thread (a constant of the build). */
let levels: SchemaLevel[] | undefined;
/** This build's schema without its triggers as an empty database image, made with the levels: checkKeys's scratch database. */
let latestImage: Buffer | undefined;

/**
 * The file schema at every migration level, from the first to this build's (derived from src/db/migrations, so a new
 * migration adds its level by itself). A constant of the build, made once per thread (~20 ms: every migration once).
 */
export function knownLevels(): SchemaLevel[] {
  if (levels) return levels;
  const db = new Database(':memory:');
  try {
    db.pragma('foreign_keys = ON');
    const made: SchemaLevel[] = [];
    for (const version of migrations.map((migration) => migration.version).sort((a, b) => a - b)) {
      migrate(db, version);
      made.push(levelOf(db, version));
    }
    latestImage = imageWithoutTriggers(db.serialize());
    levels = made;
    return made;
  } finally {
    db.close();
  }
}

/**
 * A copy of `image` with its triggers dropped. Its triggers only keep derived tables (the list counters, the in-flight
 * sums, transaction_accounts) up to date, with upserts and INSERT OR IGNORE that no row can make fail, and a restore
 * makes those tables equal to the file's rows anyway; firing them on every transaction row made the fill about twice
 * as slow (docs/robustness.md#hostile-files), so the scratch database takes each table's rows as the file holds them.
 */
function imageWithoutTriggers(image: Buffer): Buffer {
  const db = new Database(image);
  try {
    db.transaction(() => dropTriggersAndIndexes(db))(); // dropped for good: nothing is created again
    return db.serialize();
  } finally {
    db.close();
  }
}

function refuse(message: string): never {
  throw new SnapshotRefusal(message);
}

/** Check an exported snapshot file and read its rows (this build's tables; an older file migrated). Throws SnapshotRefusal. */
export function checkSnapshotFile(bytes: Uint8Array): CheckedFile {
  if (bytes.length === 0) refuse('the body is empty; send the file from GET /_emulator/snapshots/{name}/export as application/octet-stream');
  let file: Db;
  try {
    file = new Database(rollbackImage(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)), { readonly: true });
  } catch (error) {
    refuse(`the body is not a SQLite database file (${(error as Error).message})`);
  }
  try {
    // a schema's functions and virtual tables are not trusted to run from a view or trigger (defensive mode is on)
    file.pragma('trusted_schema = OFF');
    const level = matchSchema(file);
    const integrity = file.prepare('PRAGMA integrity_check(1)').pluck().get() as string;
    if (integrity !== 'ok') refuse(`SQLite's integrity check fails: ${integrity}`);
    const info = readInfo(file, level);
    let tables = level.tables.map((table): TableRows => {
      const select = `SELECT ${table.key === 'rowid' ? 'rowid, ' : ''}${table.columns.map((column) => `"${column}"`).join(', ')} FROM "${fileTableName(table.name)}"`;
      return { name: table.name, columns: table.columns, key: table.key, rows: file.prepare(select).raw(true).all() as unknown[][] };
    });
    const latest = knownLevels().at(-1)!;
    if (level.version !== latest.version) tables = migrateTables(level.version, tables);
    checkRows(tables, latest);
    checkIdCounter(tables);
    checkKeys(tables, latest);
    return { ...info, schemaVersion: latest.version, tables };
  } catch (error) {
    if (error instanceof SnapshotRefusal) throw error;
    refuse(`the body is not a readable SQLite database file (${(error as Error).message})`);
  } finally {
    file.close();
  }
}

/**
 * An exported file that was opened as a `--db` by an older build was switched to WAL mode (header bytes 18 and 19 set to
 * 2), and SQLite cannot open a WAL-mode image from memory ("unable to open database file"). The rows are all in the main
 * file once the server that used it closed cleanly (a checkpoint), so a copy marked as a rollback-journal file (1 and 1)
 * reads as the export did. The caller's bytes are not changed.
 */
function rollbackImage(bytes: Buffer): Buffer {
  const isSqlite = bytes.length >= 100 && bytes.subarray(0, 16).toString('latin1') === 'SQLite format 3\u0000';
  if (!isSqlite || (bytes[18] !== 2 && bytes[19] !== 2)) return bytes;
  const copy = Buffer.from(bytes);
  copy[18] = 1;
  copy[19] = 1;
  return copy;
}

/** The level whose file schema the file has exactly, or a refusal naming the first difference. */
function matchSchema(file: Db): SchemaLevel {
  const rows = file.prepare('SELECT type, name, tbl_name AS owner, sql FROM sqlite_master').all() as Array<{ type: string; name: string; owner: string; sql: string | null }>;
  const view = rows.find((row) => row.type === 'view');
  if (view) refuse(`it holds a view (${view.name}); a snapshot file holds only tables`);
  const trigger = rows.find((row) => row.type === 'trigger');
  if (trigger) refuse(`it holds a trigger (${trigger.name} on ${trigger.owner}); a snapshot file holds only tables`);
  const known = knownLevels();
  const latest = known.at(-1)!.version;
  const claimed = file.pragma('user_version', { simple: true }) as number;
  if (claimed > latest) refuse(`its schema is version ${claimed}, later than this server's ${latest} (export it again from a server of this version, or run a later one)`);
  const level = known.find((candidate) => candidate.version === claimed);
  if (!level) {
    if (!rows.some((row) => row.name === 'snapshot_info')) refuse('it has no snapshot_info table (a SQLite file, but not an exported snapshot)');
    refuse(`its schema version ${claimed} is not one this build knows (1 to ${latest})`);
  }
  const found = new Map(rows.map((row) => [`${row.type} ${row.name}`, normalise(row.sql)]));
  if (!found.has('table snapshot_info')) refuse('it has no snapshot_info table (a SQLite file, but not an exported snapshot)');
  for (const [entry, sql] of level.entries) {
    const [type, name] = entry.split(' ') as [string, string];
    if (!found.has(entry)) refuse(`${type} ${name} is missing`);
    if (found.get(entry) === sql) continue;
    if (type !== 'table') refuse(`${type} ${name} is declared differently from an exported file's`);
    const columns = columnsOf(file, name);
    const expected = level.tables.find((table) => fileTableName(table.name) === name)?.columns ?? ['key', 'value'];
    if (columns.join(',') !== expected.join(',')) refuse(`table ${name} has columns ${columns.join(', ')}; expected ${expected.join(', ')}`);
    refuse(`table ${name} is declared as ${found.get(entry)}; an exported file declares ${sql}`);
  }
  const extra = rows.find((row) => !level.entries.has(`${row.type} ${row.name}`));
  if (extra) refuse(`it holds ${extra.type} ${extra.name}, which no exported file of schema version ${claimed} has`);
  return level;
}

/** The rows of `snapshot_info` an export writes (src/emulator/snapshots.service.ts). */
const INFO_KEYS = ['format', 'name', 'schema_version', 'clock_ms', 'clock_mode', 'saved_at'];

function readInfo(file: Db, level: SchemaLevel): Omit<CheckedFile, 'tables' | 'schemaVersion'> {
  const info = new Map(file.prepare('SELECT key, value FROM snapshot_info').raw(true).all() as Array<[unknown, unknown]>);
  const value = (key: string): string | undefined => {
    const found = info.get(key);
    return typeof found === 'string' ? found : undefined;
  };
  if (value('format') !== SNAPSHOT_FORMAT) refuse(`its format is "${value('format') ?? 'missing'}", expected "${SNAPSHOT_FORMAT}"`);
  if (value('schema_version') !== String(level.version)) {
    refuse(`its snapshot_info says schema version ${value('schema_version') ?? '(missing)'}, but its tables are those of version ${level.version}`);
  }
  const unknown = [...info.keys()].find((key) => typeof key !== 'string' || !INFO_KEYS.includes(key));
  if (unknown !== undefined) refuse(`its snapshot_info holds a row ${JSON.stringify(String(unknown).slice(0, 80))}; an export writes only ${INFO_KEYS.join(', ')}`);
  const clockMs = Number(value('clock_ms'));
  const clockMode = value('clock_mode');
  // docs/decisions.md#snapshot-files: the clock never leaves 0000-01-01..9999-12-31 (before 1970 included)
  if (value('clock_ms') === undefined || !Number.isSafeInteger(clockMs) || !inClockRange(clockMs) || (clockMode !== 'frozen' && clockMode !== 'realtime')) {
    refuse('its clock is missing or unreadable');
  }
  return { clockMs, clockMode };
}

/** An older file's rows, filled into a database of its level and migrated as a database file is; read back at this build's. */
function migrateTables(version: number, tables: TableRows[]): TableRows[] {
  const db = new Database(':memory:');
  try {
    db.pragma('foreign_keys = ON');
    migrate(db, version);
    try {
      restoreNewDatabase(db, tables);
      migrate(db);
    } catch (error) {
      refuse(`its rows (schema version ${version}) cannot be migrated to this server's schema: ${(error as Error).message}`);
    }
    return readTables(db);
  } finally {
    db.close();
  }
}

/** Every row of every table against the rules (snapshots.rules.ts); the first offending one is named. */
function checkRows(tables: TableRows[], latest: SchemaLevel): void {
  for (const table of tables) {
    const offset = table.key === 'rowid' ? 1 : 0;
    const primaryKey = latest.tables.find((known) => known.name === table.name)?.primaryKey ?? [];
    for (const row of table.rows) {
      // a restore reads a big table in rowid order by chunks (docs/control-plane.md#big-states): past 2^53 a rowid is
      // no longer an exact number in JavaScript, and the API never makes one
      if (offset === 1 && !Number.isSafeInteger(row[0])) refuse(`table ${fileTableName(table.name)}, row ${String(row[0])}: its rowid must be an integer from -(2^53 - 1) to 2^53 - 1`);
      const problem = rowProblem(table.name, table.columns, row, offset);
      if (problem) refuse(`table ${fileTableName(table.name)}, row ${rowLabel(table, primaryKey, row)}: ${problem}`);
    }
  }
}

/**
 * The rows together against this build's real schema (docs/robustness.md#hostile-files): filled into a scratch database
 * of it, each row refused by a PRIMARY KEY, UNIQUE, NOT NULL or CHECK constraint is named, then PRAGMA foreign_key_check
 * names the first row that refers to a row that is not there. A restore writes with foreign keys off (a sandbox's
 * tables are not written in reference order), so these would otherwise pass into the sandbox and fail its later
 * requests with a 500. The rows go in table by table with foreign keys off, so the order does not matter, into a
 * database without triggers (imageWithoutTriggers); sqlite_sequence, which has no constraint, is only checked for a name
 * held twice.
 */
function checkKeys(tables: TableRows[], latest: SchemaLevel): void {
  if (!latestImage) knownLevels();
  const db = new Database(latestImage!);
  try {
    db.pragma('foreign_keys = OFF');
    const byName = new Map(tables.map((table) => [table.name, table]));
    db.transaction(() => {
      for (const table of tables) {
        const primaryKey = latest.tables.find((known) => known.name === table.name)?.primaryKey ?? [];
        checkUniqueKeys(table, primaryKey);
        if (table.name !== 'sqlite_sequence') fillRows(db, table, primaryKey);
      }
    })();
    checkReferences(db, byName, latest);
  } finally {
    db.close();
  }
}

/** A table keyed by columns (WITHOUT ROWID, sqlite_sequence) holds each key once: a restore would keep only one of them. */
function checkUniqueKeys(table: TableRows, primaryKey: number[]): void {
  if (table.key === 'rowid') return;
  const seen = new Set<string>();
  for (const row of table.rows) {
    const key = JSON.stringify(table.key.map((index) => row[index]));
    if (seen.has(key)) refuse(`table ${fileTableName(table.name)}, row ${rowLabel(table, primaryKey, row)}: its key is held by another row too`);
    seen.add(key);
  }
}

/** A table's rows one by one, the first the schema refuses named. */
function fillRows(db: Db, table: TableRows, primaryKey: number[]): void {
  const withRowid = table.key === 'rowid';
  const columns = table.columns.map((column) => `"${column}"`).join(', ');
  const insert = db.prepare(`INSERT INTO "${table.name}" (${withRowid ? 'rowid, ' : ''}${columns}) VALUES (${table.columns.map(() => '?').join(', ')}${withRowid ? ', ?' : ''})`);
  for (const row of table.rows) {
    try {
      insert.run(row);
    } catch (error) {
      refuse(`table ${fileTableName(table.name)}, row ${rowLabel(table, primaryKey, row)}: this build's schema refuses it (${(error as Error).message})`);
    }
  }
}

/** The first row that refers to a row that is not there, named with the column and the value it refers by. */
function checkReferences(db: Db, byName: Map<string, TableRows>, latest: SchemaLevel): void {
  const violation = db.prepare('PRAGMA foreign_key_check').get() as { table: string; rowid: number | null; parent: string; fkid: number } | undefined;
  if (!violation) return;
  const table = byName.get(violation.table)!;
  const primaryKey = latest.tables.find((known) => known.name === table.name)?.primaryKey ?? [];
  const from = (db.prepare('SELECT "from" FROM pragma_foreign_key_list(?) WHERE id = ?').pluck().all(violation.table, violation.fkid) as string[]);
  const row = violation.rowid === null ? undefined : table.rows.find((candidate) => candidate[0] === violation.rowid);
  const offset = table.key === 'rowid' ? 1 : 0;
  const refersBy = from.map((column) => `${column} ${row ? JSON.stringify(row[table.columns.indexOf(column) + offset]) : ''}`.trim()).join(', ');
  const named = row ? `row ${rowLabel(table, primaryKey, row)}` : 'a row';
  refuse(`table ${fileTableName(table.name)}, ${named}: column ${refersBy} refers to a row of ${violation.parent} that is not there`);
}

/** `meta` holds the id counter once any id was drawn: every event (the outbox's rows) draws one (src/domains/webhooks/outbox.ts). */
function checkIdCounter(tables: TableRows[]): void {
  const rows = (name: string) => tables.find((table) => table.name === name)?.rows ?? [];
  const meta = tables.find((table) => table.name === 'meta');
  const keyAt = meta ? meta.columns.indexOf('key') + (meta.key === 'rowid' ? 1 : 0) : 0;
  if (rows('outbox').length > 0 && !rows('meta').some((row) => row[keyAt] === 'id_counter')) {
    refuse('table meta has no id_counter row, yet ids were drawn (table outbox has rows); a restore would hand the same ids out again');
  }
}

/** A row as a refusal names it: its primary key when it has a text one, and its rowid when it has one. */
function rowLabel(table: TableRows, primaryKey: number[], row: unknown[]): string {
  const shown = (value: unknown) => (typeof value === 'string' ? JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value) : String(value));
  if (table.key !== 'rowid') return table.key.map((index) => `${table.columns[index]} ${shown(row[index])}`).join(', ');
  const values = primaryKey.map((index) => row[index + 1]);
  if (values.length === 0 || (values.length === 1 && typeof values[0] === 'number')) return `rowid ${String(row[0])}`;
  return `${primaryKey.map((index, n) => `${table.columns[index]} ${shown(values[n])}`).join(', ')} (rowid ${String(row[0])})`;
}

// ---- the worker: the check off the main thread, bounded in time ----

/** What the worker answers. */
export type CheckAnswer = { ok: true; file: CheckedFile } | { ok: false; refusal: string } | { ok: false; failure: string };

/** Rows per message of a served check's answer (snapshots.worker.ts): about 20 ms of the parent's time each. */
export const ROWS_PER_PIECE = 2_000;

/** What a served check's thread sends: a refusal or failure whole; a checked file as its head, its rows, its end. */
export type ServedMessage =
  | { kind: 'answer'; answer: CheckAnswer }
  | { kind: 'head'; head: Omit<CheckedFile, 'tables'>; tables: Array<Omit<TableRows, 'rows'>> }
  | { kind: 'rows'; table: number; rows: unknown[][] }
  | { kind: 'end' };

/**
 * The worker's entry (snapshots.worker.ts): next to this module from source (tests) and from tsc's output (dist/src),
 * and next to the bundle as dist/snapshots.worker.js (scripts/bundle.mjs writes it there).
 */
function workerEntry(): URL {
  return new URL(import.meta.url.endsWith('.ts') ? './snapshots.worker.ts' : './snapshots.worker.js', import.meta.url);
}

/**
 * A check thread. From source it needs only the TypeScript loader among the parent's flags (a test runner's other
 * import hooks would each be loaded again in every thread); built, the parent's flags as they are.
 */
function startWorker(workerData: Record<string, unknown>, transferList: Transferable[] = []): Worker {
  const fromSource = import.meta.url.endsWith('.ts');
  const execArgv = fromSource ? process.execArgv.filter((flag) => flag.includes('ts-loader')) : process.execArgv;
  const worker = new Worker(workerEntry(), { workerData, execArgv, transferList: transferList as never });
  worker.unref();
  return worker;
}

function timedOut(limitMs: number): SnapshotRefusal {
  return new SnapshotRefusal(`checking it took longer than ${limitMs / 1000} s, the bound on one file (docs/robustness.md#hostile-files)`);
}

function answered(answer: CheckAnswer): CheckedFile {
  if (answer.ok) return answer.file;
  if ('refusal' in answer) throw new SnapshotRefusal(answer.refusal);
  throw new Error(`snapshot check failed: ${answer.failure}`);
}

export interface CheckOptions {
  limitMs?: number;
  /** Tests only: the worker waits until word 0 of this shared array is no longer 0 before it checks anything. */
  hold?: Int32Array;
}

/**
 * One idle check thread, kept for the next upload: starting a thread and loading the check's modules costs more than
 * checking a small file. Per process, like the schema image (db/connection.ts): a thread holds no sandbox's state. A
 * thread that passed its time bound is ended, never kept.
 */
const idleWorkers: Worker[] = [];

/**
 * Checks wait their turn (docs/robustness.md#off-thread-work): one at a time, since a check holds its file several
 * times over in memory, and up to 16 waiting; a check's time bound starts when it runs. Process-wide, like the idle
 * thread.
 */
export const SNAPSHOT_CHECKS = createJobQueue(1, 16);

/**
 * Check a file on a worker thread; the event loop goes on meanwhile. Refused past `limitMs`, the worker ended. A 429
 * when 16 checks are already waiting.
 */
export function checkInWorker(bytes: Buffer, options: CheckOptions = {}): Promise<CheckedFile> {
  return SNAPSHOT_CHECKS.run(
    () => checkOnWorker(bytes, options),
    () => errors.tooManyRequests(`${SNAPSHOT_CHECKS.waiting} snapshot files are already waiting to be checked; send this one again in a moment`),
  );
}

function checkOnWorker(bytes: Buffer, { limitMs = checkTimeLimitMs(bytes.length), hold }: CheckOptions): Promise<CheckedFile> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const worker = idleWorkers.pop() ?? startWorker({ serve: true });
    const settle = (outcome: () => CheckedFile, reusable: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      worker.removeListener('message', onMessage).removeListener('error', onError).removeListener('exit', onExit);
      if (reusable && idleWorkers.length === 0) idleWorkers.push(worker);
      else void worker.terminate();
      try {
        resolve(outcome());
      } catch (error) {
        reject(error as Error);
      }
    };
    // each message taken in its own turn of the event loop, then the thread may send the next (snapshots.worker.ts)
    const taken = new Int32Array(new SharedArrayBuffer(4));
    let file: CheckedFile | undefined;
    const take = () => {
      Atomics.add(taken, 0, 1);
      Atomics.notify(taken, 0);
    };
    const onMessage = (message: ServedMessage) => {
      if (message.kind === 'answer' || message.kind === 'end') {
        take(); // the thread goes back to waiting for the next file
        return settle(() => (message.kind === 'answer' ? answered(message.answer) : file!), true);
      }
      if (message.kind === 'head') file = { ...message.head, tables: message.tables.map((table) => ({ ...table, rows: [] })) };
      else for (const row of message.rows) file!.tables[message.table]!.rows.push(row);
      setImmediate(take);
    };
    const onError = (error: Error) => settle(() => { throw new Error(`snapshot check failed: ${error.message}`); }, false);
    const onExit = (code: number) => settle(() => { throw new Error(`snapshot check ended without an answer (exit code ${code})`); }, false);
    const timer = setTimeout(() => settle(() => { throw timedOut(limitMs); }, false), limitMs);
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
    worker.postMessage({ bytes, taken: taken.buffer, ...(hold ? { hold: hold.buffer } : {}) });
  });
}

/**
 * The same check, waited for synchronously (`--snapshot FILE` at start, before the server answers anything): the
 * main thread sleeps on a shared word until the worker answers or the bound passes.
 */
export function checkInWorkerSync(bytes: Buffer, limitMs = checkTimeLimitMs(bytes.length)): CheckedFile {
  const { port1, port2 } = new MessageChannel();
  const done = new Int32Array(new SharedArrayBuffer(4));
  const worker = startWorker({ bytes, port: port2, done: done.buffer }, [port2]);
  try {
    Atomics.wait(done, 0, 0, limitMs);
    const message = receiveMessageOnPort(port1);
    if (!message) throw timedOut(limitMs);
    return answered(message.message as CheckAnswer);
  } finally {
    port1.close();
    void worker.terminate();
  }
}

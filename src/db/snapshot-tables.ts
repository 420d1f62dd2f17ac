import { prepared, type Db } from './connection.js';
import { stateTables } from './migrate.js';
import { createAgain, dropTriggersAndIndexes } from './triggers.js';
import { runNow, type Steps } from '../lib/turns.js';

// The tables of a snapshot as rows, read from a database and written back into one (docs/control-plane.md#snapshots):
// used by the snapshots of a sandbox (src/snapshots/snapshot.ts), by the control plane's export (src/emulator/snapshots.service.ts)
// and by the check of a file, which migrates an older file's rows on a database of its own (src/snapshots/snapshots.check.ts).

/** Marks an exported file as ours; a file without it is refused on upload. */
export const SNAPSHOT_FORMAT = 'service-sandbox-snapshot/1';

/** The table of an exported file that says what it is (format, schema version, clock). */
export const SNAPSHOT_INFO_SQL = 'CREATE TABLE snapshot_info (key TEXT PRIMARY KEY, value TEXT NOT NULL)';

/** The table an exported file stores `sqlite_sequence` under (SQLite reserves the `sqlite_` names). */
export const SEQUENCE_TABLE = 'snapshot_sequence';

/** The name a table has in an exported file. */
export function fileTableName(table: string): string {
  return table === 'sqlite_sequence' ? SEQUENCE_TABLE : table;
}

/**
 * How an exported file declares a table: its columns without types or constraints (the file is a copy of the rows, not
 * a second database to run on). The check of an uploaded file expects exactly this text (src/snapshots/snapshots.check.ts).
 */
export function fileTableSql(table: string, columns: string[]): string {
  return `CREATE TABLE "${fileTableName(table)}" (${columns.map((column) => `"${column}"`).join(', ')})`;
}

/**
 * The rows of one table as `raw()` arrays in column order (no per-row objects to build or walk). A table
 * with a rowid keeps it in front of each row (`key: 'rowid'`); a WITHOUT ROWID table (the list counters) and
 * `sqlite_sequence` are keyed by the positions of their key columns.
 */
export interface TableRows {
  name: string;
  columns: string[];
  key: 'rowid' | number[];
  rows: unknown[][];
}


export function schemaVersionOf(db: Db): number {
  return db.pragma('user_version', { simple: true }) as number;
}

export function columnsOf(db: Db, table: string): string[] {
  return (db.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as Array<{ name: string }>).map((row) => row.name);
}

/** How a table's rows are told apart: its rowid, or its primary-key columns (WITHOUT ROWID, sqlite_sequence by name). */
export function keyOf(db: Db, table: string): 'rowid' | number[] {
  if (table === 'sqlite_sequence') return [0];
  const definition = (db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) as { sql: string }).sql;
  if (!/\bWITHOUT\s+ROWID\b/i.test(definition)) return 'rowid';
  const info = db.prepare('SELECT cid, pk FROM pragma_table_info(?)').all(table) as Array<{ cid: number; pk: number }>;
  return info.filter((column) => column.pk > 0).sort((a, b) => a.pk - b.pk).map((column) => column.cid);
}

export function readRows(db: Db, table: string, key: 'rowid' | number[]): unknown[][] {
  return prepared(db, key === 'rowid' ? `SELECT rowid, * FROM "${table}"` : `SELECT * FROM "${table}"`).raw(true).all() as unknown[][];
}

/** The tables a snapshot holds: every state table and, when it exists, sqlite_sequence. */
export function snapshotTables(db: Db): string[] {
  return [...stateTables(db), ...(hasTable(db, 'sqlite_sequence') ? ['sqlite_sequence'] : [])];
}

/** Read every state table in one read transaction, so the snapshot is one consistent instant. */
export function readTables(db: Db): TableRows[] {
  return runNow(readTablesSteps(db));
}

/** readTables as steps: a big table is read a chunk at a time (docs/control-plane.md#big-states), in one savepoint. */
export function* readTablesSteps(db: Db): Steps<TableRows[]> {
  db.exec('SAVEPOINT read_tables');
  try {
    const tables: TableRows[] = [];
    for (const name of snapshotTables(db)) {
      const key = keyOf(db, name);
      const rows: unknown[][] = [];
      yield* rowsInChunks(db, name, key, (chunk) => {
        for (const row of chunk) rows.push(row);
      });
      tables.push({ name, columns: columnsOf(db, name), key, rows });
    }
    return tables;
  } finally {
    if (db.open && db.inTransaction) db.exec('RELEASE read_tables');
  }
}

/**
 * Thrown when something else wrote on the connection while a save or restore taking turns had its transaction open
 * (docs/control-plane.md#big-states): the save would be torn, the restore would keep or collide with that write.
 */
export class WrittenMeanwhileError extends Error {}

/** A point where the event loop may take a turn, inside a transaction no one else may write in: checked on return. */
function* turn(db: Db): Steps {
  const before = changesOf(db);
  yield;
  if (!db.open) return; // the caller's runner stops the steps
  if (!db.inTransaction) throw new WrittenMeanwhileError('the transaction was ended by another statement on its connection');
  if (changesOf(db) !== before) throw new WrittenMeanwhileError('another write was made on the connection while the state was being read or written');
}

function changesOf(db: Db): number {
  return prepared<{ n: number }>(db, 'SELECT total_changes() AS n').get()!.n;
}

/**
 * Every row of a table, handed to `each` a chunk at a time with a step between two, CHUNK_ROWS at a time: a table
 * with a rowid in rowid order, a WITHOUT ROWID table (the list counters, `transaction_accounts`) in the order of its
 * primary key, each chunk found from the last key of the one before (a search of that key's b-tree, no sort). Only
 * sqlite_sequence, a few rows with no key of its own, is read at once.
 */
function* rowsInChunks(db: Db, table: string, key: 'rowid' | number[], each: (rows: unknown[][]) => void): Steps {
  if (table === 'sqlite_sequence') {
    each(readRows(db, table, key));
    return;
  }
  const names = key === 'rowid' ? [] : columnsOf(db, table);
  const keyColumns = key === 'rowid' ? ['rowid'] : key.map((i) => `"${names[i]}"`);
  const order = keyColumns.join(', ');
  const selected = key === 'rowid' ? 'rowid, *' : '*';
  const first = prepared(db, `SELECT ${selected} FROM "${table}" ORDER BY ${order} LIMIT ${CHUNK_ROWS}`).raw(true);
  const after = prepared(db, `SELECT ${selected} FROM "${table}" WHERE (${order}) > (${keyColumns.map(() => '?').join(', ')}) ORDER BY ${order} LIMIT ${CHUNK_ROWS}`).raw(true);
  const keyPositions = key === 'rowid' ? [0] : key;
  for (let last: unknown[] | null = null; ; ) {
    const rows = (last ? after.all(...last) : first.all()) as unknown[][];
    each(rows);
    if (rows.length < CHUNK_ROWS) return;
    const end = rows[rows.length - 1]!;
    last = keyPositions.map((i) => end[i]);
    yield* turn(db);
  }
}

export function hasTable(db: Db, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}


/** Fill a bare database (start-up, or an older file being migrated) with a snapshot's tables. */
export function restoreNewDatabase(db: Db, tables: TableRows[]): void {
  writeTables(db, tables, triggerOrder(db, tables.map((table) => table.name)));
}

export function writeTables(db: Db, tables: TableRows[], order: string[]): void {
  runNow(writeTablesSteps(db, tables, order));
}

/**
 * writeTables as steps (src/lib/turns.ts): a bulk write yields between chunks of rows, inside one transaction that
 * stays open across the turns (docs/control-plane.md#big-states); a small one runs in a single step.
 */
export function* writeTablesSteps(db: Db, tables: TableRows[], order: string[]): Steps {
  const byName = new Map(tables.map((table) => [table.name, table]));
  const ordered = order.map((name) => byName.get(name)!);
  db.pragma('foreign_keys = OFF');
  try {
    if (involvesManyRows(db, ordered)) yield* bulkSteps(db, ordered);
    else db.transaction(() => ordered.forEach((table) => applyPlan(db, runNow(planSteps(db, table)))))();
  } finally {
    if (db.open) db.pragma('foreign_keys = ON');
  }
}

/**
 * Rows (saved and present together) past which a restore is written in bulk (docs/control-plane.md#big-states):
 * without the schema's triggers and, for a table that takes more writes than this, without its indexes.
 */
export const BULK_RESTORE_ROWS = 5_000;

/** Rows read, compared or written between two points where the event loop may take a turn. */
export const CHUNK_ROWS = 1_024;

function involvesManyRows(db: Db, tables: TableRows[]): boolean {
  let rows = 0;
  for (const table of tables) {
    rows += table.rows.length + prepared<{ n: number }>(db, `SELECT count(*) AS n FROM "${table.name}"`).get()!.n;
    if (rows > BULK_RESTORE_ROWS) return true;
  }
  return false;
}

/**
 * docs/control-plane.md#big-states: every table is compared first, then written with the triggers dropped (each row
 * written fired the list counters' triggers, whose writes were then compared and written back: the tables they
 * write into are restored from the snapshot like the others), the indexes of a table taking many writes dropped
 * and built again once (instead of one random insert per row and index: with a 2 MiB page cache, a file database's
 * index pages went to its WAL over and over). All in one savepoint (a transaction of its own unless the caller has
 * one): a failure, or the steps ended part way, leaves the database as it was.
 */
function* bulkSteps(db: Db, tables: TableRows[]): Steps {
  // its own transaction takes the write lock at once: a read that turned into a write after another process had
  // committed would fail (SQLITE_BUSY_SNAPSHOT) after seconds of comparing
  const own = !db.inTransaction;
  db.exec(own ? 'BEGIN IMMEDIATE' : 'SAVEPOINT bulk_write');
  let written = false;
  try {
    // sqlite_sequence last: inserting into an AUTOINCREMENT table writes it too
    const plans: TablePlan[] = [];
    for (const table of tables) if (table.name !== 'sqlite_sequence') plans.push(yield* planSteps(db, table));
    const rebuilt = new Set(plans.filter((plan) => plan.deletes.length + plan.inserts.length > BULK_RESTORE_ROWS).map((plan) => plan.table));
    const dropped = dropTriggersAndIndexes(db, rebuilt);
    for (const plan of plans) yield* applySteps(db, plan);
    for (const object of dropped) {
      createAgain(db, object); // an index over many rows is the longest single step
      yield* turn(db);
    }
    for (const table of tables) if (table.name === 'sqlite_sequence') applyPlan(db, runNow(planSteps(db, table)));
    db.exec(own ? 'COMMIT' : 'RELEASE bulk_write');
    written = true;
  } finally {
    // (SQLite may have rolled the transaction back itself, on a full disk: then there is nothing to undo)
    if (db.open && !written && db.inTransaction) db.exec(own ? 'ROLLBACK' : 'ROLLBACK TO bulk_write; RELEASE bulk_write');
  }
}

/** What makes one table equal to its saved rows: the keys of the rows to delete, the saved rows to insert. */
interface TablePlan {
  table: string;
  deleteSql: string;
  deletes: unknown[][];
  insertSql: string;
  inserts: unknown[][];
}

/** Compare one table with its saved rows (reading only), so only the rows that differ are touched. */
function* planSteps(db: Db, table: TableRows): Generator<void, TablePlan, void> {
  const { name, columns, key } = table;
  const keyPositions = key === 'rowid' ? [0] : key;
  const offset = key === 'rowid' ? 1 : 0; // column i of a row is at i + offset
  const single = keyPositions.length === 1 ? keyPositions[0]! : -1;
  // rowids are numbers and a one-column key is used as it is; a key of several columns is joined by NUL
  const keyText = (row: unknown[]): unknown => (single >= 0 ? row[single] : keyPositions.map((i) => String(row[i])).join('\u0000'));
  const saved = new Map<unknown, unknown[]>();
  for (let i = 0; i < table.rows.length; i += 1) {
    saved.set(keyText(table.rows[i]!), table.rows[i]!);
    if (i % CHUNK_ROWS === CHUNK_ROWS - 1) yield* turn(db);
  }
  const quoted = columns.map((column) => `"${column}"`);
  const where = key === 'rowid' ? 'rowid = ?' : key.map((i) => `${quoted[i]} = ?`).join(' AND ');
  // Rows that are gone or changed are deleted first and changed ones inserted again as saved: updating in
  // place could collide with a unique key another row still holds until it is rewritten too.
  const deletes: unknown[][] = [];
  const compare = (rows: unknown[][]) => {
    for (const row of rows) {
      const id = keyText(row);
      const want = saved.get(id);
      if (want && sameRow(row, want)) saved.delete(id);
      else deletes.push(keyPositions.map((i) => row[i]));
    }
  };
  yield* rowsInChunks(db, name, key, compare);
  return {
    table: name,
    deleteSql: `DELETE FROM "${name}" WHERE ${where}`,
    deletes,
    insertSql: `INSERT INTO "${name}" (${key === 'rowid' ? 'rowid, ' : ''}${quoted.join(', ')}) VALUES (${[...Array(columns.length + offset)].map(() => '?').join(', ')})`,
    inserts: [...saved.values()],
  };
}

function applyPlan(db: Db, plan: TablePlan): void {
  runNow(applySteps(db, plan));
}

function* applySteps(db: Db, plan: TablePlan): Steps {
  if (plan.deletes.length > 0) {
    const remove = prepared(db, plan.deleteSql);
    for (let i = 0; i < plan.deletes.length; i += 1) {
      remove.run(plan.deletes[i]);
      if (i % CHUNK_ROWS === CHUNK_ROWS - 1) yield* turn(db);
    }
  }
  if (plan.inserts.length > 0) {
    const insert = prepared(db, plan.insertSql);
    for (let i = 0; i < plan.inserts.length; i += 1) {
      insert.run(plan.inserts[i]);
      if (i % CHUNK_ROWS === CHUNK_ROWS - 1) yield* turn(db);
    }
  }
}

function sameRow(a: unknown[], b: unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i += 1) {
    const x = a[i];
    const y = b[i];
    if (x === y) continue;
    if (Buffer.isBuffer(x) && Buffer.isBuffer(y) && x.equals(y)) continue;
    return false;
  }
  return true;
}


/**
 * Tables in an order where every table comes after the tables whose triggers write into it (transactions
 * before the list counters), so a table is compared only once the triggers that write into it have fired.
 */
export function triggerOrder(db: Db, tables: string[]): string[] {
  const triggers = db.prepare("SELECT tbl_name AS owner, sql FROM sqlite_master WHERE type = 'trigger'").all() as Array<{ owner: string; sql: string }>;
  const writes = new Map<string, Set<string>>();
  for (const { owner, sql: text } of triggers) {
    const body = text.slice(text.search(/\bBEGIN\b/i));
    for (const match of body.matchAll(/\b(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)\s+"?(\w+)"?/gi)) {
      if (match[1] !== owner) (writes.get(owner) ?? writes.set(owner, new Set()).get(owner)!).add(match[1]!);
    }
  }
  const incoming = new Map(tables.map((table) => [table, 0]));
  for (const targets of writes.values()) for (const target of targets) if (incoming.has(target)) incoming.set(target, incoming.get(target)! + 1);
  const ordered: string[] = [];
  const ready = tables.filter((table) => incoming.get(table) === 0);
  while (ready.length > 0) {
    const table = ready.shift()!;
    ordered.push(table);
    for (const target of writes.get(table) ?? []) {
      if (!incoming.has(target)) continue;
      incoming.set(target, incoming.get(target)! - 1);
      if (incoming.get(target) === 0) ready.push(target);
    }
  }
  if (ordered.length !== tables.length) throw new Error('snapshot restore: the triggers write in a cycle; no safe order');
  return ordered;
}


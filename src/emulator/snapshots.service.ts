import Database from 'better-sqlite3';
import type { AppContext } from '../context.js';
import { prepared, type Db } from '../db/connection.js';
import { stateTables } from '../db/migrate.js';
import { errors, ServiceError } from '../core/errors.js';
import { notifyOutbox } from '../domains/webhooks/outbox.js';
import { markEqualIfTracking, markEqualTo, tablesThatMayDiffer } from './snapshots.tracking.js';
import type { StateSlot } from '../runtime/sandbox-runtime.js';

// Snapshots of the whole sandbox state (docs/control-plane.md#snapshots, docs/decisions.md#snapshots): every
// table (which holds the id sequence in `meta`, the webhook endpoint in `programmes`, jobs, outbox and
// deliveries) plus the emulated clock. Kept in memory per sandbox (a runtime slot: docs/architecture.md#runtime);
// exported and imported as one SQLite file.

/**
 * The rows of one table as `raw()` arrays in column order (no per-row objects to build or walk). A table
 * with a rowid keeps it in front of each row (`key: 'rowid'`); a WITHOUT ROWID table (the list counters) and
 * `sqlite_sequence` are keyed by the positions of their key columns.
 */
interface TableRows {
  name: string;
  columns: string[];
  key: 'rowid' | number[];
  rows: unknown[][];
}

export interface Snapshot {
  name: string;
  /** Emulated instant the state was taken at; the clock reads it again after a restore. */
  clockMs: number;
  clockMode: 'frozen' | 'realtime';
  schemaVersion: number;
  /** Real wall-clock time the snapshot was saved or uploaded (ISO 8601). */
  savedAt: string;
  tables: TableRows[];
}

export interface SnapshotSummary {
  name: string;
  clock: string;
  clockMode: 'frozen' | 'realtime';
  schemaVersion: number;
  savedAt: string;
  tables: number;
  rows: number;
}

/** Marks an exported file as ours; a file without it is refused on upload. */
export const SNAPSHOT_FORMAT = 'service-sandbox-snapshot/1';
export const SNAPSHOT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const NAME_RULE = 'a snapshot name is 1-64 characters: letters, digits, ".", "_" or "-", starting with a letter or digit';

interface SnapshotsState {
  /** The saved snapshots by name. */
  store: Map<string, Snapshot>;
  /** triggerOrder, kept while the schema and the snapshot's tables are the same. */
  order: { schemaVersion: number; tables: string; order: string[] } | null;
}

/**
 * Saved snapshots: a restore or reset never deletes them (docs/decisions.md#snapshots); a new session starts with
 * none (it may start from one of the root's, docs/sessions.md#what-a-session-starts-from).
 */
export const snapshotsSlot: StateSlot<SnapshotsState> = {
  name: 'emulator.snapshots',
  create: () => ({ store: new Map(), order: null }),
  reset: 'keep',
  carriedBySnapshots: false,
  newSession: 'fresh',
};

function storeOf(ctx: AppContext): Map<string, Snapshot> {
  return ctx.runtime.get(snapshotsSlot).store;
}

export function checkSnapshotName(name: string, fieldRef = 'name'): string {
  if (!SNAPSHOT_NAME.test(name)) throw errors.field('InvalidValue', fieldRef, `"${name}" is not a valid snapshot name: ${NAME_RULE}`);
  return name;
}

export function summarize(snapshot: Snapshot): SnapshotSummary {
  return {
    name: snapshot.name,
    clock: new Date(snapshot.clockMs).toISOString(),
    clockMode: snapshot.clockMode,
    schemaVersion: snapshot.schemaVersion,
    savedAt: snapshot.savedAt,
    tables: snapshot.tables.length,
    rows: snapshot.tables.reduce((sum, table) => sum + table.rows.length, 0),
  };
}

function schemaVersionOf(db: Db): number {
  return db.pragma('user_version', { simple: true }) as number;
}

function columnsOf(db: Db, table: string): string[] {
  return (db.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as Array<{ name: string }>).map((row) => row.name);
}

/** How a table's rows are told apart: its rowid, or its primary-key columns (WITHOUT ROWID, sqlite_sequence by name). */
function keyOf(db: Db, table: string): 'rowid' | number[] {
  if (table === 'sqlite_sequence') return [0];
  const definition = (db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) as { sql: string }).sql;
  if (!/\bWITHOUT\s+ROWID\b/i.test(definition)) return 'rowid';
  const info = db.prepare('SELECT cid, pk FROM pragma_table_info(?)').all(table) as Array<{ cid: number; pk: number }>;
  return info.filter((column) => column.pk > 0).sort((a, b) => a.pk - b.pk).map((column) => column.cid);
}

function readRows(db: Db, table: string, key: 'rowid' | number[]): unknown[][] {
  return prepared(db, key === 'rowid' ? `SELECT rowid, * FROM "${table}"` : `SELECT * FROM "${table}"`).raw(true).all() as unknown[][];
}

/** The tables a snapshot holds: every state table and, when it exists, sqlite_sequence. */
function snapshotTables(db: Db): string[] {
  return [...stateTables(db), ...(hasTable(db, 'sqlite_sequence') ? ['sqlite_sequence'] : [])];
}

/** Read every state table in one read transaction, so the snapshot is one consistent instant. */
function readTables(db: Db): TableRows[] {
  const read = db.transaction(() =>
    snapshotTables(db).map((name) => {
      const key = keyOf(db, name);
      return { name, columns: columnsOf(db, name), key, rows: readRows(db, name, key) };
    }),
  );
  return read();
}

function hasTable(db: Db, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

/** Take the current state as a snapshot (not stored). */
export function captureSnapshot(ctx: AppContext, name: string): Snapshot {
  return {
    name,
    clockMs: ctx.clock.nowMs(),
    clockMode: ctx.clock.state().mode,
    schemaVersion: schemaVersionOf(ctx.db),
    savedAt: new Date(ctx.clock.realNowMs()).toISOString(),
    tables: readTables(ctx.db),
  };
}

/** POST /_emulator/snapshots: save the state under a name (replacing a snapshot of that name). */
export function saveSnapshot(ctx: AppContext, name: string): { snapshot: SnapshotSummary; replaced: boolean } {
  checkSnapshotName(name);
  const store = storeOf(ctx);
  const replaced = store.has(name);
  const snapshot = captureSnapshot(ctx, name);
  markEqualTo(ctx, snapshot);
  store.set(name, snapshot);
  return { snapshot: summarize(snapshot), replaced };
}

export function listSnapshots(ctx: AppContext): SnapshotSummary[] {
  return [...storeOf(ctx).values()].map(summarize).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export function getSnapshot(ctx: AppContext, name: string): Snapshot {
  const snapshot = storeOf(ctx).get(name);
  if (!snapshot) {
    const known = [...storeOf(ctx).keys()].sort();
    throw errors.notFound(`No snapshot named "${name}"${known.length ? `; saved: ${known.join(', ')}` : '; none saved yet (POST /_emulator/snapshots { "name": ... })'}`);
  }
  return snapshot;
}

export function deleteSnapshot(ctx: AppContext, name: string): void {
  getSnapshot(ctx, name);
  storeOf(ctx).delete(name);
}

/**
 * Put a snapshot's rows back and the clock at its instant (a deliberate move backwards, like reset:
 * docs/decisions.md#snapshots).
 */
export function restoreSnapshot(ctx: AppContext, snapshot: Snapshot): void {
  restoreTables(ctx, snapshot);
  ctx.clock.freezeAt(snapshot.clockMs);
  if (snapshot.clockMode === 'realtime') ctx.clock.resume();
  notifyOutbox(ctx); // deliveries that were due in the snapshot go out again
}

/**
 * The table part of a restore, in one transaction with foreign keys off (as reset does): on a sandbox's database
 * (`restoreTables`, comparing only the tables its tracking says may differ), or on a bare one at start-up, before the
 * context exists (`restoreNewDatabase`). Each table is compared with the snapshot row by row
 * (rowid or key): rows added or changed since are deleted, and the saved version of changed and missing rows
 * inserted. A restore
 * therefore costs what changed, not the size of the state: emptying and refilling every table fired the list
 * counters' triggers on every transaction row, three quarters of the time of a restore of the default state
 * (docs/benchmarks.md#snapshots). The triggers still fire on the rows that change, and the counter tables,
 * which come after `transactions` in trigger order, are then compared like any other table, so every table
 * ends exactly as saved.
 */
export function restoreTables(ctx: AppContext, snapshot: Snapshot): void {
  writeTables(ctx.db, snapshot, tablesThatMayDiffer(ctx, snapshot, orderOf(ctx, snapshot)));
  markEqualIfTracking(ctx, snapshot);
}

export function restoreNewDatabase(db: Db, snapshot: Snapshot): void {
  writeTables(db, snapshot, triggerOrder(db, snapshot.tables.map((table) => table.name)));
}

function writeTables(db: Db, snapshot: Snapshot, order: string[]): void {
  const byName = new Map(snapshot.tables.map((table) => [table.name, table]));
  db.pragma('foreign_keys = OFF');
  try {
    db.transaction(() => {
      for (const name of order) writeBack(db, byName.get(name)!);
    })();
  } finally {
    db.pragma('foreign_keys = ON');
  }
}

/** Make one table equal to its saved rows, touching only the rows that differ. */
function writeBack(db: Db, table: TableRows): void {
  const { name, columns, key } = table;
  const keyPositions = key === 'rowid' ? [0] : key;
  const offset = key === 'rowid' ? 1 : 0; // column i of a row is at i + offset
  const single = keyPositions.length === 1 ? keyPositions[0]! : -1;
  // rowids are numbers and a one-column key is used as it is; a key of several columns is joined by NUL
  const keyText = (row: unknown[]): unknown => (single >= 0 ? row[single] : keyPositions.map((i) => String(row[i])).join('\u0000'));
  const saved = new Map<unknown, unknown[]>(table.rows.map((row) => [keyText(row), row]));
  const quoted = columns.map((column) => `"${column}"`);
  const where = key === 'rowid' ? 'rowid = ?' : key.map((i) => `${quoted[i]} = ?`).join(' AND ');
  const keyValues = (row: unknown[]) => keyPositions.map((i) => row[i]);
  // Rows that are gone or changed are deleted first and changed ones inserted again as saved: updating in
  // place could collide with a unique key another row still holds until it is rewritten too.
  for (const row of readRows(db, name, key)) {
    const id = keyText(row);
    const want = saved.get(id);
    if (want && sameRow(row, want)) saved.delete(id);
    else prepared(db, `DELETE FROM "${name}" WHERE ${where}`).run(keyValues(row));
  }
  if (saved.size === 0) return;
  const insert = prepared(
    db,
    `INSERT INTO "${name}" (${key === 'rowid' ? 'rowid, ' : ''}${quoted.join(', ')}) VALUES (${[...Array(columns.length + offset)].map(() => '?').join(', ')})`,
  );
  for (const row of saved.values()) insert.run(row);
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

/** triggerOrder, kept per sandbox while its schema and the snapshot's tables are the same. */
function orderOf(ctx: AppContext, snapshot: Snapshot): string[] {
  const tables = snapshot.tables.map((table) => table.name).join(',');
  const state = ctx.runtime.get(snapshotsSlot);
  const known = state.order;
  if (known && known.schemaVersion === snapshot.schemaVersion && known.tables === tables) return known.order;
  const order = triggerOrder(ctx.db, snapshot.tables.map((table) => table.name));
  state.order = { schemaVersion: snapshot.schemaVersion, tables, order };
  return order;
}

/**
 * Tables in an order where every table comes after the tables whose triggers write into it (transactions
 * before the list counters), so a table is compared only once the triggers that write into it have fired.
 */
function triggerOrder(db: Db, tables: string[]): string[] {
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

/** POST /_emulator/snapshots/{name}/restore */
export function restoreNamedSnapshot(ctx: AppContext, name: string): { snapshot: SnapshotSummary; durationMs: number } {
  const snapshot = getSnapshot(ctx, name);
  const started = process.hrtime.bigint();
  restoreSnapshot(ctx, snapshot);
  markEqualTo(ctx, snapshot); // restored by name: the next restore of it compares what changed (snapshots.tracking.ts)
  return { snapshot: summarize(snapshot), durationMs: Number(process.hrtime.bigint() - started) / 1e6 };
}

/**
 * GET /_emulator/snapshots/{name}/export: the snapshot as a SQLite database file holding the state tables
 * (same names and columns) and a `snapshot_info` table (format, schema version, clock). Open it with any
 * SQLite tool to look inside.
 */
export function exportSnapshot(ctx: AppContext, name: string): Buffer {
  const snapshot = getSnapshot(ctx, name);
  const file = new Database(':memory:');
  try {
    file.transaction(() => {
      file.exec('CREATE TABLE snapshot_info (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
      const info = file.prepare('INSERT INTO snapshot_info (key, value) VALUES (?, ?)');
      info.run('format', SNAPSHOT_FORMAT);
      info.run('name', snapshot.name);
      info.run('schema_version', String(snapshot.schemaVersion));
      info.run('clock_ms', String(snapshot.clockMs));
      info.run('clock_mode', snapshot.clockMode);
      info.run('saved_at', snapshot.savedAt);
      for (const table of snapshot.tables) {
        // Columns without constraints: the file is a copy of the rows, not a second database to run on.
        // Rows keep their rowids, so a restore from an uploaded file compares rows as one from memory does.
        const target = table.name === 'sqlite_sequence' ? 'snapshot_sequence' : table.name;
        const quoted = table.columns.map((column) => `"${column}"`);
        file.exec(`CREATE TABLE "${target}" (${quoted.join(', ')})`);
        const withRowid = table.key === 'rowid';
        const insert = file.prepare(
          `INSERT INTO "${target}" (${withRowid ? 'rowid, ' : ''}${quoted.join(', ')}) VALUES (${[...Array(quoted.length + (withRowid ? 1 : 0))].map(() => '?').join(', ')})`,
        );
        for (const row of table.rows) insert.run(row);
      }
      file.pragma(`user_version = ${snapshot.schemaVersion}`);
    })();
    return file.serialize();
  } finally {
    file.close();
  }
}

/** Why an uploaded file is not a snapshot this server can restore: a 400 on the body. */
function badFile(message: string): ServiceError {
  return errors.field('InvalidValue', 'body', `Not a snapshot this server can restore: ${message}`);
}

/**
 * Read an exported snapshot file (PUT /_emulator/snapshots/{name}, `--snapshot FILE`). Checked before
 * anything is stored: a SQLite file, our format marker, this server's schema version, and every state
 * table with this server's columns.
 */
export function parseSnapshotFile(db: Db, bytes: Buffer, name: string, savedAtMs: number): Snapshot {
  if (bytes.length === 0) throw badFile('the body is empty; send the file from GET /_emulator/snapshots/{name}/export as application/octet-stream');
  let file: Db;
  try {
    file = new Database(bytes, { readonly: true });
  } catch (error) {
    throw badFile(`the body is not a SQLite database file (${(error as Error).message})`);
  }
  try {
    let info: Map<string, string>;
    try {
      info = new Map((file.prepare('SELECT key, value FROM snapshot_info').all() as Array<{ key: string; value: string }>).map((row) => [row.key, row.value]));
    } catch (error) {
      const message = (error as Error).message;
      throw badFile(/no such table/.test(message) ? 'it has no snapshot_info table (a SQLite file, but not an exported snapshot)' : `the body is not a readable SQLite database file (${message})`);
    }
    if (info.get('format') !== SNAPSHOT_FORMAT) throw badFile(`its format is "${info.get('format') ?? 'missing'}", expected "${SNAPSHOT_FORMAT}"`);
    const version = Number(info.get('schema_version'));
    const ours = schemaVersionOf(db);
    if (version !== ours) {
      throw badFile(`it was exported at schema version ${info.get('schema_version')}; this server is at version ${ours} (export it again from a server of this version)`);
    }
    const clockMs = Number(info.get('clock_ms'));
    const clockMode = info.get('clock_mode');
    if (!Number.isSafeInteger(clockMs) || clockMs < 0 || (clockMode !== 'frozen' && clockMode !== 'realtime')) throw badFile('its clock is missing or unreadable');
    const tables: TableRows[] = [];
    for (const table of snapshotTables(db)) {
      const stored = table === 'sqlite_sequence' ? 'snapshot_sequence' : table;
      const expected = columnsOf(db, table);
      const found = columnsOf(file, stored);
      if (found.length === 0) throw badFile(`table ${stored} is missing`);
      if (expected.join(',') !== found.join(',')) throw badFile(`table ${stored} has columns ${found.join(', ')}; expected ${expected.join(', ')}`);
      const key = keyOf(db, table);
      const select = `SELECT ${key === 'rowid' ? 'rowid, ' : ''}${expected.map((column) => `"${column}"`).join(', ')} FROM "${stored}"`;
      tables.push({ name: table, columns: expected, key, rows: file.prepare(select).raw(true).all() as unknown[][] });
    }
    return {
      name,
      clockMs,
      clockMode,
      schemaVersion: version,
      savedAt: new Date(savedAtMs).toISOString(),
      tables,
    };
  } finally {
    file.close();
  }
}

/** PUT /_emulator/snapshots/{name}: store an uploaded file under a name. */
export function importSnapshot(ctx: AppContext, name: string, bytes: Buffer): { snapshot: SnapshotSummary; replaced: boolean } {
  checkSnapshotName(name, 'name');
  const snapshot = parseSnapshotFile(ctx.db, bytes, name, ctx.clock.realNowMs());
  const store = storeOf(ctx);
  const replaced = store.has(name);
  store.set(name, snapshot);
  return { snapshot: summarize(snapshot), replaced };
}

/**
 * `--snapshot FILE` (docs/configuration.md#snapshot), or the snapshot a session was created from: the state the
 * sandbox starts from instead of the fixtures, and returns to on every reset.
 */
export const startingSnapshotSlot: StateSlot<Snapshot | null> = {
  name: 'emulator.startingSnapshot',
  create: () => null,
  reset: 'keep',
  carriedBySnapshots: false,
  newSession: 'given',
};

export function setStartingSnapshot(ctx: AppContext, snapshot: Snapshot): void {
  ctx.runtime.set(startingSnapshotSlot, snapshot);
}

export function startingSnapshot(ctx: AppContext): Snapshot | undefined {
  return ctx.runtime.get(startingSnapshotSlot) ?? undefined;
}

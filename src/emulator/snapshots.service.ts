import Database from 'better-sqlite3';
import type { AppContext } from '../context.js';
import { errors, ServiceError } from '../core/errors.js';
import { notifyOutbox } from '../domains/webhooks/outbox.js';
import { markEqualIfTracking, markEqualTo, tablesThatMayDiffer } from './snapshots.tracking.js';
import type { StateSlot } from '../runtime/sandbox-runtime.js';
import { checkInWorker, checkInWorkerSync, SnapshotRefusal, type CheckedFile } from './snapshots.check.js';
import { fileTableName, fileTableSql, SNAPSHOT_FORMAT, SNAPSHOT_INFO_SQL, readTables, schemaVersionOf, triggerOrder, writeTables, type TableRows } from './snapshots.tables.js';

// Snapshots of the whole sandbox state (docs/control-plane.md#snapshots, docs/decisions.md#snapshots): every
// table (which holds the id sequence in `meta`, the webhook endpoint in `programmes`, jobs, outbox and
// deliveries) plus the emulated clock. Kept in memory per sandbox (a runtime slot: docs/architecture.md#runtime);
// exported and imported as one SQLite file.

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
  writeTables(ctx.db, snapshot.tables, tablesThatMayDiffer(ctx, snapshot, orderOf(ctx, snapshot)));
  markEqualIfTracking(ctx, snapshot);
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
      file.exec(SNAPSHOT_INFO_SQL);
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
        const target = fileTableName(table.name);
        const quoted = table.columns.map((column) => `"${column}"`);
        file.exec(fileTableSql(table.name, table.columns));
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

function asSnapshot(checked: CheckedFile, name: string, savedAtMs: number): Snapshot {
  return { name, clockMs: checked.clockMs, clockMode: checked.clockMode, schemaVersion: checked.schemaVersion, savedAt: new Date(savedAtMs).toISOString(), tables: checked.tables };
}

function refused(error: unknown): unknown {
  return error instanceof SnapshotRefusal ? badFile(error.message) : error;
}

/**
 * `--snapshot FILE` at start: the checks of an upload (snapshots.check.ts), waited for before the server answers
 * anything. A refusal is a 400-style ServiceError that start-up turns into one line.
 */
export function readSnapshotFileAtStart(bytes: Buffer, name: string, savedAtMs: number): Snapshot {
  try {
    return asSnapshot(checkInWorkerSync(bytes), name, savedAtMs);
  } catch (error) {
    throw refused(error);
  }
}

/**
 * PUT /_emulator/snapshots/{name}: store an uploaded file under a name once it passes every check
 * (docs/robustness.md#hostile-files), made on a worker thread while the server goes on answering. Nothing of a refused
 * file is stored, and the sandbox's state is not touched either way.
 */
export async function importSnapshot(ctx: AppContext, name: string, bytes: Buffer): Promise<{ snapshot: SnapshotSummary; replaced: boolean }> {
  checkSnapshotName(name, 'name');
  const receivedAtMs = ctx.clock.realNowMs();
  let checked: CheckedFile;
  try {
    checked = await checkInWorker(bytes);
  } catch (error) {
    throw refused(error);
  }
  const snapshot = asSnapshot(checked, name, receivedAtMs);
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

import Database from 'better-sqlite3';
import type { AppContext } from '../context.js';
import { errors } from '../core/errors.js';
import { markEqualTo } from '../snapshots/snapshots.tracking.js';
import type { StateSlot } from '../runtime/sandbox-runtime.js';
import { checkInWorker, type CheckedFile } from '../snapshots/snapshots.check.js';
import { fileTableName, fileTableSql, SNAPSHOT_FORMAT, SNAPSHOT_INFO_SQL } from '../db/snapshot-tables.js';
import { asSnapshot, captureSnapshot, refused, restoreSnapshot, type Snapshot } from '../snapshots/snapshot.js';

// The control plane's snapshots (docs/control-plane.md#snapshots, docs/decisions.md#snapshots): each sandbox's saved
// snapshots by name, kept in memory (a runtime slot: docs/architecture.md#runtime), saved, restored, exported and
// imported as one SQLite file. Taking, restoring and checking a snapshot is sandbox machinery (src/snapshots/snapshot.ts),
// which a sandbox starts with without entering this folder (docs/decisions.md#sandbox-machinery).

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
}

/**
 * Saved snapshots: a restore or reset never deletes them (docs/decisions.md#snapshots); a new session starts with
 * none (it may start from one of the root's, docs/sessions.md#what-a-session-starts-from).
 */
export const snapshotsSlot: StateSlot<SnapshotsState> = {
  name: 'emulator.snapshots',
  create: () => ({ store: new Map() }),
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


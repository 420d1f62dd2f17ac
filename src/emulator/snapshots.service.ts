import Database from 'better-sqlite3';
import type { AppContext } from '../context.js';
import { errors } from '../core/errors.js';
import { markEqualTo } from '../snapshots/snapshots.tracking.js';
import { notifyOutbox } from '../domains/webhooks/outbox.js';
import type { StateSlot } from '../runtime/sandbox-runtime.js';
import type { BackgroundService } from '../domains/domain.js';
import { checkInWorker, type CheckedFile } from '../snapshots/snapshots.check.js';
import { fileTableName, fileTableSql, SNAPSHOT_FORMAT, SNAPSHOT_INFO_SQL, WrittenMeanwhileError } from '../db/snapshot-tables.js';
import { asSnapshot, captureSnapshotSteps, refused, restoreSnapshotSteps, rowsIn, type Snapshot } from '../snapshots/snapshot.js';
import { holdSandbox, SandboxClosedError } from '../scheduler/scheduler.js';
import { runInTurns, type Steps } from '../lib/turns.js';
import { makeRoomForRows, releaseSnapshot, rowBytesHeld, snapshotBudget } from '../snapshots/snapshot-budget.js';

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
  /** Each saved snapshot's size as the process budget counts it (snapshotBytes), by name. */
  sizes: Map<string, number>;
  /** The sandbox closed and gave its bytes back: a save or upload that finishes later stores nothing. */
  closed: boolean;
}

/**
 * docs/control-plane.md#snapshots: a saved snapshot is a copy of every row in the JS heap (0.24 MB with the
 * default fixtures, 137 MB with 20,000 deposits), and saves without a bound ended the process with a V8 heap
 * out-of-memory. Each sandbox keeps at most this many; one more is a 409.
 */
export const MAX_SNAPSHOTS_PER_SANDBOX = 32;
/**
 * What a snapshot's rows weigh, counted cheaply in one walk: a text's characters, 8 bytes a number, a blob's bytes,
 * and 8 more a value. The heap holds them about twice over (measured: 0.24 MB of heap for 126,411 bytes counted here with the
 * default fixtures); the measure is meant to be stable and proportional, not exact.
 */
export function snapshotBytes(tables: Snapshot['tables']): number {
  let bytes = 0;
  for (const table of tables) {
    for (const row of table.rows) {
      for (const value of row) {
        bytes += 8;
        if (typeof value === 'string') bytes += value.length;
        else if (value instanceof Uint8Array) bytes += value.byteLength;
        else if (typeof value === 'number' || typeof value === 'bigint') bytes += 8;
      }
    }
  }
  return bytes;
}

const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
const FREE_ROOM = 'delete one with DELETE /_emulator/snapshots/{name} (in a session, under its base URL), or end a session that holds some';

/**
 * Saved snapshots: a restore or reset never deletes them (docs/decisions.md#snapshots); a new session starts with
 * none (it may start from one of the root's, docs/sessions.md#what-a-session-starts-from).
 */
export const snapshotsSlot: StateSlot<SnapshotsState> = {
  name: 'emulator.snapshots',
  create: () => ({ store: new Map(), sizes: new Map(), closed: false }),
  reset: 'keep',
  carriedBySnapshots: false,
  newSession: 'fresh',
};

function storeOf(ctx: AppContext): Map<string, Snapshot> {
  return ctx.runtime.get(snapshotsSlot).store;
}

/** Refusals that need no copy of the state: the sandbox's count is reached, or the process budget is spent already. */
function checkRoomBefore(ctx: AppContext, name: string): void {
  const state = ctx.runtime.get(snapshotsSlot);
  if (state.store.has(name)) return; // a replacement takes the place of the one it replaces
  if (state.store.size >= MAX_SNAPSHOTS_PER_SANDBOX) {
    throw errors.conflict(
      `This sandbox holds ${state.store.size} snapshots, the most it keeps (${MAX_SNAPSHOTS_PER_SANDBOX}); delete one with DELETE /_emulator/snapshots/{name} ` +
        `(saved: ${[...state.store.keys()].sort().join(', ')}), or save under one of those names to replace it`,
    );
  }
  if (rowBytesHeld() >= snapshotBudget.limitBytes) throw budgetSpent(0);
}

function budgetSpent(bytes: number): Error {
  return errors.conflict(
    `The saved snapshots of this server (the root's and every session's) hold ${mib(rowBytesHeld())} of rows, and the most they may hold is ` +
      `${mib(snapshotBudget.limitBytes)}${bytes > 0 ? `; this one would add ${mib(bytes)}` : ''}: ${FREE_ROOM}`,
  );
}

/** Store a snapshot under its name, counting it in the process budget (a replaced one's bytes given back); 409 past it. */
function keep(ctx: AppContext, snapshot: Snapshot): boolean {
  const state = ctx.runtime.get(snapshotsSlot);
  // docs/control-plane.md#snapshots: an upload checked while its session was ended would hold its bytes for good
  if (state.closed) throw errors.sandboxEnded('the snapshot was made or checked');
  checkRoomBefore(ctx, snapshot.name);
  const bytes = snapshotBytes(snapshot.tables);
  const previous = state.store.get(snapshot.name);
  const replacedBytes = state.sizes.get(snapshot.name) ?? 0;
  // refused only when the rows do not fit even without the session images (a cache), and then none is given up
  if (rowBytesHeld() - replacedBytes + bytes > snapshotBudget.limitBytes) throw budgetSpent(bytes);
  // the replaced one's image goes with it (its bytes given back): sessions from the new one take an image of their own
  if (previous) releaseSnapshot(previous);
  makeRoomForRows(bytes - replacedBytes);
  state.store.set(snapshot.name, snapshot);
  state.sizes.set(snapshot.name, bytes);
  snapshotBudget.heldBytes += bytes - replacedBytes;
  return previous !== undefined;
}

function forget(state: SnapshotsState, name: string): void {
  snapshotBudget.heldBytes -= state.sizes.get(name) ?? 0;
  const snapshot = state.store.get(name);
  if (snapshot) releaseSnapshot(snapshot);
  state.sizes.delete(name);
  state.store.delete(name);
}

/** A sandbox that closes (a session ended, the server stopped) gives its snapshots' bytes back to the process budget. */
export const snapshotsBudgetService: BackgroundService = (ctx) => () => {
  const state = ctx.runtime.get(snapshotsSlot);
  state.closed = true;
  for (const name of [...state.store.keys()]) forget(state, name);
};

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
    rows: rowsIn(snapshot),
  };
}

/** POST /_emulator/snapshots: save the state under a name (replacing a snapshot of that name). */
export async function saveSnapshot(ctx: AppContext, name: string): Promise<{ snapshot: SnapshotSummary; replaced: boolean }> {
  checkSnapshotName(name);
  checkRoomBefore(ctx, name); // before the copy of every row, which is what the limits spare
  // docs/control-plane.md#big-states: a big state is read a chunk at a time while the sandbox is held; stored and
  // noted as equal before the hold ends, so no request of the sandbox writes in between
  const saved = await heldInTurns(ctx, 'a snapshot was saved', async (stillWanted) => {
    const snapshot = await runInTurns(captureSnapshotSteps(ctx, name), stillWanted);
    const replaced = keep(ctx, snapshot);
    markEqualTo(ctx, snapshot);
    return { snapshot, replaced };
  });
  return { snapshot: summarize(saved.snapshot), replaced: saved.replaced };
}

/**
 * Work held on the sandbox (holdSandbox); the sandbox closed meanwhile is the 404 of a session that ended, and a write
 * that landed in its transaction all the same a 409 (docs/control-plane.md#big-states).
 */
export async function heldInTurns<T>(ctx: AppContext, during: string, work: (stillWanted: () => Error | null) => Promise<T>): Promise<T> {
  try {
    return await holdSandbox(ctx, work);
  } catch (error) {
    if (error instanceof SandboxClosedError) throw errors.sandboxEnded(during);
    if (error instanceof WrittenMeanwhileError) {
      throw errors.conflict(`Another request of this sandbox wrote while ${during}, so nothing was done: try again (${error.message})`);
    }
    throw error;
  } finally {
    if (ctx.db.open) notifyOutbox(ctx); // no attempt started during the hold: whatever is due goes out now
  }
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
  forget(ctx.runtime.get(snapshotsSlot), name);
}

/** POST /_emulator/snapshots/{name}/restore */
/**
 * POST /_emulator/snapshots/{name}/restore, holding the sandbox while it writes: a big restore takes turns of the event
 * loop, and every other sandbox is answered meanwhile (docs/control-plane.md#big-states).
 */
export async function restoreNamedSnapshot(ctx: AppContext, name: string): Promise<{ snapshot: SnapshotSummary; durationMs: number }> {
  const snapshot = getSnapshot(ctx, name);
  const started = process.hrtime.bigint();
  await heldInTurns(ctx, 'a snapshot was restored', async (stillWanted) => {
    await runInTurns(restoreSnapshotSteps(ctx, snapshot), stillWanted);
    markEqualTo(ctx, snapshot); // restored by name: the next restore of it compares what changed (snapshots.tracking.ts)
  });
  return { snapshot: summarize(snapshot), durationMs: Number(process.hrtime.bigint() - started) / 1e6 };
}

/**
 * GET /_emulator/snapshots/{name}/export: the snapshot as a SQLite database file holding the state tables
 * (same names and columns) and a `snapshot_info` table (format, schema version, clock). Open it with any
 * SQLite tool to look inside.
 */
export function exportSnapshot(ctx: AppContext, name: string): Promise<Buffer> {
  const snapshot = getSnapshot(ctx, name);
  // docs/control-plane.md#big-states: the file is written a chunk of rows at a time; the snapshot is never changed
  // once taken, so nothing is held meanwhile
  return runInTurns(exportSteps(snapshot));
}

function* exportSteps(snapshot: Snapshot): Steps<Buffer> {
  const file = new Database(':memory:');
  try {
    file.exec('BEGIN');
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
      for (let i = 0; i < table.rows.length; i += 1) {
        insert.run(table.rows[i]);
        if (i % EXPORT_CHUNK_ROWS === EXPORT_CHUNK_ROWS - 1) yield;
      }
    }
    file.pragma(`user_version = ${snapshot.schemaVersion}`);
    file.exec('COMMIT');
    return file.serialize();
  } finally {
    file.close(); // a failure part way: the file goes, with what it held
  }
}

/** Rows written into an exported file between two points where the event loop may take a turn. */
const EXPORT_CHUNK_ROWS = 1_024;

/**
 * PUT /_emulator/snapshots/{name}: store an uploaded file under a name once it passes every check
 * (docs/robustness.md#hostile-files), made on a worker thread while the server goes on answering. Nothing of a refused
 * file is stored, and the sandbox's state is not touched either way.
 */
export async function importSnapshot(ctx: AppContext, name: string, bytes: Buffer): Promise<{ snapshot: SnapshotSummary; replaced: boolean }> {
  checkSnapshotName(name, 'name');
  checkRoomBefore(ctx, name); // before the file is checked on its thread
  const receivedAtMs = ctx.clock.realNowMs();
  let checked: CheckedFile;
  try {
    checked = await checkInWorker(bytes);
  } catch (error) {
    throw refused(error);
  }
  const snapshot = asSnapshot(checked, name, receivedAtMs);
  const replaced = keep(ctx, snapshot); // counted again: other saves may have come in while the file was checked
  return { snapshot: summarize(snapshot), replaced };
}


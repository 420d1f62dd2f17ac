import type { AppContext } from '../context.js';
import { errors, type ServiceError } from '../core/errors.js';
import { notifyOutbox } from '../domains/webhooks/outbox.js';
import { rearmJobsTimer, stateReplaced } from '../scheduler/scheduler.js';
import type { StateSlot } from '../runtime/sandbox-runtime.js';
import { readTablesSteps, schemaVersionOf, triggerOrder, writeTablesSteps, type TableRows } from '../db/snapshot-tables.js';
import { runNow, type Steps } from '../lib/turns.js';
import { markEqualIfTracking, snapshotTrackingSlot, tablesThatMayDiffer } from './snapshots.tracking.js';
import { checkInWorkerSync, SnapshotRefusal, type CheckedFile } from './snapshots.check.js';

// A snapshot of a sandbox's whole state (docs/control-plane.md#snapshots, docs/decisions.md#snapshots): every table
// (which holds the id sequence in `meta`, the webhook endpoint in `programmes`, jobs, outbox and deliveries) plus the
// emulated clock; taken, restored, and read from a checked file. This is sandbox machinery, below the control plane
// (docs/architecture.md#layers, docs/decisions.md#sandbox-machinery): a sandbox starts from a snapshot (`--snapshot`,
// a session's) without entering src/emulator, whose snapshots.service.ts keeps the saved snapshots of each sandbox and
// answers /_emulator/snapshots.

export interface Snapshot {
  name: string;
  /** Emulated instant the state was taken at; the clock reads it again after a restore. */
  clockMs: number;
  clockMode: 'frozen' | 'realtime';
  schemaVersion: number;
  /** Real wall-clock time the snapshot was saved or uploaded (ISO 8601). */
  savedAt: string;
  tables: TableRows[];
  /**
   * The database sessions started from this snapshot open, taken from the first of them (docs/sessions.md#how-fast)
   * while the process budget has room (snapshot-budget.ts). A snapshot saved again under its name is a new object, so
   * no session opens the image of a snapshot that was replaced.
   */
  sessionImage?: Buffer;
  /** Deleted, replaced, or closed with its sandbox (releaseSnapshot): no image is kept for it any more. */
  released?: boolean;
}

/** How many rows a snapshot holds, every table's together. */
export function rowsIn(snapshot: Snapshot): number {
  return snapshot.tables.reduce((sum, table) => sum + table.rows.length, 0);
}

/** Take the current state as a snapshot (not stored). */
export function captureSnapshot(ctx: AppContext, name: string): Snapshot {
  return runNow(captureSnapshotSteps(ctx, name));
}

/** captureSnapshot as steps: a big state is read a chunk at a time (docs/control-plane.md#big-states). */
export function* captureSnapshotSteps(ctx: AppContext, name: string): Steps<Snapshot> {
  const taken = {
    name,
    clockMs: ctx.clock.nowMs(),
    clockMode: ctx.clock.state().mode,
    schemaVersion: schemaVersionOf(ctx.db),
    savedAt: new Date(ctx.clock.realNowMs()).toISOString(),
  };
  return { ...taken, tables: yield* readTablesSteps(ctx.db) };
}

/**
 * Put a snapshot's rows back and the clock at its instant (a deliberate move backwards, like reset:
 * docs/decisions.md#snapshots).
 */
export function restoreSnapshot(ctx: AppContext, snapshot: Snapshot): void {
  runNow(restoreSnapshotSteps(ctx, snapshot));
}

/** restoreSnapshot as steps: a big restore yields between chunks of rows (docs/control-plane.md#big-states). */
export function* restoreSnapshotSteps(ctx: AppContext, snapshot: Snapshot): Steps {
  // attempts under way are of deliveries the restore replaces (docs/webhooks.md#reset): forgotten before the rows are
  // written, so no result of theirs is recorded into a restore that takes turns (none starts during one)
  // (docs/control-plane.md#a-write-after-a-wait: nor does a write a handler prepared before it land in the restored state)
  stateReplaced(ctx);
  yield* restoreTablesSteps(ctx, snapshot);
  ctx.clock.freezeAt(snapshot.clockMs);
  if (snapshot.clockMode === 'realtime') ctx.clock.resume();
  notifyOutbox(ctx); // deliveries that were due in the snapshot go out again
  rearmJobsTimer(ctx); // and its pending jobs run when they come due (docs/decisions.md#scheduler-wake-up)
}

/**
 * The table part of a restore, in one transaction with foreign keys off (as reset does): on a sandbox's database
 * (`restoreTablesSteps`, comparing only the tables its tracking says may differ), or on a bare one at start-up, before the
 * context exists (`restoreNewDatabase`). Each table is compared with the snapshot row by row
 * (rowid or key): rows added or changed since are deleted, and the saved version of changed and missing rows
 * inserted. A restore
 * therefore costs what changed, not the size of the state: emptying and refilling every table fired the list
 * counters' triggers on every transaction row, three quarters of the time of a restore of the default state
 * (docs/benchmarks.md#snapshots). The triggers still fire on the rows that change, and the counter tables,
 * which come after `transactions` in trigger order, are then compared like any other table, so every table
 * ends exactly as saved.
 */
export function* restoreTablesSteps(ctx: AppContext, snapshot: Snapshot): Steps {
  yield* writeTablesSteps(ctx.db, snapshot.tables, tablesThatMayDiffer(ctx, snapshot, orderOf(ctx, snapshot)));
  markEqualIfTracking(ctx, snapshot);
}

/** triggerOrder, kept per sandbox while its schema and the snapshot's tables are the same. */
function orderOf(ctx: AppContext, snapshot: Snapshot): string[] {
  const tables = snapshot.tables.map((table) => table.name).join(',');
  const state = ctx.runtime.get(snapshotTrackingSlot);
  const known = state.order;
  if (known && known.schemaVersion === snapshot.schemaVersion && known.tables === tables) return known.order;
  const order = triggerOrder(ctx.db, snapshot.tables.map((table) => table.name));
  state.order = { schemaVersion: snapshot.schemaVersion, tables, order };
  return order;
}

/** Why an uploaded file is not a snapshot this server can restore: a 400 on the body. */
function badFile(message: string): ServiceError {
  return errors.field('InvalidValue', 'body', `Not a snapshot this server can restore: ${message}`);
}

export function asSnapshot(checked: CheckedFile, name: string, savedAtMs: number): Snapshot {
  return { name, clockMs: checked.clockMs, clockMode: checked.clockMode, schemaVersion: checked.schemaVersion, savedAt: new Date(savedAtMs).toISOString(), tables: checked.tables };
}

/** A refusal of the file check as the 400 a client gets; any other error as it is. */
export function refused(error: unknown): unknown {
  return error instanceof SnapshotRefusal ? badFile(error.message) : error;
}

/**
 * `--snapshot FILE` at start: the checks of an upload (snapshots.check.ts, the same as PUT /_emulator/snapshots/{name}), waited for before the server answers
 * anything. A refusal is a 400-style ServiceError that start-up turns into one line.
 */
/** The largest snapshot file read (docs/control-plane.md#snapshots): an upload's body limit, and `--snapshot FILE`'s. */
export const SNAPSHOT_FILE_LIMIT = 512 * 1024 * 1024;

export function readSnapshotFileAtStart(bytes: Buffer, name: string, savedAtMs: number): Snapshot {
  try {
    return asSnapshot(checkInWorkerSync(bytes), name, savedAtMs);
  } catch (error) {
    throw refused(error);
  }
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

import { prepared, type Db } from '../db/connection.js';
import { stateTables } from '../db/migrate.js';
import type { AppContext } from '../context.js';
import type { StateSlot } from '../runtime/sandbox-runtime.js';

// Which tables changed since the state last equalled a snapshot, so restoring the snapshot a suite restores before
// every test compares those tables only (docs/control-plane.md#snapshots, docs/benchmarks.md#snapshots). Once a
// database handle saves or restores a snapshot, TEMP triggers on every state table note the tables written (one
// guarded insert per row written; a temp table lives with the connection and in its transactions, so a write
// rolled back un-notes itself). What is known of the notes is a runtime slot of the sandbox that owns the handle
// (docs/architecture.md#runtime): one context per database handle. The notes are trusted only while no other connection has committed to the file
// (`PRAGMA data_version` unchanged): two processes on one file fall back to comparing every table.

interface Tracking {
  /** The snapshot the state equalled when the notes were last cleared. */
  equalTo: object | undefined;
  dataVersion: number;
}

/**
 * Kept across reset (the triggers note the reset's writes like any other) and snapshot restores; a new session has none.
 * Beside the notes, the order a restore writes tables in (triggerOrder), kept while the schema and the snapshot's
 * tables are the same (src/snapshots/snapshot.ts).
 */
export const snapshotTrackingSlot: StateSlot<{ tracking: Tracking | null; order: { schemaVersion: number; tables: string; order: string[] } | null }> = {
  name: 'emulator.snapshotTracking',
  create: () => ({ tracking: null, order: null }),
  reset: 'keep',
  carriedBySnapshots: false,
  newSession: 'fresh',
};

function dataVersion(db: Db): number {
  return db.pragma('data_version', { simple: true }) as number;
}

function startTracking(ctx: AppContext): Tracking {
  const slot = ctx.runtime.get(snapshotTrackingSlot);
  if (slot.tracking) return slot.tracking;
  const db = ctx.db;
  db.transaction(() => {
    db.exec('CREATE TEMP TABLE IF NOT EXISTS snapshot_changed_tables (name TEXT PRIMARY KEY) WITHOUT ROWID');
    for (const table of stateTables(db)) {
      const quoted = table.replace(/"/g, '""');
      const literal = table.replace(/'/g, "''");
      for (const event of ['INSERT', 'UPDATE', 'DELETE']) {
        db.exec(
          `CREATE TEMP TRIGGER IF NOT EXISTS "snapshot_changed_${quoted}_${event.toLowerCase()}" AFTER ${event} ON main."${quoted}" ` +
            // a plain INSERT guarded by NOT EXISTS: inside a trigger, OR IGNORE gives way to the outer statement's
            // conflict policy (an upsert's would make the note a UNIQUE failure)
            `BEGIN INSERT INTO temp.snapshot_changed_tables (name) SELECT '${literal}' ` +
            `WHERE NOT EXISTS (SELECT 1 FROM temp.snapshot_changed_tables WHERE name = '${literal}'); END`,
        );
      }
    }
  })();
  slot.tracking = { equalTo: undefined, dataVersion: dataVersion(db) };
  return slot.tracking;
}

/**
 * The state now equals `snapshot` (just saved, or restored by name): forget the notes and count from here. The
 * first call on a handle creates the triggers (about 2 ms), so only the control plane's save and restore start
 * tracking; a session started from a snapshot or `--snapshot` at start-up do not pay for it.
 */
export function markEqualTo(ctx: AppContext, snapshot: object): void {
  noteEqual(ctx.db, startTracking(ctx), snapshot);
}

/** As markEqualTo, on a handle that tracks already (any restore); otherwise nothing. */
export function markEqualIfTracking(ctx: AppContext, snapshot: object): void {
  const tracking = ctx.runtime.get(snapshotTrackingSlot).tracking;
  if (tracking) noteEqual(ctx.db, tracking, snapshot);
}

function noteEqual(db: Db, tracking: Tracking, snapshot: object): void {
  prepared(db, 'DELETE FROM temp.snapshot_changed_tables').run();
  tracking.equalTo = snapshot;
  tracking.dataVersion = dataVersion(db);
}

/**
 * The tables of `order` that may differ from `snapshot`: every one, unless the state last equalled this very
 * snapshot and only this connection has written since; then the noted ones (sqlite_sequence, which takes no
 * triggers, always).
 */
export function tablesThatMayDiffer(ctx: AppContext, snapshot: object, order: string[]): string[] {
  const db = ctx.db;
  const tracking = ctx.runtime.get(snapshotTrackingSlot).tracking;
  if (!tracking || tracking.equalTo !== snapshot || tracking.dataVersion !== dataVersion(db)) return order;
  const changed = new Set((prepared<{ name: string }>(db, 'SELECT name FROM temp.snapshot_changed_tables').all()).map((row) => row.name));
  return order.filter((name) => name === 'sqlite_sequence' || changed.has(name));
}

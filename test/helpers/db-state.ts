import { createHash } from 'node:crypto';
import type { Db } from '../../src/db/connection.js';
import { stateTables } from '../../src/db/migrate.js';

// A cheap fingerprint of every state table (docs/robustness.md#fuzzing-testhttpfuzztestts: "the database is unchanged by a
// rejected request"): per table, its row count and a SHA-256 over its rows. Everything that lives in SQLite is
// covered, the id counter in `meta` included, so a rejected request that drew an id would show. The request
// journal is in memory and not part of it.

export type Fingerprint = Map<string, string>;

export function fingerprint(db: Db): Fingerprint {
  const out: Fingerprint = new Map();
  for (const table of stateTables(db).sort()) {
    const hash = createHash('sha256');
    let count = 0;
    for (const row of db.prepare(`SELECT * FROM "${table.replace(/"/g, '""')}"`).raw().iterate() as Iterable<unknown[]>) {
      count += 1;
      for (const cell of row) {
        if (Buffer.isBuffer(cell)) hash.update(`b${cell.length}:`).update(cell);
        else hash.update(`${typeof cell === 'string' ? 's' : 'v'}${String(cell).length}:${String(cell)}`);
      }
      hash.update('\n');
    }
    out.set(table, `${count}:${hash.digest('hex').slice(0, 16)}`);
  }
  return out;
}

/** Tables whose fingerprint differs, with both values; empty when equal. */
export function diffFingerprints(before: Fingerprint, after: Fingerprint): string[] {
  const tables = new Set([...before.keys(), ...after.keys()]);
  const changed: string[] = [];
  for (const table of tables) {
    if (before.get(table) !== after.get(table)) changed.push(`${table} (${before.get(table) ?? 'absent'} -> ${after.get(table) ?? 'absent'})`);
  }
  return changed;
}

/**
 * SQLite's count of rows inserted, updated or deleted on this connection (triggers included, rolled-back
 * statements included). Unchanged across a request means the request wrote nothing, so the full
 * fingerprint is only needed when it moved.
 */
export function changeCount(db: Db): number {
  return (db.prepare('SELECT total_changes() AS n').get() as { n: number }).n;
}

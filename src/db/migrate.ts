import type { Db } from './db.js';
import { migrations } from './migrations/index.js';

// Numbered migrations tracked with PRAGMA user_version; each runs in its own transaction. `upTo` stops at a level (the
// schema an older build wrote: src/snapshots/snapshots.check.ts).
export function migrate(db: Db, upTo = Number.POSITIVE_INFINITY): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  const sorted = [...migrations].sort((a, b) => a.version - b.version);
  for (const migration of sorted) {
    if (migration.version <= current || migration.version > upTo) continue;
    db.transaction(() => {
      db.exec(typeof migration.sql === 'function' ? migration.sql(db) : migration.sql);
      db.pragma(`user_version = ${migration.version}`);
    })();
  }
}

/** Tables holding emulator state (everything except the migration bookkeeping), for reset. */
export function stateTables(db: Db): string[] {
  return (
    db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as Array<{ name: string }>
  ).map((row) => row.name);
}

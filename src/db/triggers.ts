import type { Db } from './db.js';

/**
 * Run `write` with the schema's triggers dropped, and the indexes of the tables in `rebuilt`, and create them again
 * after it, inside the caller's transaction (a failure rolls the drop back with everything else;
 * docs/control-plane.md#big-states). Only for writes that leave every table the triggers write into exactly as
 * wanted on their own: a restore, which rewrites those tables from the snapshot too, and clearing every table. An
 * index built again checks its UNIQUE rule then. The indexes SQLite makes for a table's own PRIMARY KEY and UNIQUE
 * constraints stay, as do the snapshot tracking's TEMP triggers (src/snapshots/snapshots.tracking.ts).
 */
export function withoutTriggers(db: Db, write: () => void, rebuilt: ReadonlySet<string> = new Set()): void {
  if (!db.inTransaction) throw new Error('withoutTriggers runs inside a transaction');
  const objects = (
    db.prepare("SELECT type, name, tbl_name AS owner, sql FROM main.sqlite_master WHERE type IN ('trigger', 'index') AND sql IS NOT NULL ORDER BY rowid").all() as Array<{
      type: string;
      name: string;
      owner: string;
      sql: string;
    }>
  ).filter((object) => object.type === 'trigger' || rebuilt.has(object.owner));
  for (const object of objects) db.exec(`DROP ${object.type === 'trigger' ? 'TRIGGER' : 'INDEX'} main."${object.name.replace(/"/g, '""')}"`);
  write();
  for (const object of objects) db.exec(object.sql);
}

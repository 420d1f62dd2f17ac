import type { Db } from './db.js';

/** A trigger or index dropped for a bulk write, with the statement that creates it again. */
export interface DroppedObject {
  type: string;
  name: string;
  sql: string;
}

/**
 * Drop the schema's triggers, and the indexes of the tables in `rebuilt`, for a bulk write (docs/control-plane.md#big-states);
 * `createAgain` puts them back. Inside the caller's transaction only, so a failure rolls the drop back with
 * everything else. Only for writes that leave every table the triggers write into exactly as wanted on their own: a
 * restore, which rewrites those tables from the snapshot too, and clearing every table. An index built again checks
 * its UNIQUE rule then. The indexes SQLite makes for a table's own PRIMARY KEY and UNIQUE constraints stay, as do the
 * snapshot tracking's TEMP triggers (src/snapshots/snapshots.tracking.ts).
 */
export function dropTriggersAndIndexes(db: Db, rebuilt: ReadonlySet<string> = new Set()): DroppedObject[] {
  if (!db.inTransaction) throw new Error('triggers and indexes are dropped inside a transaction only');
  const objects = (
    db.prepare("SELECT type, name, tbl_name AS owner, sql FROM main.sqlite_master WHERE type IN ('trigger', 'index') AND sql IS NOT NULL ORDER BY rowid").all() as Array<
      DroppedObject & { owner: string }
    >
  ).filter((object) => object.type === 'trigger' || rebuilt.has(object.owner));
  for (const object of objects) db.exec(`DROP ${object.type === 'trigger' ? 'TRIGGER' : 'INDEX'} main."${object.name.replace(/"/g, '""')}"`);
  return objects.map(({ type, name, sql }) => ({ type, name, sql }));
}

export function createAgain(db: Db, object: DroppedObject): void {
  db.exec(object.sql);
}

/** `write` between dropTriggersAndIndexes and putting everything back, at once (resetState's clearing). */
export function withoutTriggers(db: Db, write: () => void, rebuilt: ReadonlySet<string> = new Set()): void {
  const dropped = dropTriggersAndIndexes(db, rebuilt);
  write();
  for (const object of dropped) createAgain(db, object);
}

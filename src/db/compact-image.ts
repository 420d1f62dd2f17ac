import Database from 'better-sqlite3';
import type { Db } from './db.js';

/**
 * Page size of the images sessions are opened from (docs/sessions.md#how-fast). Every table and index takes at least
 * one page even when empty, and a session holds its own copy of the whole image: at SQLite's default 4 KiB the
 * schema's 100 tables and indexes filled 400 KiB of the 552 KiB image of the default fixtures; at 1 KiB the image is
 * 300 KiB. A session's tables hold a test's rows, where a smaller page costs nothing measurable.
 */
export const IMAGE_PAGE_SIZE = 1024;

interface Column {
  name: string;
  type: string;
  pk: number;
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * The bytes of a database equal to `source` (schema, rows with their rowids, AUTOINCREMENT sequences, user_version)
 * written with `pageSize` pages. SQLite changes an in-memory database's page size only by building it anew (VACUUM
 * keeps it), so the tables are created, filled, and only then given their indexes and triggers (the triggers
 * must not fire on copied rows: they keep tables that are copied too).
 */
export function compactImage(source: Db, pageSize = IMAGE_PAGE_SIZE): Buffer {
  const target = new Database(':memory:');
  try {
    target.pragma(`page_size = ${pageSize}`);
    const objects = source
      .prepare("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid")
      .all() as Array<{ type: string; name: string; sql: string }>;
    const tables = objects.filter((object) => object.type === 'table');
    target.transaction(() => {
      for (const table of tables) target.exec(table.sql);
      for (const table of tables) copyRows(source, target, table);
      if (tables.some((table) => /\bAUTOINCREMENT\b/i.test(table.sql))) {
        target.exec('DELETE FROM sqlite_sequence'); // the copied rows set it; the source's values are the ones kept
        const insert = target.prepare('INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)');
        for (const row of source.prepare('SELECT name, seq FROM sqlite_sequence').raw().all() as unknown[][]) insert.run(row);
      }
      for (const object of objects) if (object.type !== 'table') target.exec(object.sql);
      target.pragma(`user_version = ${Number(source.pragma('user_version', { simple: true }))}`);
    })();
    return target.serialize();
  } finally {
    target.close();
  }
}

function copyRows(source: Db, target: Db, table: { name: string; sql: string }): void {
  const columns = source.prepare(`SELECT name, type, pk FROM pragma_table_info(?) ORDER BY cid`).all(table.name) as Column[];
  const keys = columns.filter((column) => column.pk > 0);
  // a rowid table whose rowid is not one of its columns: keep each row's rowid (snapshots compare rows by it)
  const hiddenRowid = !/\bWITHOUT\s+ROWID\b/i.test(table.sql) && !(keys.length === 1 && keys[0]!.type.toUpperCase() === 'INTEGER');
  const names = [...(hiddenRowid ? ['rowid'] : []), ...columns.map((column) => quote(column.name))];
  const insert = target.prepare(`INSERT INTO ${quote(table.name)} (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`);
  for (const row of source.prepare(`SELECT ${names.join(', ')} FROM ${quote(table.name)}`).raw().iterate() as Iterable<unknown[]>) insert.run(row);
}

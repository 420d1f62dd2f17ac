import type { Page } from '../core/page.js';
import { prepared, type Db } from './connection.js';

/** Which page a list request asks for (`pageQuery` in src/http/pagination.ts validates both). */
export interface PageRequest {
  pageIndex: number;
  pageSize: number;
}

/** A list's SQL without its paging clause: `SELECT <columns> FROM <from> ORDER BY <orderBy>`. */
export interface ListSql {
  columns: string;
  /** The table and its WHERE clause, shared by the page and its count. */
  from: string;
  /** A total order (ends with a unique column), so pages neither repeat nor skip rows. */
  orderBy: string;
}

/**
 * One page of a list and its exact `totalRecords`: the one way every paged list of the emulator reads, except
 * the transactions list (counters kept by triggers and stored JSON: transactions-list.service.ts).
 * `LIMIT +? OFFSET +?`: with a bare `LIMIT ?` after ORDER BY, SQLite prepares the statement again each time
 * the value is bound (the planner may use the limit), ≈8 µs per list; the unary plus keeps the value and the
 * plan (docs/benchmarks.md#uncached-reads).
 */
export function readPage<Row, Item>(db: Db, sql: ListSql, params: readonly unknown[], page: PageRequest, toItem: (row: Row) => Item): Page<Item> {
  const rows = prepared<Row>(db, `SELECT ${sql.columns} FROM ${sql.from} ORDER BY ${sql.orderBy} LIMIT +? OFFSET +?`).all(
    ...params,
    page.pageSize,
    page.pageIndex * page.pageSize,
  );
  const total = prepared<{ n: number }>(db, `SELECT COUNT(*) AS n FROM ${sql.from}`).get(...params)!;
  return { data: rows.map(toItem), pageIndex: page.pageIndex, pageSize: page.pageSize, totalRecords: total.n };
}

import type { Db } from '../db.js';

/**
 * One numbered schema migration, listed in `migrations` (index.ts). Its own module, so that the migrations and
 * their list do not import each other (docs/architecture.md#layers: no cycles).
 */
export interface Migration {
  version: number;
  name: string;
  /** The statements, or a function of the database that returns them (for a step that must look first). */
  sql: string | ((db: Db) => string);
}

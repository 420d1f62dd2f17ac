import type Database from 'better-sqlite3';

/**
 * A better-sqlite3 database handle. Its own module, so that the migrations (which name it) and connection.ts
 * (which runs them) do not import each other (docs/architecture.md#layers: no cycles).
 */
export type Db = Database.Database;

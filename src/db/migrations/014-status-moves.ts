import type { Migration } from './migration.js';

// A status move writes only the keys it changes (docs/benchmarks.md#the-rail-step): migration 002's
// transactions_listing_keys_update copied all four sort and filter keys (type, status, created_at_ms, updated_at_ms) to
// the row's transaction_accounts rows on any update of one of them, and SQLite moves the index entries of every column
// an UPDATE sets, changed or not: a status change (every rail step) rewrote four index entries of transaction_accounts
// where two change. Now a status or updated_at_ms change sets those two only; a change of type or created_at_ms (none
// in the app's own paths) still copies all four. A snapshot file of schema version 13 is filled into a database of its
// level and migrated (docs/control-plane.md#snapshots), as a database file is.
export const migration014StatusMoves: Migration = {
  version: 14,
  name: 'status-moves',
  sql: `
DROP TRIGGER IF EXISTS transactions_listing_keys_update;
DROP TRIGGER IF EXISTS transactions_listing_status_update;
CREATE TRIGGER transactions_listing_keys_update AFTER UPDATE OF type, created_at_ms ON transactions
  WHEN OLD.type IS NOT NEW.type OR OLD.created_at_ms IS NOT NEW.created_at_ms
BEGIN
  UPDATE transaction_accounts
     SET type = NEW.type, status = NEW.status, created_at_ms = NEW.created_at_ms, updated_at_ms = NEW.updated_at_ms
   WHERE transaction_id = NEW.id;
END;
CREATE TRIGGER transactions_listing_status_update AFTER UPDATE OF status, updated_at_ms ON transactions
  WHEN OLD.type IS NEW.type AND OLD.created_at_ms IS NEW.created_at_ms
    AND (OLD.status IS NOT NEW.status OR OLD.updated_at_ms IS NOT NEW.updated_at_ms)
BEGIN
  UPDATE transaction_accounts SET status = NEW.status, updated_at_ms = NEW.updated_at_ms WHERE transaction_id = NEW.id;
END;
`,
};

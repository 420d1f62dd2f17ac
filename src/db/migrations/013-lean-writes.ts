import type { Migration } from './migration.js';

// Leaner writes (docs/decisions.md#list-counters, docs/benchmarks.md#programme-wide-list):
//  - the hourly counters split by type and by status (transaction_kind_time_counts, migration 007) cost eight
//    statements on every insert and status change of a transaction; a list with one time bound and one type or
//    status filter now counts its own index range instead (the (scope, type or status, time) indexes of
//    migrations 002 and 007), about 21 ns a row;
//  - transactions_account_updated served no query: the list by account reads transaction_accounts;
//  - refunds and returns sum the transactions that name an original in related_transaction_id: without an index
//    that was a scan of the whole table on every refund or return (about 0.5 s at 1,000,000 rows). The index is
//    partial: only rows that name one are in it, so settled history costs nothing.
// A snapshot file of schema version 12 still restores: it is filled into a database of its level and migrated
// (docs/control-plane.md#snapshots), so its counters table goes as a database file's does.
export const migration013LeanWrites: Migration = {
  version: 13,
  name: 'lean-writes',
  sql: `
DROP TRIGGER IF EXISTS transactions_kind_time_insert;
DROP TRIGGER IF EXISTS transactions_kind_time_status_update;
DROP TRIGGER IF EXISTS transactions_kind_time_type_update;
DROP TRIGGER IF EXISTS transactions_kind_time_delete;
DROP TABLE IF EXISTS transaction_kind_time_counts;
DROP INDEX IF EXISTS transactions_account_updated;
CREATE INDEX IF NOT EXISTS transactions_related ON transactions (related_transaction_id) WHERE related_transaction_id IS NOT NULL;
`,
};

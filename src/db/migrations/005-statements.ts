import type { Migration } from './migration.js';

// Rendered statement files (docs/statements.md#links-and-stored-files, interface 4.3): the CSV or PDF bytes behind a
// signed download link. Kept in SQLite so a file database survives a restart with its links; `/_emulator/reset` clears
// the table with every other state table. Expired rows are purged whenever a new file is stored (statements.service).
export const migration005Statements: Migration = {
  version: 5,
  name: 'statements',
  sql: `
CREATE TABLE statement_files (
  id TEXT PRIMARY KEY,
  -- plain columns, no foreign keys: a render that finishes after a reset must not fail on a vanished row
  programme_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  format TEXT NOT NULL CHECK (format IN ('csv', 'pdf')),
  file_name TEXT NOT NULL,
  content_type TEXT NOT NULL,
  content BLOB NOT NULL,
  size_bytes INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  expires_at_ms INTEGER NOT NULL
);
CREATE INDEX statement_files_expiry ON statement_files (expires_at_ms);
`,
};

import type { Migration } from './migration.js';

// Money in and the transactions list (docs/money-in.md).
//
// 1. Deposit-instruction requests (interface 3.1, 4.1): a request is `PENDING` while it is provisioned and
//    only then becomes a row of `deposit_instructions`, so the account detail (and the statement) show an
//    instruction "once provisioned" without any reader having to filter. The request row also carries the
//    idempotency key that de-duplicates retries (first name wins).
//
// 2. Ledger: a running total on each entry (see below).
//
// 3. The transactions list (docs/money-in.md#transactions, interface 4.5) must stay fast with 1,000,000 rows
//    and report an exact `totalRecords`:
//    - `transaction_accounts` lists each transaction under every top-level account of its user that it
//      moves (an FX transfer USD -> EUR appears under both; a stablecoin deposit into a sub-balance and its
//      sweep appear under the parent), with copies of the sort keys so each sort of the account filter is
//      one index range;
//    - `transaction_counts` keeps per-user and per-account counts by (type, status), so a page filtered
//      only by user/account/type/status counts a handful of rows instead of scanning;
//    - `transactions.rest_json` stores the REST form of the row, so a page is concatenated, not
//      re-serialized.
//    All three are maintained by triggers (docs/architecture.md#sql-triggers), whatever code path writes a
//    transaction: a writer that updates a row without refreshing `rest_json` only makes it stale (NULL), and
//    readers rebuild it from the row.
export const migration002MoneyIn: Migration = {
  version: 2,
  name: 'money-in',
  sql: `
CREATE TABLE deposit_instruction_requests (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts(id),
  user_id TEXT NOT NULL REFERENCES users(id),
  name TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('PENDING', 'PROVISIONED')),
  rail_type TEXT NOT NULL,
  network TEXT,
  -- the values the instruction will carry (InstructionDetails of rails.ts), drawn when the request is accepted
  details TEXT NOT NULL,
  created_at TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  provisioned_at TEXT,
  UNIQUE (account_id, idempotency_key)
);

ALTER TABLE transactions ADD COLUMN rest_json TEXT;

-- Balances are derived from entries (docs/decisions.md#ledger). Each entry also records the account's running total
-- after it (the sum of the entries up to and including it, in posting order), so \`available\` is one index lookup
-- instead of a SUM over every entry of the account; the ledger test checks it against the plain sum.
ALTER TABLE ledger_entries ADD COLUMN available_after_minor INTEGER;
CREATE INDEX ledger_by_account_seq ON ledger_entries (account_id, id);

CREATE INDEX transactions_user_status ON transactions (user_id, status, id);
CREATE INDEX transactions_user_type ON transactions (user_id, type, id);
CREATE INDEX transactions_user_status_created ON transactions (user_id, status, created_at_ms, id);
CREATE INDEX transactions_user_type_created ON transactions (user_id, type, created_at_ms, id);

CREATE TABLE transaction_accounts (
  account_id TEXT NOT NULL,
  transaction_id TEXT NOT NULL,
  type TEXT NOT NULL,
  status TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  PRIMARY KEY (account_id, transaction_id)
) WITHOUT ROWID;
CREATE INDEX transaction_accounts_created ON transaction_accounts (account_id, created_at_ms, transaction_id);
CREATE INDEX transaction_accounts_updated ON transaction_accounts (account_id, updated_at_ms, transaction_id);
CREATE INDEX transaction_accounts_status ON transaction_accounts (account_id, status, transaction_id);
CREATE INDEX transaction_accounts_type ON transaction_accounts (account_id, type, transaction_id);
CREATE INDEX transaction_accounts_by_transaction ON transaction_accounts (transaction_id);

CREATE TABLE transaction_counts (
  scope TEXT NOT NULL,
  type TEXT NOT NULL,
  status TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (scope, type, status)
) WITHOUT ROWID;

-- field: 'c' createdAt, 'u' updatedAt; bucket: epoch ms / 3600000 (SQLite integer division)
CREATE TABLE transaction_time_counts (
  scope TEXT NOT NULL,
  field TEXT NOT NULL,
  bucket INTEGER NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (scope, field, bucket)
) WITHOUT ROWID;

CREATE TRIGGER transactions_listing_insert AFTER INSERT ON transactions BEGIN
  INSERT INTO transaction_counts (scope, type, status, n) VALUES ('user:' || NEW.user_id, NEW.type, NEW.status, 1)
    ON CONFLICT (scope, type, status) DO UPDATE SET n = n + 1;
  INSERT INTO transaction_time_counts (scope, field, bucket, n) VALUES ('user:' || NEW.user_id, 'c', NEW.created_at_ms / 3600000, 1)
    ON CONFLICT (scope, field, bucket) DO UPDATE SET n = n + 1;
  INSERT INTO transaction_time_counts (scope, field, bucket, n) VALUES ('user:' || NEW.user_id, 'u', NEW.updated_at_ms / 3600000, 1)
    ON CONFLICT (scope, field, bucket) DO UPDATE SET n = n + 1;
  INSERT OR IGNORE INTO transaction_accounts (account_id, transaction_id, type, status, created_at_ms, updated_at_ms)
    VALUES (NEW.account_id, NEW.id, NEW.type, NEW.status, NEW.created_at_ms, NEW.updated_at_ms);
  INSERT OR IGNORE INTO transaction_accounts (account_id, transaction_id, type, status, created_at_ms, updated_at_ms)
    SELECT COALESCE(a.parent_account_id, a.id), NEW.id, NEW.type, NEW.status, NEW.created_at_ms, NEW.updated_at_ms
      FROM accounts a
     WHERE a.id IN (NEW.debit_account_id, NEW.credit_account_id) AND a.user_id = NEW.user_id;
END;

CREATE TRIGGER transactions_listing_counts_update AFTER UPDATE OF status, type ON transactions
  WHEN OLD.status IS NOT NEW.status OR OLD.type IS NOT NEW.type
BEGIN
  UPDATE transaction_counts SET n = n - 1 WHERE scope = 'user:' || OLD.user_id AND type = OLD.type AND status = OLD.status;
  INSERT INTO transaction_counts (scope, type, status, n) VALUES ('user:' || NEW.user_id, NEW.type, NEW.status, 1)
    ON CONFLICT (scope, type, status) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER transactions_listing_time_update AFTER UPDATE OF created_at_ms, updated_at_ms ON transactions
  WHEN OLD.created_at_ms / 3600000 IS NOT NEW.created_at_ms / 3600000 OR OLD.updated_at_ms / 3600000 IS NOT NEW.updated_at_ms / 3600000
BEGIN
  UPDATE transaction_time_counts SET n = n - 1 WHERE scope = 'user:' || OLD.user_id AND field = 'c' AND bucket = OLD.created_at_ms / 3600000;
  INSERT INTO transaction_time_counts (scope, field, bucket, n) VALUES ('user:' || NEW.user_id, 'c', NEW.created_at_ms / 3600000, 1)
    ON CONFLICT (scope, field, bucket) DO UPDATE SET n = n + 1;
  UPDATE transaction_time_counts SET n = n - 1 WHERE scope = 'user:' || OLD.user_id AND field = 'u' AND bucket = OLD.updated_at_ms / 3600000;
  INSERT INTO transaction_time_counts (scope, field, bucket, n) VALUES ('user:' || NEW.user_id, 'u', NEW.updated_at_ms / 3600000, 1)
    ON CONFLICT (scope, field, bucket) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER transactions_listing_keys_update AFTER UPDATE OF status, type, created_at_ms, updated_at_ms ON transactions BEGIN
  UPDATE transaction_accounts
     SET type = NEW.type, status = NEW.status, created_at_ms = NEW.created_at_ms, updated_at_ms = NEW.updated_at_ms
   WHERE transaction_id = NEW.id;
END;

CREATE TRIGGER transactions_listing_delete AFTER DELETE ON transactions BEGIN
  UPDATE transaction_counts SET n = n - 1 WHERE scope = 'user:' || OLD.user_id AND type = OLD.type AND status = OLD.status;
  UPDATE transaction_time_counts SET n = n - 1 WHERE scope = 'user:' || OLD.user_id AND field = 'c' AND bucket = OLD.created_at_ms / 3600000;
  UPDATE transaction_time_counts SET n = n - 1 WHERE scope = 'user:' || OLD.user_id AND field = 'u' AND bucket = OLD.updated_at_ms / 3600000;
  DELETE FROM transaction_accounts WHERE transaction_id = OLD.id;
END;

CREATE TRIGGER transaction_accounts_counts_insert AFTER INSERT ON transaction_accounts BEGIN
  INSERT INTO transaction_counts (scope, type, status, n) VALUES ('account:' || NEW.account_id, NEW.type, NEW.status, 1)
    ON CONFLICT (scope, type, status) DO UPDATE SET n = n + 1;
  INSERT INTO transaction_time_counts (scope, field, bucket, n) VALUES ('account:' || NEW.account_id, 'c', NEW.created_at_ms / 3600000, 1)
    ON CONFLICT (scope, field, bucket) DO UPDATE SET n = n + 1;
  INSERT INTO transaction_time_counts (scope, field, bucket, n) VALUES ('account:' || NEW.account_id, 'u', NEW.updated_at_ms / 3600000, 1)
    ON CONFLICT (scope, field, bucket) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER transaction_accounts_time_update AFTER UPDATE OF created_at_ms, updated_at_ms ON transaction_accounts
  WHEN OLD.created_at_ms / 3600000 IS NOT NEW.created_at_ms / 3600000 OR OLD.updated_at_ms / 3600000 IS NOT NEW.updated_at_ms / 3600000
BEGIN
  UPDATE transaction_time_counts SET n = n - 1 WHERE scope = 'account:' || OLD.account_id AND field = 'c' AND bucket = OLD.created_at_ms / 3600000;
  INSERT INTO transaction_time_counts (scope, field, bucket, n) VALUES ('account:' || NEW.account_id, 'c', NEW.created_at_ms / 3600000, 1)
    ON CONFLICT (scope, field, bucket) DO UPDATE SET n = n + 1;
  UPDATE transaction_time_counts SET n = n - 1 WHERE scope = 'account:' || OLD.account_id AND field = 'u' AND bucket = OLD.updated_at_ms / 3600000;
  INSERT INTO transaction_time_counts (scope, field, bucket, n) VALUES ('account:' || NEW.account_id, 'u', NEW.updated_at_ms / 3600000, 1)
    ON CONFLICT (scope, field, bucket) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER transaction_accounts_counts_update AFTER UPDATE OF status, type ON transaction_accounts
  WHEN OLD.status IS NOT NEW.status OR OLD.type IS NOT NEW.type
BEGIN
  UPDATE transaction_counts SET n = n - 1 WHERE scope = 'account:' || OLD.account_id AND type = OLD.type AND status = OLD.status;
  INSERT INTO transaction_counts (scope, type, status, n) VALUES ('account:' || NEW.account_id, NEW.type, NEW.status, 1)
    ON CONFLICT (scope, type, status) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER transaction_accounts_counts_delete AFTER DELETE ON transaction_accounts BEGIN
  UPDATE transaction_counts SET n = n - 1 WHERE scope = 'account:' || OLD.account_id AND type = OLD.type AND status = OLD.status;
  UPDATE transaction_time_counts SET n = n - 1 WHERE scope = 'account:' || OLD.account_id AND field = 'c' AND bucket = OLD.created_at_ms / 3600000;
  UPDATE transaction_time_counts SET n = n - 1 WHERE scope = 'account:' || OLD.account_id AND field = 'u' AND bucket = OLD.updated_at_ms / 3600000;
END;

-- A write that changes a row but not its stored REST form leaves it stale: drop it, readers rebuild it.
CREATE TRIGGER transactions_rest_json_stale AFTER UPDATE ON transactions
  WHEN NEW.rest_json IS NOT NULL AND NEW.rest_json IS OLD.rest_json
BEGIN
  UPDATE transactions SET rest_json = NULL WHERE id = NEW.id;
END;
`,
};

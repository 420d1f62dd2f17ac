import type { Migration } from './migration.js';

// What is in flight, read from indexes (docs/decisions.md#ledger, docs/decisions.md#amount-bounds). `current` is
// `available` minus the entries of PENDING and PROCESSING transactions, and the credit bound counts the credits
// still in flight towards an account; both used to visit every in-flight transaction of the user or programme.
//  - `ledger_entries.in_flight` is 1 exactly while the entry's transaction is PENDING or PROCESSING: postEntry
//    writes it from the transaction's status at posting time, the trigger below rewrites a transaction's entries
//    when its status crosses into or out of flight, and the backfill sets it on an existing database. The partial
//    index holds only those entries, so `current` is one index range of the account's in-flight entries.
//  - `in_flight_credits` holds, per account, the credit amounts of the in-flight transactions that will credit it
//    (docs/architecture.md#the-account-a-transaction-credits), kept by triggers on every write of a transaction (a status crossing into or out of flight, an
//    insert, a delete by a snapshot restore), so the credit bound reads one row per account, however many
//    credits are in flight towards it. A transaction moving PENDING -> PROCESSING leaves it untouched.
// A partial index is written only for the rows its WHERE admits, so settled history costs nothing in it.
// The step can run again on a database that already has its column, index, table and triggers (a database taken
// back to an earlier user_version and migrated again): SQLite has no ADD COLUMN IF NOT EXISTS, so it looks first,
// and both backfills recompute every row from the transactions rather than add to what is there.
/**
 * The account a row of `transactions` will credit while it is in flight, or NULL
 * (docs/architecture.md#the-account-a-transaction-credits).
 */
const credited = (row: 'NEW' | 'OLD' | 't') => `(CASE WHEN ${row}.status IN ('PENDING', 'PROCESSING') THEN COALESCE(${row}.credit_account_id,
  CASE WHEN ${row}.category = 'P2P' AND ${row}.direction = 'OUTGOING' THEN json_extract(${row}.credit_instrument, '$.account.id') END) END)`;

const addCredit = (account: string, amount: string) => `INSERT INTO in_flight_credits (account_id, amount_minor)
    SELECT account_id, ${amount} FROM (SELECT ${account} AS account_id) WHERE account_id IS NOT NULL
    ON CONFLICT (account_id) DO UPDATE SET amount_minor = amount_minor + excluded.amount_minor;`;

export const migration012InFlightSums: Migration = {
  version: 12,
  name: 'in-flight-sums',
  sql: (db) => {
    const columns = db.prepare("SELECT name FROM pragma_table_info('ledger_entries')").all() as Array<{ name: string }>;
    const addColumn = columns.some((column) => column.name === 'in_flight') ? '' : 'ALTER TABLE ledger_entries ADD COLUMN in_flight INTEGER NOT NULL DEFAULT 0;';
    return `
${addColumn}
UPDATE ledger_entries SET in_flight = NOT in_flight
 WHERE in_flight IS NOT (transaction_id IN (SELECT id FROM transactions WHERE status IN ('PENDING', 'PROCESSING')));
CREATE INDEX IF NOT EXISTS ledger_in_flight_by_account ON ledger_entries (account_id, amount_minor) WHERE in_flight = 1;

DROP TRIGGER IF EXISTS ledger_entries_in_flight;
CREATE TRIGGER ledger_entries_in_flight AFTER UPDATE OF status ON transactions
  WHEN (OLD.status IN ('PENDING', 'PROCESSING')) IS NOT (NEW.status IN ('PENDING', 'PROCESSING'))
BEGIN
  UPDATE ledger_entries SET in_flight = (NEW.status IN ('PENDING', 'PROCESSING'))
   WHERE transaction_id = NEW.id AND in_flight IS NOT (NEW.status IN ('PENDING', 'PROCESSING'));
END;

CREATE TABLE IF NOT EXISTS in_flight_credits (
  account_id TEXT PRIMARY KEY,
  -- the credit amounts of the PENDING and PROCESSING transactions that will credit this account (0 once none)
  amount_minor INTEGER NOT NULL
) WITHOUT ROWID;
DELETE FROM in_flight_credits;
INSERT INTO in_flight_credits (account_id, amount_minor)
  SELECT account_id, SUM(credit_amount_minor) FROM (SELECT ${credited('t')} AS account_id, credit_amount_minor FROM transactions t)
   WHERE account_id IS NOT NULL GROUP BY account_id;

DROP TRIGGER IF EXISTS in_flight_credits_insert;
CREATE TRIGGER in_flight_credits_insert AFTER INSERT ON transactions WHEN ${credited('NEW')} IS NOT NULL
BEGIN
  ${addCredit(credited('NEW'), 'NEW.credit_amount_minor')}
END;

DROP TRIGGER IF EXISTS in_flight_credits_update;
CREATE TRIGGER in_flight_credits_update
  AFTER UPDATE OF status, credit_account_id, credit_amount_minor, credit_instrument, category, direction ON transactions
  WHEN ${credited('OLD')} IS NOT ${credited('NEW')}
    OR (${credited('OLD')} IS NOT NULL AND OLD.credit_amount_minor IS NOT NEW.credit_amount_minor)
BEGIN
  UPDATE in_flight_credits SET amount_minor = amount_minor - OLD.credit_amount_minor WHERE account_id = ${credited('OLD')};
  ${addCredit(credited('NEW'), 'NEW.credit_amount_minor')}
END;

DROP TRIGGER IF EXISTS in_flight_credits_delete;
CREATE TRIGGER in_flight_credits_delete AFTER DELETE ON transactions WHEN ${credited('OLD')} IS NOT NULL
BEGIN
  UPDATE in_flight_credits SET amount_minor = amount_minor - OLD.credit_amount_minor WHERE account_id = ${credited('OLD')};
END;
`;
  },
};

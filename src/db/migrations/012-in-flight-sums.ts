import type { Migration } from './index.js';

// What is in flight, read from indexes (docs/decisions.md#ledger, docs/decisions.md#amount-bounds). `current` is
// `available` minus the entries of PENDING and PROCESSING transactions, and the credit bound counts the credits
// still in flight towards an account; both used to visit every in-flight transaction of the user or programme.
//  - `ledger_entries.in_flight` is 1 exactly while the entry's transaction is PENDING or PROCESSING: postEntry
//    writes it from the transaction's status at posting time, the trigger below rewrites a transaction's entries
//    when its status crosses into or out of flight, and the backfill sets it on an existing database. The partial
//    index holds only those entries, so `current` is one index range of the account's in-flight entries.
//  - the in-flight credits towards an account are two sums over partial covering indexes holding only in-flight
//    rows: by credit_account_id, and (transfers to another user, whose account is named only in the credit
//    instrument) by the instrument's account id.
// A partial index is written only for the rows its WHERE admits, so settled history costs nothing in them.
export const migration012InFlightSums: Migration = {
  version: 12,
  name: 'in-flight-sums',
  sql: `
ALTER TABLE ledger_entries ADD COLUMN in_flight INTEGER NOT NULL DEFAULT 0;
UPDATE ledger_entries SET in_flight = 1
 WHERE transaction_id IN (SELECT id FROM transactions WHERE status IN ('PENDING', 'PROCESSING'));
CREATE INDEX ledger_in_flight_by_account ON ledger_entries (account_id, amount_minor) WHERE in_flight = 1;

CREATE TRIGGER ledger_entries_in_flight AFTER UPDATE OF status ON transactions
  WHEN (OLD.status IN ('PENDING', 'PROCESSING')) IS NOT (NEW.status IN ('PENDING', 'PROCESSING'))
BEGIN
  UPDATE ledger_entries SET in_flight = (NEW.status IN ('PENDING', 'PROCESSING'))
   WHERE transaction_id = NEW.id AND in_flight IS NOT (NEW.status IN ('PENDING', 'PROCESSING'));
END;

-- status (and category, direction) are in the columns, nearly constant within these rows, so that SQLite
-- reads the sums from the index alone (USING COVERING INDEX) instead of each table row with its JSON
CREATE INDEX transactions_in_flight_credit ON transactions (credit_account_id, status, credit_amount_minor)
  WHERE status IN ('PENDING', 'PROCESSING') AND credit_account_id IS NOT NULL;
CREATE INDEX transactions_in_flight_p2p_credit
  ON transactions (json_extract(credit_instrument, '$.account.id'), status, category, direction, credit_amount_minor)
  WHERE status IN ('PENDING', 'PROCESSING') AND category = 'P2P' AND direction = 'OUTGOING';
`,
};

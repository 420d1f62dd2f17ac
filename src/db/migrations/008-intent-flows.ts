import type { Migration } from './migration.js';

// Intent flows of docs/money-out.md#intent-flows: refunds of a deposit (REFUND, PARTIAL_REFUND), pulls
// from the user's own bank account (DEPOSIT with category DIRECT_DEBIT) and transfers to another user
// (TRANSFER with category P2P). SQLite cannot widen a CHECK or drop NOT NULL in place, so the intents table
// is rebuilt: every intent type of interface 2.3, a debit account that may be absent (a direct debit
// credits an own account from a bank account), and three columns: the flow's category, the deposit a
// refund returns, and the debit-side snapshots of a direct debit. Nothing references this table.
// Numbered 008: 007 is taken by the programme-wide transactions migration of a sibling branch.
export const migration008IntentFlows: Migration = {
  version: 8,
  name: 'intent-flows',
  sql: `
CREATE TABLE transaction_intents_v8 (
  id TEXT PRIMARY KEY,
  programme_id TEXT NOT NULL REFERENCES programmes(id),
  user_id TEXT NOT NULL REFERENCES users(id),
  idempotency_key TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('TRANSFER', 'DEPOSIT', 'WITHDRAWAL', 'REFUND', 'PARTIAL_REFUND')),
  category TEXT CHECK (category IN ('P2P', 'DIRECT_DEBIT')),
  status TEXT NOT NULL CHECK (status IN ('CREATED', 'EXPIRED', 'CANCELED', 'COMMITTED', 'FAILED')),
  status_reason TEXT NOT NULL,
  debit_account_id TEXT REFERENCES accounts(id),
  credit_account_id TEXT REFERENCES accounts(id),
  beneficiary_id TEXT REFERENCES beneficiaries(id),
  beneficiary_instrument_id TEXT REFERENCES beneficiary_instruments(id),
  refund_of_transaction_id TEXT REFERENCES transactions(id),
  debit_amount_minor INTEGER NOT NULL,
  principal_minor INTEGER NOT NULL,
  debit_currency TEXT NOT NULL,
  credit_amount_minor INTEGER NOT NULL,
  credit_currency TEXT NOT NULL,
  debit_instrument TEXT NOT NULL,
  credit_instrument TEXT,
  debit_party TEXT,
  debit_rail_type TEXT,
  credit_party TEXT,
  fees TEXT NOT NULL,
  exchange_rate TEXT NOT NULL,
  base_exchange_rate TEXT NOT NULL,
  fx_spread TEXT NOT NULL,
  credit_rail TEXT,
  credit_rail_type TEXT,
  debit_memo TEXT,
  purpose TEXT,
  -- whether the caller wrote the amount (the magic cents apply only to a written amount)
  amount_written INTEGER NOT NULL DEFAULT 1,
  related_transaction_id TEXT REFERENCES transactions(id),
  expires_at TEXT NOT NULL,
  expires_at_ms INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  updated_at TEXT NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  UNIQUE (user_id, idempotency_key)
);
INSERT INTO transaction_intents_v8 (id, programme_id, user_id, idempotency_key, request_hash, type, status, status_reason,
  debit_account_id, credit_account_id, beneficiary_id, beneficiary_instrument_id, debit_amount_minor, principal_minor, debit_currency,
  credit_amount_minor, credit_currency, debit_instrument, credit_instrument, credit_party, fees, exchange_rate, base_exchange_rate,
  fx_spread, credit_rail, credit_rail_type, debit_memo, purpose, related_transaction_id, expires_at, expires_at_ms, created_at,
  created_at_ms, updated_at, updated_at_ms)
SELECT id, programme_id, user_id, idempotency_key, request_hash, type, status, status_reason,
  debit_account_id, credit_account_id, beneficiary_id, beneficiary_instrument_id, debit_amount_minor, principal_minor, debit_currency,
  credit_amount_minor, credit_currency, debit_instrument, credit_instrument, credit_party, fees, exchange_rate, base_exchange_rate,
  fx_spread, credit_rail, credit_rail_type, debit_memo, purpose, related_transaction_id, expires_at, expires_at_ms, created_at,
  created_at_ms, updated_at, updated_at_ms
FROM transaction_intents;
DROP TABLE transaction_intents;
ALTER TABLE transaction_intents_v8 RENAME TO transaction_intents;
CREATE INDEX transaction_intents_by_user ON transaction_intents (user_id, created_at_ms, id);
CREATE INDEX transaction_intents_open ON transaction_intents (status, expires_at_ms) WHERE status = 'CREATED';
CREATE INDEX transaction_intents_refunds ON transaction_intents (refund_of_transaction_id) WHERE refund_of_transaction_id IS NOT NULL;
`,
};

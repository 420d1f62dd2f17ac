import type { Migration } from './migration.js';

// Money out (docs/money-out.md): beneficiaries with their instruments and transaction intents. Payout submissions keep
// their Idempotency-Key answers in the core `idempotency_records` table (scope 'payout'), so they need no table of
// their own. Amounts are integer minor units.
export const migration003MoneyOut: Migration = {
  version: 3,
  name: 'money-out',
  sql: `
CREATE TABLE beneficiaries (
  id TEXT PRIMARY KEY,
  programme_id TEXT NOT NULL REFERENCES programmes(id),
  user_id TEXT NOT NULL REFERENCES users(id),
  -- interface 2.12: the underlying counterparty
  counterparty_id TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL CHECK (type IN ('PERSON', 'BUSINESS')),
  first_name TEXT,
  last_name TEXT,
  date_of_birth TEXT,
  business_name TEXT,
  registration_number TEXT,
  display_name TEXT,
  email TEXT,
  phone_number TEXT,
  -- JSON { line1, line2, city, region, postalCode, country } or NULL
  address TEXT,
  relationship_to_user TEXT,
  created_at TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX beneficiaries_by_user ON beneficiaries (user_id, created_at_ms, id);

CREATE TABLE beneficiary_instruments (
  id TEXT PRIMARY KEY,
  beneficiary_id TEXT NOT NULL REFERENCES beneficiaries(id),
  position INTEGER NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('BANK_ACCOUNT', 'WALLET')),
  currency TEXT NOT NULL,
  -- bank accounts
  country TEXT,
  account_holder_name TEXT,
  account_number TEXT,
  routing_number TEXT,
  iban TEXT,
  bic TEXT,
  -- wallets
  network TEXT,
  address TEXT,
  created_at TEXT NOT NULL,
  UNIQUE (beneficiary_id, position)
);
CREATE INDEX beneficiary_instruments_by_iban ON beneficiary_instruments (iban) WHERE iban IS NOT NULL;
CREATE INDEX beneficiary_instruments_by_account_number ON beneficiary_instruments (account_number) WHERE account_number IS NOT NULL;

CREATE TABLE transaction_intents (
  id TEXT PRIMARY KEY,
  programme_id TEXT NOT NULL REFERENCES programmes(id),
  user_id TEXT NOT NULL REFERENCES users(id),
  idempotency_key TEXT NOT NULL,
  -- hash of the creation request: the same key with another body is a 409 (docs/decisions.md#intent-idempotency)
  request_hash TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('TRANSFER', 'WITHDRAWAL')),
  status TEXT NOT NULL CHECK (status IN ('CREATED', 'EXPIRED', 'CANCELED', 'COMMITTED', 'FAILED')),
  status_reason TEXT NOT NULL,
  debit_account_id TEXT NOT NULL REFERENCES accounts(id),
  credit_account_id TEXT REFERENCES accounts(id),
  beneficiary_id TEXT REFERENCES beneficiaries(id),
  beneficiary_instrument_id TEXT REFERENCES beneficiary_instruments(id),
  debit_amount_minor INTEGER NOT NULL,
  -- debit net of fees: what the transaction reports as netDebitAmount
  principal_minor INTEGER NOT NULL,
  debit_currency TEXT NOT NULL,
  credit_amount_minor INTEGER NOT NULL,
  credit_currency TEXT NOT NULL,
  -- snapshots (JSON) taken at creation, so a commit executes exactly what was previewed
  debit_instrument TEXT NOT NULL,
  credit_instrument TEXT NOT NULL,
  credit_party TEXT,
  fees TEXT NOT NULL,
  exchange_rate TEXT NOT NULL,
  base_exchange_rate TEXT NOT NULL,
  fx_spread TEXT NOT NULL,
  -- interface 2.3 enum, and the transaction's <COUNTRY>.<CURRENCY>.<RAIL> form of it
  credit_rail TEXT,
  credit_rail_type TEXT,
  debit_memo TEXT,
  purpose TEXT,
  related_transaction_id TEXT REFERENCES transactions(id),
  expires_at TEXT NOT NULL,
  expires_at_ms INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  updated_at TEXT NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  UNIQUE (user_id, idempotency_key)
);
CREATE INDEX transaction_intents_by_user ON transaction_intents (user_id, created_at_ms, id);
CREATE INDEX transaction_intents_open ON transaction_intents (status, expires_at_ms) WHERE status = 'CREATED';
`,
};

import type { Migration } from './migration.js';

// Core schema: programmes, credentials, users, accounts, deposit instructions, transactions and their
// ledger entries, deferred jobs, the event outbox and idempotency records. Amounts are integer minor
// units (docs/decisions.md#exact-money); instants are kept both as ISO text (what the API returns) and epoch ms (for
// sorting and range filters).
export const migration001Core: Migration = {
  version: 1,
  name: 'core',
  sql: `
CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE programmes (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  webhook_api_key TEXT NOT NULL,
  webhook_secret TEXT NOT NULL,
  webhook_url TEXT
);

CREATE TABLE users (
  id TEXT PRIMARY KEY,
  programme_id TEXT NOT NULL REFERENCES programmes(id),
  external_id TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('PERSON', 'BUSINESS')),
  name TEXT NOT NULL,
  email TEXT,
  enrollment_status TEXT NOT NULL DEFAULT 'INACTIVE',
  enrollment_status_reason TEXT,
  -- set when the user's enrollment is first created: the users list shows only these (interface 4.11)
  enrollment_started_at TEXT,
  created_at TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (programme_id, external_id)
);
CREATE INDEX users_list ON users (programme_id, created_at_ms DESC, id DESC) WHERE enrollment_started_at IS NOT NULL;

CREATE TABLE api_keys (
  api_key TEXT PRIMARY KEY,
  programme_id TEXT NOT NULL REFERENCES programmes(id),
  secret TEXT NOT NULL,
  integration_type TEXT NOT NULL CHECK (integration_type IN ('SINGLE_USER', 'MULTI_USER')),
  user_id TEXT REFERENCES users(id)
);

CREATE TABLE access_tokens (
  token_hash TEXT PRIMARY KEY,
  programme_id TEXT NOT NULL REFERENCES programmes(id),
  user_id TEXT NOT NULL REFERENCES users(id),
  scopes TEXT NOT NULL,
  expires_at_ms INTEGER NOT NULL,
  created_at TEXT NOT NULL
);

CREATE TABLE accounts (
  id TEXT PRIMARY KEY,
  programme_id TEXT NOT NULL REFERENCES programmes(id),
  user_id TEXT NOT NULL REFERENCES users(id),
  -- sub-balances (a stablecoin account's per-network balance) point at their parent account
  parent_account_id TEXT REFERENCES accounts(id),
  kind TEXT NOT NULL CHECK (kind IN ('FIAT', 'STABLECOIN', 'SUB_BALANCE')),
  currency TEXT NOT NULL,
  country TEXT,
  network TEXT,
  status TEXT NOT NULL DEFAULT 'ACTIVE',
  status_reason TEXT,
  display_name TEXT,
  deposit_reconciliation_id TEXT NOT NULL,
  provider_ready INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX accounts_by_user ON accounts (user_id, created_at_ms, id);
CREATE INDEX accounts_by_parent ON accounts (parent_account_id);

CREATE TABLE deposit_instructions (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts(id),
  name TEXT NOT NULL,
  idempotency_key TEXT,
  status TEXT NOT NULL CHECK (status IN ('PENDING', 'ACTIVE')),
  rail_type TEXT NOT NULL,
  rail_label TEXT NOT NULL,
  supported_currencies TEXT NOT NULL,
  fields TEXT NOT NULL,
  disclosures TEXT NOT NULL,
  network TEXT,
  wallet_address TEXT,
  created_at TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX deposit_instructions_by_account ON deposit_instructions (account_id, created_at_ms, id);
CREATE UNIQUE INDEX deposit_instructions_idempotency ON deposit_instructions (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

CREATE TABLE transactions (
  id TEXT PRIMARY KEY,
  programme_id TEXT NOT NULL REFERENCES programmes(id),
  user_id TEXT NOT NULL REFERENCES users(id),
  -- the top-level account the transaction is listed under (the account filter of interface 4.5)
  account_id TEXT NOT NULL REFERENCES accounts(id),
  -- ledger accounts moved by this transaction (may be sub-balances); NULL for the external side
  debit_account_id TEXT REFERENCES accounts(id),
  credit_account_id TEXT REFERENCES accounts(id),
  direction TEXT NOT NULL CHECK (direction IN ('INCOMING', 'OUTGOING')),
  type TEXT NOT NULL,
  status TEXT NOT NULL,
  status_reason TEXT,
  status_code TEXT,
  category TEXT,
  reference_number TEXT NOT NULL,
  external_id TEXT,
  deposit_reconciliation_id TEXT,
  related_transaction_id TEXT,
  debit_amount_minor INTEGER NOT NULL,
  net_debit_amount_minor INTEGER,
  debit_currency TEXT NOT NULL,
  debit_party TEXT,
  debit_rail TEXT,
  debit_memo TEXT,
  debit_reference TEXT,
  debit_entry_descriptor TEXT,
  debit_instrument TEXT,
  credit_amount_minor INTEGER NOT NULL,
  credit_currency TEXT NOT NULL,
  credit_party TEXT,
  credit_rail TEXT,
  credit_instrument TEXT,
  fees TEXT NOT NULL DEFAULT '[]',
  exchange_rate TEXT,
  base_exchange_rate TEXT,
  fx_spread TEXT,
  tags TEXT NOT NULL DEFAULT '[]',
  purpose TEXT,
  -- how the sandbox rail treats it: NORMAL, REJECT (magic .91), HOLD (magic .92), NONE (fixture history)
  rail_behaviour TEXT NOT NULL DEFAULT 'NORMAL',
  intent_id TEXT,
  created_at TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  updated_at TEXT NOT NULL,
  updated_at_ms INTEGER NOT NULL,
  completed_at TEXT
);
CREATE INDEX transactions_user_created ON transactions (user_id, created_at_ms, id);
CREATE INDEX transactions_user_updated ON transactions (user_id, updated_at_ms, id);
CREATE INDEX transactions_account_created ON transactions (account_id, created_at_ms, id);
CREATE INDEX transactions_account_updated ON transactions (account_id, updated_at_ms, id);

-- Ledger (docs/decisions.md#ledger): balances are sums of these rows, never stored apart.
CREATE TABLE ledger_entries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  account_id TEXT NOT NULL REFERENCES accounts(id),
  transaction_id TEXT NOT NULL REFERENCES transactions(id),
  kind TEXT NOT NULL CHECK (kind IN ('PRINCIPAL', 'FEE', 'REVERSAL')),
  -- signed: credits positive, debits negative
  amount_minor INTEGER NOT NULL,
  currency TEXT NOT NULL,
  is_fee INTEGER NOT NULL DEFAULT 0,
  description TEXT NOT NULL,
  posted_at TEXT NOT NULL,
  posted_at_ms INTEGER NOT NULL
);
CREATE INDEX ledger_by_account ON ledger_entries (account_id, posted_at_ms, id);
CREATE INDEX ledger_by_transaction ON ledger_entries (transaction_id);

-- Deferred work (docs/architecture.md#a-new-job: no setTimeout carries business state).
CREATE TABLE jobs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  type TEXT NOT NULL,
  due_at_ms INTEGER NOT NULL,
  payload TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'DONE', 'FAILED', 'CANCELED')),
  attempts INTEGER NOT NULL DEFAULT 0,
  last_error TEXT,
  created_at_ms INTEGER NOT NULL
);
CREATE INDEX jobs_due ON jobs (status, due_at_ms, id);

-- Events written in the same SQLite transaction as the change that causes them (docs/decisions.md#webhook-outbox).
CREATE TABLE outbox (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id TEXT NOT NULL UNIQUE,
  programme_id TEXT NOT NULL,
  user_id TEXT,
  resource_type TEXT NOT NULL,
  resource_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  occurred_at TEXT NOT NULL,
  -- the resource as it was when the event happened, in webhook form (no-value fields omitted)
  payload TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'PENDING'
);
CREATE INDEX outbox_pending ON outbox (status, seq);
CREATE INDEX outbox_resource ON outbox (resource_id, seq);

-- Generic idempotency records: scope names the operation (e.g. 'intent:create'), request_hash detects a
-- key reused with a different request (409), response replays the first answer.
CREATE TABLE idempotency_records (
  scope TEXT NOT NULL,
  owner TEXT NOT NULL,
  key TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  response_status INTEGER NOT NULL,
  response_body TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (scope, owner, key)
);
`,
};

import type { Migration } from './migration.js';

// Webhook delivery state (docs/webhooks.md, interface 6.1). One delivery per outbox event, created in the same
// SQLite transaction as the event (domains/webhooks/outbox.ts), so an event written before a crash is
// still owed after a restart. Every HTTP attempt is a row of webhook_attempts. Retries wait for a
// `webhook.retry` job on the emulated clock (jobs table), never for a timer.
export const migration004Webhooks: Migration = {
  version: 4,
  name: 'webhooks',
  sql: `
CREATE TABLE webhook_deliveries (
  id TEXT PRIMARY KEY,
  event_seq INTEGER NOT NULL UNIQUE REFERENCES outbox(seq),
  event_id TEXT NOT NULL UNIQUE,
  programme_id TEXT NOT NULL,
  -- the transaction id: events of one resource are delivered in event_seq order
  resource_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  -- PENDING: due now; RETRYING: waiting for next_attempt_at; DELIVERED, FAILED (schedule exhausted) and
  -- SKIPPED (no endpoint configured) are final but replayable
  status TEXT NOT NULL CHECK (status IN ('PENDING', 'RETRYING', 'DELIVERED', 'FAILED', 'SKIPPED')),
  -- scheduled attempts only (the first one and its retries); replays are not counted here
  attempt_count INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT,
  last_attempt_at TEXT,
  last_response_status INTEGER,
  last_error TEXT,
  delivered_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX webhook_deliveries_status ON webhook_deliveries (status, event_seq);
CREATE INDEX webhook_deliveries_resource ON webhook_deliveries (resource_id, event_seq);
CREATE INDEX webhook_deliveries_type ON webhook_deliveries (event_type, event_seq);

CREATE TABLE webhook_attempts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  delivery_id TEXT NOT NULL REFERENCES webhook_deliveries(id),
  -- 1-based over every attempt of the delivery, replays included
  number INTEGER NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('SCHEDULED', 'REPLAY')),
  url TEXT NOT NULL,
  -- emulated time of the attempt (the retry schedule runs on the emulated clock)
  attempted_at TEXT NOT NULL,
  attempted_at_ms INTEGER NOT NULL,
  -- real wall-clock milliseconds sent as X-Service-Timestamp
  signed_at_ms INTEGER NOT NULL,
  request_headers TEXT NOT NULL,
  request_body TEXT NOT NULL,
  outcome TEXT NOT NULL CHECK (outcome IN ('SUCCEEDED', 'FAILED')),
  response_status INTEGER,
  response_body TEXT,
  error TEXT,
  latency_ms INTEGER NOT NULL,
  UNIQUE (delivery_id, number)
);
`,
};

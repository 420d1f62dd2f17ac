import type { Migration } from './migration.js';

// Webhook chaos (docs/faults.md#what-the-log-shows): every attempt records what chaos did to it (`chaos`, a JSON
// array, `[]` when nothing), and a duplicate sent by chaos is an attempt of its own kind, DUPLICATE. SQLite
// cannot change a CHECK constraint in place, so the table is rebuilt with its rows (ids and numbers kept).
export const migration011WebhookChaos: Migration = {
  version: 11,
  name: 'webhook-chaos',
  sql: `
CREATE TABLE webhook_attempts_next (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  delivery_id TEXT NOT NULL REFERENCES webhook_deliveries(id),
  -- 1-based over every attempt of the delivery, replays and duplicates included
  number INTEGER NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('SCHEDULED', 'REPLAY', 'DUPLICATE')),
  url TEXT NOT NULL,
  -- emulated time of the attempt (the retry schedule runs on the emulated clock)
  attempted_at TEXT NOT NULL,
  attempted_at_ms INTEGER NOT NULL,
  -- milliseconds sent as X-Service-Timestamp (real time, moved when chaos skewed it)
  signed_at_ms INTEGER NOT NULL,
  request_headers TEXT NOT NULL,
  request_body TEXT NOT NULL,
  outcome TEXT NOT NULL CHECK (outcome IN ('SUCCEEDED', 'FAILED')),
  response_status INTEGER,
  response_body TEXT,
  error TEXT,
  latency_ms INTEGER NOT NULL,
  chaos TEXT NOT NULL DEFAULT '[]',
  UNIQUE (delivery_id, number)
);
INSERT INTO webhook_attempts_next (id, delivery_id, number, kind, url, attempted_at, attempted_at_ms, signed_at_ms, request_headers,
  request_body, outcome, response_status, response_body, error, latency_ms)
SELECT id, delivery_id, number, kind, url, attempted_at, attempted_at_ms, signed_at_ms, request_headers,
  request_body, outcome, response_status, response_body, error, latency_ms FROM webhook_attempts;
DROP TABLE webhook_attempts;
ALTER TABLE webhook_attempts_next RENAME TO webhook_attempts;
-- an empty copy leaves a counter row at 0 that a new database would not have (reset and snapshots compare it)
DELETE FROM sqlite_sequence WHERE name = 'webhook_attempts' AND seq = 0;
`,
};

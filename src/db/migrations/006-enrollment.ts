import type { Migration } from './migration.js';

// Enrollment and information requests (docs/onboarding.md, interface 2.9, 2.10, 3.3, 3.4). One enrollment per user;
// the enrollment points at its current information request. Entries are kept one row per requirement key
// with the value as JSON; a document entry keeps only the document's metadata and SHA-256 (the PDF bytes
// are checked at write time and then dropped: nothing in the interface ever reads them back).
export const migration006Enrollment: Migration = {
  version: 6,
  name: 'enrollment',
  sql: `
CREATE TABLE enrollments (
  id TEXT PRIMARY KEY,
  programme_id TEXT NOT NULL REFERENCES programmes(id),
  user_id TEXT NOT NULL UNIQUE REFERENCES users(id),
  status TEXT NOT NULL CHECK (status IN ('INACTIVE', 'ACTIVE')),
  reason TEXT CHECK (reason IN ('REVOKED', 'ACTIVATION_REJECTED')),
  reason_detail TEXT,
  -- the request whose summary the enrollment shows (no FK: the two rows reference each other)
  information_request_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

CREATE TABLE information_requests (
  id TEXT PRIMARY KEY,
  programme_id TEXT NOT NULL REFERENCES programmes(id),
  user_id TEXT NOT NULL REFERENCES users(id),
  subject_type TEXT NOT NULL CHECK (subject_type IN ('ENROLLMENT')),
  subject_id TEXT NOT NULL,
  -- which requirement set applies: the user's type (docs/onboarding.md#requirements-and-value-formats)
  requirement_set TEXT NOT NULL CHECK (requirement_set IN ('PERSON', 'BUSINESS')),
  status TEXT NOT NULL CHECK (status IN ('DRAFT', 'PROCESSING_SUBMISSION', 'PENDING_REVIEW', 'COMPLETED', 'CANCELED')),
  validation_status TEXT NOT NULL CHECK (validation_status IN ('MISSING', 'VALID', 'INVALID')),
  decision TEXT CHECK (decision IN ('PENDING', 'APPROVED', 'REJECTED')),
  title TEXT,
  -- per-requirement { status, errors } as computed at the last write (interface 2.9: recomputed on write)
  evaluation TEXT NOT NULL,
  submitted_at TEXT,
  decided_at TEXT,
  created_at TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX information_requests_by_user ON information_requests (user_id, created_at_ms DESC, id DESC);

CREATE TABLE information_request_entries (
  request_id TEXT NOT NULL REFERENCES information_requests(id),
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  source TEXT NOT NULL CHECK (source IN ('CALLER', 'PREFILL')),
  confirmed INTEGER NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (request_id, key)
);
`,
};

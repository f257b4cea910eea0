-- The endpoint records and the webhook outbox. Times the service computes with are epoch
-- milliseconds; created_at/updated_at are for operators only.
CREATE TABLE endpoints (
  id TEXT PRIMARY KEY,
  token_hash BLOB NOT NULL,
  record TEXT NOT NULL,
  message_seq INTEGER NOT NULL DEFAULT 0,
  pending_since INTEGER,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
) STRICT;
CREATE INDEX endpoints_pending ON endpoints (pending_since) WHERE pending_since IS NOT NULL;
CREATE TABLE outbox (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  endpoint_id TEXT NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  message_seq INTEGER NOT NULL,
  platform TEXT NOT NULL,
  url TEXT NOT NULL,
  payload TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  lease_until INTEGER NOT NULL DEFAULT 0,
  expires_at INTEGER NOT NULL,
  UNIQUE (endpoint_id, message_seq, platform)
) STRICT;
CREATE INDEX outbox_due ON outbox (next_attempt_at);

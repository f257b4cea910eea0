-- The change stream: a version per endpoint and a bounded log of its committed records.
ALTER TABLE endpoints ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
CREATE TABLE endpoint_events (
  endpoint_id TEXT NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  version INTEGER NOT NULL,
  record TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (endpoint_id, version)
) STRICT;
CREATE INDEX endpoint_events_created ON endpoint_events (created_at);

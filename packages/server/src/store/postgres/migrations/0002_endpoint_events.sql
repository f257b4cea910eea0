-- The change stream: a version per endpoint, incremented by every committed write of its row, and a
-- bounded log of the records those writes committed (the replay window of the event stream: the
-- store keeps the newest 100 per endpoint, none older than 10 minutes).
-- Adding a column with a constant default rewrites nothing, so this is quick on a large table. Code
-- of the previous release keeps working on the new schema (its writes just make no events).

ALTER TABLE endpoints ADD COLUMN version bigint NOT NULL DEFAULT 0;

-- created_at is epoch milliseconds, like the other times the service computes with.
CREATE TABLE endpoint_events (
  endpoint_id text COLLATE "C" NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  version     bigint NOT NULL,
  record      text NOT NULL,
  created_at  bigint NOT NULL,
  PRIMARY KEY (endpoint_id, version)
);
-- For the periodic sweep of events past the age limit, across all endpoints.
CREATE INDEX endpoint_events_created ON endpoint_events (created_at);

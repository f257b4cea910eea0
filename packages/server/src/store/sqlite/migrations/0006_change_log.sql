-- Each event carries the pending message's number as of its version, and the service-wide change
-- log lists every event in commit order. A change's position is its event's ID: SQLite commits one
-- writer at a time (BEGIN IMMEDIATE, across processes too) and AUTOINCREMENT assigns IDs in that
-- order, rolled back with the transaction, so positions are consecutive and in commit order. The
-- change log is its own table because an endpoint's events beyond its window are deleted with each
-- write: the entry stays, so a reader learns it missed that endpoint's change. Positions start here
-- (no backfill).
ALTER TABLE event_log ADD COLUMN message_number INTEGER;
CREATE TABLE change_log (
  position INTEGER PRIMARY KEY,
  endpoint_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;

-- The event log becomes append-only: one table in commit order with no index but its key, and each
-- endpoint's row lists the IDs of its logged events (oldest first). An update then writes one
-- appended row instead of entries in three b-trees (the events were keyed by endpoint, which put
-- every update's entry on a different page); the event pages of a group commit are shared.
-- AUTOINCREMENT: an ID is never reused, so a listed ID whose row the age sweep deleted matches
-- nothing instead of another event. Existing events move over in commit order, but for those past
-- the default age limit (10 minutes), which no replay returns.
CREATE TABLE event_log (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  endpoint_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  record TEXT NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;
ALTER TABLE endpoints ADD COLUMN event_ids TEXT NOT NULL DEFAULT '[]';
INSERT INTO event_log (endpoint_id, version, record, created_at)
  SELECT endpoint_id, version, record, created_at FROM endpoint_events
  WHERE created_at >= CAST(unixepoch('subsec') * 1000 AS INTEGER) - 600000
  ORDER BY created_at, endpoint_id, version;
CREATE INDEX migrating_event_log ON event_log (endpoint_id, version);
UPDATE endpoints SET event_ids = (SELECT json_group_array(id ORDER BY version) FROM event_log WHERE endpoint_id = endpoints.id)
  WHERE id IN (SELECT endpoint_id FROM event_log);
DROP INDEX migrating_event_log;
DROP TABLE endpoint_events;

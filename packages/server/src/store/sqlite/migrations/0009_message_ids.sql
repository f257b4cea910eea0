-- Conversations across platforms: each logged message's copies' IDs (one per platform, unique per
-- endpoint and platform, gone with their message), its native reply, edits and delete; webhook calls
-- that edit or delete a copy after its create, in the webhook's queue; and event-log entries that are
-- an edit or a delete of a message rather than a record.
ALTER TABLE messages ADD COLUMN reply_to INTEGER;
ALTER TABLE messages ADD COLUMN edits INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN edited_at INTEGER;
ALTER TABLE messages ADD COLUMN deleted_at INTEGER;
CREATE TABLE message_ids (
  endpoint_id TEXT NOT NULL,
  platform TEXT NOT NULL,
  message_id TEXT NOT NULL,
  number INTEGER NOT NULL,
  PRIMARY KEY (endpoint_id, platform, message_id),
  UNIQUE (endpoint_id, number, platform),
  FOREIGN KEY (endpoint_id, number) REFERENCES messages (endpoint_id, number) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

ALTER TABLE event_log ADD COLUMN kind TEXT NOT NULL DEFAULT 'record';
ALTER TABLE endpoints ADD COLUMN last_change TEXT NOT NULL DEFAULT 'record';

-- The outbox is rebuilt without its one-entry-per-message-and-platform constraint (a message may now
-- have a create, edits and a delete queued for one webhook); the create alone stays unique. Its IDs
-- go on from where they were: an Idempotency-Key names an entry, so an ID is never used twice.
CREATE TABLE outbox_next (
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
  head INTEGER NOT NULL DEFAULT 0,
  kind TEXT NOT NULL DEFAULT 'create'
) STRICT;
INSERT INTO outbox_next (id, endpoint_id, message_seq, platform, url, payload, attempts, next_attempt_at, lease_until, expires_at, head)
  SELECT id, endpoint_id, message_seq, platform, url, payload, attempts, next_attempt_at, lease_until, expires_at, head FROM outbox;
DELETE FROM sqlite_sequence WHERE name = 'outbox_next';
INSERT INTO sqlite_sequence (name, seq) SELECT 'outbox_next', seq FROM sqlite_sequence WHERE name = 'outbox';
DROP TABLE outbox;
ALTER TABLE outbox_next RENAME TO outbox;
CREATE UNIQUE INDEX outbox_create ON outbox (endpoint_id, message_seq, platform) WHERE kind = 'create';
CREATE INDEX outbox_due ON outbox (next_attempt_at);
CREATE INDEX outbox_webhook ON outbox (endpoint_id, platform, url, id);
CREATE INDEX outbox_heads ON outbox (next_attempt_at, id) WHERE head = 1;
CREATE TRIGGER outbox_head_on_insert AFTER INSERT ON outbox
WHEN NOT EXISTS (SELECT 1 FROM outbox p WHERE p.endpoint_id = NEW.endpoint_id AND p.platform = NEW.platform
                   AND p.url = NEW.url AND p.id < NEW.id)
BEGIN
  UPDATE outbox SET head = 1 WHERE id = NEW.id;
END;
CREATE TRIGGER outbox_head_on_delete AFTER DELETE ON outbox WHEN OLD.head = 1
BEGIN
  UPDATE outbox SET head = 1
  WHERE id = (SELECT min(id) FROM outbox WHERE endpoint_id = OLD.endpoint_id AND platform = OLD.platform AND url = OLD.url);
END;

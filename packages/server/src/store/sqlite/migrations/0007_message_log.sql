-- Every accepted message is kept until each platform has it (store/sqlite/messageLog.ts), and each
-- endpoint's queue summary beside its row. `unread` and `expired` are masks of platforms (chat_a 1,
-- chat_b 2, chat_c 4, chat_d 8). Webhook claims take the oldest entry of each webhook only
-- (outbox_webhook keeps that a key lookup).
CREATE TABLE messages (
  endpoint_id TEXT NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  number INTEGER NOT NULL,
  sender TEXT,
  sender_channel TEXT,
  message TEXT NOT NULL,
  unread INTEGER NOT NULL,
  expired INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (endpoint_id, number)
) STRICT;
CREATE INDEX messages_read_age ON messages (created_at) WHERE unread = 0;
CREATE INDEX outbox_webhook ON outbox (endpoint_id, platform, url, id);
ALTER TABLE endpoints ADD COLUMN queue TEXT NOT NULL DEFAULT '[]';

-- A message pending under the one-message model becomes the first entry of its endpoint's log and
-- queue, unread by the platforms whose read flag was false, so nothing accepted before the upgrade
-- is lost.
INSERT INTO messages (endpoint_id, number, sender, sender_channel, message, unread, created_at)
  SELECT id, message_seq, json_extract(record, '$.meta.sender'), json_extract(record, '$.meta."sender-channel"'),
         json_extract(record, '$.meta.message'),
         (CASE WHEN json_extract(record, '$.meta.read.chat_a') THEN 0 ELSE 1 END) |
         (CASE WHEN json_extract(record, '$.meta.read.chat_b') THEN 0 ELSE 2 END) |
         (CASE WHEN json_extract(record, '$.meta.read.chat_c') THEN 0 ELSE 4 END) |
         (CASE WHEN json_extract(record, '$.meta.read.chat_d') THEN 0 ELSE 8 END),
         pending_since
  FROM endpoints WHERE pending_since IS NOT NULL;
UPDATE endpoints SET queue = (
    SELECT json_array(json_object('n', m.number, 'u', m.unread, 'at', m.created_at, 'b', length(CAST(m.message AS BLOB)), 's', m.sender))
    FROM messages m WHERE m.endpoint_id = endpoints.id AND m.number = endpoints.message_seq AND m.unread <> 0)
  WHERE pending_since IS NOT NULL
    AND EXISTS (SELECT 1 FROM messages m WHERE m.endpoint_id = endpoints.id AND m.number = endpoints.message_seq AND m.unread <> 0);
UPDATE endpoints SET pending_since = NULL WHERE queue = '[]';

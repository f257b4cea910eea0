-- The message log: every accepted message is kept until each platform has it (see
-- store/postgres/messageLog.ts), and each endpoint's queue summary beside its row. `unread` and
-- `expired` are masks of platforms (chat_a 1, chat_b 2, chat_c 4, chat_d 8).
CREATE TABLE messages (
  endpoint_id    text COLLATE "C" NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  number         bigint NOT NULL,
  sender         text,
  sender_channel text,
  message        text NOT NULL,
  unread         integer NOT NULL,
  expired        integer NOT NULL DEFAULT 0,
  created_at     bigint NOT NULL,
  PRIMARY KEY (endpoint_id, number)
);
CREATE INDEX messages_read_age ON messages (created_at) WHERE unread = 0;
-- A webhook's deliveries go out oldest first, one at a time: its oldest entry is a key lookup.
CREATE INDEX outbox_webhook ON outbox (endpoint_id, platform, url, id);
ALTER TABLE endpoints ADD COLUMN queue text NOT NULL DEFAULT '[]';

-- A message pending under the one-message model becomes the first entry of its endpoint's log and
-- queue, unread by the platforms whose read flag was false.
INSERT INTO messages (endpoint_id, number, sender, sender_channel, message, unread, created_at)
  SELECT id, message_seq, record::json #>> '{meta,sender}', record::json #>> '{meta,sender-channel}', record::json #>> '{meta,message}',
         (CASE WHEN (record::json #>> '{meta,read,chat_a}')::boolean THEN 0 ELSE 1 END) |
         (CASE WHEN (record::json #>> '{meta,read,chat_b}')::boolean THEN 0 ELSE 2 END) |
         (CASE WHEN (record::json #>> '{meta,read,chat_c}')::boolean THEN 0 ELSE 4 END) |
         (CASE WHEN (record::json #>> '{meta,read,chat_d}')::boolean THEN 0 ELSE 8 END),
         pending_since
  FROM endpoints WHERE pending_since IS NOT NULL;
UPDATE endpoints e SET queue = json_build_array(json_build_object('n', m.number, 'u', m.unread, 'at', m.created_at, 'b', octet_length(m.message), 's', m.sender))::text
  FROM messages m WHERE m.endpoint_id = e.id AND m.number = e.message_seq AND m.unread <> 0 AND e.pending_since IS NOT NULL;
UPDATE endpoints SET pending_since = NULL WHERE queue = '[]';

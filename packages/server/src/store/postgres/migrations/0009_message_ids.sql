-- Conversations across platforms: each logged message's copies' IDs (one per platform, unique per
-- endpoint and platform, gone with their message), its native reply, edits and delete; webhook calls
-- that edit or delete a copy after its create, in the webhook's queue; and event-log entries that are
-- an edit or a delete of a message rather than a record.
ALTER TABLE messages ADD COLUMN reply_to bigint, ADD COLUMN edits integer NOT NULL DEFAULT 0,
  ADD COLUMN edited_at bigint, ADD COLUMN deleted_at bigint;
CREATE TABLE message_ids (
  endpoint_id text COLLATE "C" NOT NULL,
  platform    text NOT NULL,
  message_id  text COLLATE "C" NOT NULL,
  number      bigint NOT NULL,
  PRIMARY KEY (endpoint_id, platform, message_id),
  UNIQUE (endpoint_id, number, platform),
  FOREIGN KEY (endpoint_id, number) REFERENCES messages (endpoint_id, number) ON DELETE CASCADE
);
ALTER TABLE endpoint_events ADD COLUMN kind text NOT NULL DEFAULT 'record';
ALTER TABLE endpoints ADD COLUMN last_change text NOT NULL DEFAULT 'record';
-- A message may now have a create, edits and a delete queued for one webhook; the create alone stays unique.
ALTER TABLE outbox ADD COLUMN kind text NOT NULL DEFAULT 'create';
ALTER TABLE outbox DROP CONSTRAINT outbox_endpoint_id_message_seq_platform_key;
CREATE UNIQUE INDEX outbox_create ON outbox (endpoint_id, message_seq, platform) WHERE kind = 'create';

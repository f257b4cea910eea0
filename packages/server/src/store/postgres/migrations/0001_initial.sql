-- The endpoint records and the webhook outbox: the same logical schema as the SQLite store.
-- Times the service computes with (message_seq aside) are epoch milliseconds in bigint columns;
-- created_at/updated_at are for operators only.

-- IDs compare byte-wise (COLLATE "C"), as in SQLite, so listing pages the same on both stores.
-- The record is text, not jsonb: it reads back byte for byte as it was written (jsonb would
-- reorder keys and normalise numbers and whitespace).
CREATE TABLE endpoints (
  id            text COLLATE "C" PRIMARY KEY,
  token_hash    bytea NOT NULL,
  record        text NOT NULL,
  message_seq   bigint NOT NULL DEFAULT 0,
  pending_since bigint,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX endpoints_pending ON endpoints (pending_since) WHERE pending_since IS NOT NULL;

CREATE TABLE outbox (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  endpoint_id     text COLLATE "C" NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  message_seq     bigint NOT NULL,
  platform        text NOT NULL,
  url             text NOT NULL,
  payload         text NOT NULL,
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at bigint NOT NULL,
  lease_until     bigint NOT NULL DEFAULT 0,
  expires_at      bigint NOT NULL,
  UNIQUE (endpoint_id, message_seq, platform)
);
CREATE INDEX outbox_due ON outbox (next_attempt_at);

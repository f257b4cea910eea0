-- Bot keys: each acts for one platform on every endpoint; only the key's SHA-256 digest is kept.
-- A new table only: code of the previous release never reads it.
CREATE TABLE bots (
  id         text COLLATE "C" PRIMARY KEY,
  platform   text NOT NULL,
  key_hash   bytea NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now()
);

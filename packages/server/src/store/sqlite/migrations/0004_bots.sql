-- Bot keys: each acts for one platform on every endpoint; only the key's SHA-256 digest is kept.
CREATE TABLE bots (
  id TEXT PRIMARY KEY,
  platform TEXT NOT NULL,
  key_hash BLOB NOT NULL UNIQUE,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
) STRICT;

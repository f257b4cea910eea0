-- The lookup index: (platform, channel) -> (endpoint, bridge), written in the same statement or
-- transaction as every write of a record, so a lookup is one index range whatever the number of
-- endpoints. The endpoints already stored are indexed here (records are JSON text; the bridge is the
-- channel's zero-based position in its platform's list).
CREATE TABLE channel_index (
  platform    text COLLATE "C" NOT NULL,
  channel     text COLLATE "C" NOT NULL,
  endpoint_id text COLLATE "C" NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  bridge      integer NOT NULL,
  PRIMARY KEY (platform, channel, endpoint_id, bridge)
);
-- For re-indexing one endpoint and for the cascade of its deletion.
CREATE INDEX channel_index_endpoint ON channel_index (endpoint_id);

INSERT INTO channel_index (platform, channel, endpoint_id, bridge)
SELECT p.key, c.value, e.id, c.ordinality - 1
FROM endpoints e,
     json_each(e.record::json -> 'config' -> 'channels') p,
     json_array_elements_text(p.value) WITH ORDINALITY AS c (value, ordinality)
ON CONFLICT DO NOTHING;

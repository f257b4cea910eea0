-- The lookup index: (platform, channel) -> (endpoint, bridge), written in the transaction of every
-- write of a record.
CREATE TABLE channel_index (
  platform TEXT NOT NULL,
  channel TEXT NOT NULL,
  endpoint_id TEXT NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  bridge INTEGER NOT NULL,
  PRIMARY KEY (platform, channel, endpoint_id, bridge)
) STRICT, WITHOUT ROWID;
CREATE INDEX channel_index_endpoint ON channel_index (endpoint_id);
-- The endpoints already stored: every text element of each list under config.channels, at its position.
INSERT INTO channel_index (platform, channel, endpoint_id, bridge)
  SELECT p.key, c.value, e.id, c.key FROM endpoints e, json_each(e.record, '$.config.channels') p, json_each(p.value) c
  WHERE p.type = 'array' AND c.type = 'text' ON CONFLICT DO NOTHING;

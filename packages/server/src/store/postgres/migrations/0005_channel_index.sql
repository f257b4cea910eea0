-- The lookup index: (platform, channel) -> (endpoint, bridge), written in the same statement or
-- transaction as every write of a record, so a lookup is one index range whatever the number of
-- endpoints. The endpoints already stored are indexed here (records are JSON text; the bridge is the
-- channel's zero-based position in its platform's list). `channel` holds the channel ID as its JSON
-- string literal, exactly as the record's text has it (a text column cannot hold NUL, which a channel
-- ID may; a `json` value keeps its text verbatim).
CREATE TABLE channel_index (
  platform    text COLLATE "C" NOT NULL,
  channel     text COLLATE "C" NOT NULL,
  endpoint_id text COLLATE "C" NOT NULL REFERENCES endpoints (id) ON DELETE CASCADE,
  bridge      integer NOT NULL,
  PRIMARY KEY (platform, channel, endpoint_id, bridge)
);
-- For re-indexing one endpoint and for the cascade of its deletion.
CREATE INDEX channel_index_endpoint ON channel_index (endpoint_id);

-- The lists are cut out of the record's text rather than reached with `->`: PostgreSQL refuses to
-- navigate an object holding a string with `\u0000` (its strings become text, which cannot hold NUL),
-- and any message may hold one. A record is written by JSON.stringify from a record of the initial
-- key order, so its text has `"channels":{"chat_a":[...],"chat_b":[...],"chat_c":[...],"chat_d":[...]}`
-- with each list an array of JSON strings; the elements of an array keep their text verbatim.
INSERT INTO channel_index (platform, channel, endpoint_id, bridge)
SELECT p.platform, c.value::text, e.id, c.ordinality - 1
FROM endpoints e,
     regexp_match(e.record,
       '"channels":\{"chat_a":(\[(?:"(?:[^"\\]|\\.)*"(?:,"(?:[^"\\]|\\.)*")*)?\]),'
       '"chat_b":(\[(?:"(?:[^"\\]|\\.)*"(?:,"(?:[^"\\]|\\.)*")*)?\]),'
       '"chat_c":(\[(?:"(?:[^"\\]|\\.)*"(?:,"(?:[^"\\]|\\.)*")*)?\]),'
       '"chat_d":(\[(?:"(?:[^"\\]|\\.)*"(?:,"(?:[^"\\]|\\.)*")*)?\])\}') AS m,
     unnest(ARRAY['chat_a', 'chat_b', 'chat_c', 'chat_d'], m) AS p (platform, list),
     json_array_elements(p.list::json) WITH ORDINALITY AS c (value, ordinality)
ON CONFLICT DO NOTHING;

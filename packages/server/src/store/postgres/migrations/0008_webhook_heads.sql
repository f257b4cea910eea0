-- Each webhook's queue head: `head` is true on the oldest entry of each (endpoint, platform, URL), so
-- a claim reads only heads (a partial index) and costs what it takes, however long a backlog is.
-- Triggers keep it on every path that adds or removes an entry. Every such path holds the endpoint's
-- row lock (writes, acknowledged and dropped deliveries, expiry, delete), so two of them never race
-- over one webhook's head; the trigger functions' queries see what committed before the lock was had.
ALTER TABLE outbox ADD COLUMN head boolean NOT NULL DEFAULT false;
UPDATE outbox SET head = true WHERE id IN (SELECT min(id) FROM outbox GROUP BY endpoint_id, platform, url);
CREATE INDEX outbox_heads ON outbox (next_attempt_at, id) WHERE head;

CREATE FUNCTION outbox_head_on_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.head := NOT EXISTS (SELECT 1 FROM outbox p WHERE p.endpoint_id = NEW.endpoint_id AND p.platform = NEW.platform AND p.url = NEW.url);
  RETURN NEW;
END $$;

CREATE FUNCTION outbox_head_on_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE outbox SET head = true
  WHERE id = (SELECT min(id) FROM outbox WHERE endpoint_id = OLD.endpoint_id AND platform = OLD.platform AND url = OLD.url);
  RETURN NULL;
END $$;

CREATE TRIGGER outbox_head_on_insert BEFORE INSERT ON outbox FOR EACH ROW EXECUTE FUNCTION outbox_head_on_insert();
CREATE TRIGGER outbox_head_on_delete AFTER DELETE ON outbox FOR EACH ROW WHEN (OLD.head) EXECUTE FUNCTION outbox_head_on_delete();

-- Each webhook's queue head, kept by the database: `outbox.head` is 1 on the oldest entry of each
-- (endpoint, platform, URL) and 0 on the rest, so a claim reads only heads (a partial index) and costs
-- what it takes, however long a webhook's backlog is. Triggers keep it on every path that adds or
-- removes an entry (a write, a delivery, a drop, an expiry, an import, a cascade), so no statement
-- has to remember it. The entries already queued get their heads here.
ALTER TABLE outbox ADD COLUMN head INTEGER NOT NULL DEFAULT 0;
UPDATE outbox SET head = 1 WHERE id IN (SELECT min(id) FROM outbox GROUP BY endpoint_id, platform, url);
CREATE INDEX outbox_heads ON outbox (next_attempt_at, id) WHERE head = 1;
CREATE TRIGGER outbox_head_on_insert AFTER INSERT ON outbox
WHEN NOT EXISTS (SELECT 1 FROM outbox p WHERE p.endpoint_id = NEW.endpoint_id AND p.platform = NEW.platform
                   AND p.url = NEW.url AND p.id < NEW.id)
BEGIN
  UPDATE outbox SET head = 1 WHERE id = NEW.id;
END;
CREATE TRIGGER outbox_head_on_delete AFTER DELETE ON outbox WHEN OLD.head = 1
BEGIN
  UPDATE outbox SET head = 1
  WHERE id = (SELECT min(id) FROM outbox WHERE endpoint_id = OLD.endpoint_id AND platform = OLD.platform AND url = OLD.url);
END;

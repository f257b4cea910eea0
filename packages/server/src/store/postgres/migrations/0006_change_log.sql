-- Each event carries the pending message's number as of its version (NULL when the endpoint was
-- idle), and the service-wide change log lists every event in commit order, for the stream of all
-- changes (GET /events). Positions start here (no backfill).
--
-- Why a position is taken at commit, under a lock: a sequence value taken during the write is in the
-- order the writes ran, not the order they committed, so a reader could see position 11 committed
-- while 10 is still in flight, move past it, and never see 10. Here the position is taken by a
-- deferred trigger, which runs as the transaction commits, after taking a transaction-level advisory
-- lock held until the commit has finished (PostgreSQL makes a commit visible before it releases the
-- transaction's locks). So the next position is taken only once every smaller one is committed and
-- visible, or rolled back for good: a reader that sees a position has seen, or will never see,
-- every smaller one, on every instance. The cost: commits that log changes pass through this lock one
-- at a time (each holds it for its commit's WAL flush); batched writes (one transaction per event-loop
-- turn) take it once per batch.
ALTER TABLE endpoint_events ADD COLUMN message_number bigint;

CREATE SEQUENCE change_log_position AS bigint;

CREATE TABLE change_log (
  position    bigint PRIMARY KEY,
  endpoint_id text COLLATE "C" NOT NULL,
  version     bigint NOT NULL,
  created_at  bigint NOT NULL
);
ALTER SEQUENCE change_log_position OWNED BY change_log.position;

CREATE FUNCTION chatbridge_log_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('chatbridge:change_log', 0));
  INSERT INTO change_log (position, endpoint_id, version, created_at)
    VALUES (nextval('change_log_position'), NEW.endpoint_id, NEW.version, NEW.created_at);
  RETURN NULL;
END
$$;

CREATE CONSTRAINT TRIGGER endpoint_events_change_log AFTER INSERT ON endpoint_events
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION chatbridge_log_change();

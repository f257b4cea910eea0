-- The rate-limit counters (rate-limiter-flexible's table, which it would otherwise create itself as
-- an ordinary table) are UNLOGGED: they are written on every request, and a counter needs no WAL and
-- no fsync. After a database crash PostgreSQL empties the table, which only restarts the windows.
-- Servers of the previous release created it logged; SET UNLOGGED converts it in place.
CREATE UNLOGGED TABLE IF NOT EXISTS rate_limits (
  key    varchar(255) PRIMARY KEY,
  points integer NOT NULL DEFAULT 0,
  expire bigint
);
ALTER TABLE rate_limits SET UNLOGGED;

// The event log, the change log and the change feed on PostgreSQL. The logs are written by the
// endpoint writes (rowWrites.ts, and the change log's trigger at commit); here they are read (sized
// in SQL first, so a read never loads the records it leaves out) and swept.
import type { ChangeFeed } from '../changeFeed.ts';
import { type ChangeEntry, type ChangeRead, type Changes, type EndpointEvent, missedChanges } from '../changes.ts';
import { type EventRow, LoggedEvent } from '../sql/rows.ts';
import { PostgresChangeFeed } from './changeFeed.ts';
import { type PostgresDatabase, prepared } from './database.ts';

/** The sweep of old events deletes at most this many rows per statement, and this many statements per call. */
const PRUNE_BATCH = 5000;
const PRUNE_MAX_BATCHES = 20;

const SQL = {
  // The events are sized first (octet_length of a text value reads its stored length, without
  // detoasting it), and only those within $5 bytes together (the first in any case) are read.
  eventsSince: `WITH sized AS (
                  SELECT version, octet_length(record) AS bytes, row_number() OVER w AS n, sum(octet_length(record)) OVER w AS upto
                  FROM endpoint_events WHERE endpoint_id = $1 AND version > $2 AND created_at >= $3
                  WINDOW w AS (ORDER BY version ROWS UNBOUNDED PRECEDING)
                  ORDER BY version LIMIT $4
                )
                SELECT s.version, s.bytes, e.record, e.message_number, e.kind FROM sized s JOIN endpoint_events e ON e.endpoint_id = $1 AND e.version = s.version
                WHERE s.n = 1 OR s.upto <= $5::bigint ORDER BY s.version`,
  // Entries of the change log after $1 within the age limit ($2), sized as eventsSince sizes events
  // (NULL bytes: the endpoint's log no longer keeps that event), the records of those within $4
  // bytes together (the first in any case) read.
  changesSince: `WITH c AS (
                   SELECT position, endpoint_id, version FROM change_log WHERE position > $1 AND created_at >= $2 ORDER BY position LIMIT $3
                 ), sized AS (
                   SELECT c.position, c.endpoint_id, c.version, octet_length(e.record) AS bytes,
                          row_number() OVER w AS n, sum(coalesce(octet_length(e.record), 0)) OVER w AS upto
                   FROM c LEFT JOIN endpoint_events e ON e.endpoint_id = c.endpoint_id AND e.version = c.version
                   WINDOW w AS (ORDER BY c.position ROWS UNBOUNDED PRECEDING)
                 )
                 SELECT s.position, s.endpoint_id, s.version, s.bytes, e.record, e.message_number, e.kind, (SELECT max(position) FROM change_log) AS newest
                 FROM sized s LEFT JOIN endpoint_events e ON e.endpoint_id = s.endpoint_id AND e.version = s.version
                 WHERE s.n = 1 OR s.upto <= $4::bigint ORDER BY s.position`,
  newestChange: 'SELECT coalesce(max(position), 0) AS n FROM change_log',
  // Entries are in commit order, so those past the age limit are a prefix.
  firstChange: 'SELECT position AS n FROM change_log WHERE created_at >= $1 ORDER BY position LIMIT 1',
  // A batch of the oldest entries at a time; the newest entry always stays.
  pruneChanges: `DELETE FROM change_log WHERE position IN (
                   SELECT position FROM (SELECT position, created_at FROM change_log ORDER BY position LIMIT $3) x
                   WHERE position < (SELECT max(position) FROM change_log)
                     AND (created_at < $1 OR position <= (SELECT max(position) FROM change_log) - $2))`,
  // The periodic sweep, a batch at a time. SKIP LOCKED: it never waits for a writer (which holds its
  // endpoint's row lock and may be pruning the same events), so it cannot deadlock with one.
  pruneEvents: `DELETE FROM endpoint_events WHERE (endpoint_id, version) IN (
                  SELECT endpoint_id, version FROM endpoint_events WHERE created_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED
                )`,
} as const;

const statement = (key: keyof typeof SQL, values: unknown[]) => prepared(key, SQL[key], values);

interface ChangeRow {
  position: number;
  endpoint_id: string;
  version: number;
  bytes: number | null;
  record: string | null;
  message_number: number | null;
  kind: string;
  newest: number;
}

export class PostgresChanges implements Changes {
  private readonly database: PostgresDatabase;

  constructor(database: PostgresDatabase) {
    this.database = database;
  }

  async eventsSince(id: string, afterVersion: number, limit: number, maxBytes = Number.MAX_SAFE_INTEGER): Promise<EndpointEvent[]> {
    const since = this.database.clock() - this.database.eventWindow.maxAgeMs;
    const { rows } = await this.database.pool.query<EventRow>(statement('eventsSince', [id, afterVersion, since, limit, maxBytes]));
    return rows.map((row) => new LoggedEvent(row));
  }

  async changesSince(afterPosition: number, limit: number, maxBytes = Number.MAX_SAFE_INTEGER): Promise<ChangeRead> {
    const { pool, clock, changeWindow } = this.database;
    const since = clock() - changeWindow.maxAgeMs;
    const { rows } = await pool.query<ChangeRow>(statement('changesSince', [afterPosition, since, limit, maxBytes]));
    const entries: ChangeEntry[] = rows.map((r) => ({
      position: r.position,
      endpointId: r.endpoint_id,
      version: r.version,
      event:
        r.record === null
          ? undefined
          : new LoggedEvent({ version: r.version, record: r.record, message_number: r.message_number, kind: r.kind }),
    }));
    const newest = rows[0]?.newest ?? (await pool.query<{ n: number }>(statement('newestChange', []))).rows[0]!.n;
    let first: number | undefined;
    if (!(afterPosition > newest || afterPosition === newest || entries[0]?.position === afterPosition + 1)) {
      first = (await pool.query<{ n: number }>(statement('firstChange', [since]))).rows[0]?.n;
    }
    return { entries, newest, missed: missedChanges(afterPosition, entries, newest, () => first) };
  }

  async prune(): Promise<number> {
    const { pool, clock, eventWindow, changeWindow } = this.database;
    const now = clock();
    let total = 0;
    for (let batch = 0; batch < PRUNE_MAX_BATCHES; batch++) {
      const deleted = (await pool.query(statement('pruneEvents', [now - eventWindow.maxAgeMs, PRUNE_BATCH]))).rowCount ?? 0;
      total += deleted;
      if (deleted < PRUNE_BATCH) break;
    }
    for (let batch = 0; batch < PRUNE_MAX_BATCHES; batch++) {
      const args = [now - changeWindow.maxAgeMs, changeWindow.maxChanges, PRUNE_BATCH];
      const deleted = (await pool.query(statement('pruneChanges', args))).rowCount ?? 0;
      total += deleted;
      if (deleted < PRUNE_BATCH) break;
    }
    return total;
  }

  /** A LISTEN connection of its own, beside the pool; it reconnects by itself. */
  async openFeed(hooks: { onError?: (err: Error) => void } = {}): Promise<ChangeFeed> {
    const { closed, options } = this.database;
    if (closed) throw new Error('the store is closed');
    return PostgresChangeFeed.start({
      connectionString: options.connectionString,
      ...(options.connectionTimeoutMs !== undefined && { connectionTimeoutMs: options.connectionTimeoutMs }),
      ...(hooks.onError && { onError: hooks.onError }),
    });
  }
}

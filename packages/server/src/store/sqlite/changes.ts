// The event log, the change log and the change feed on SQLite. The logs are written by the endpoint
// writes (rowWrites.ts); here they are read (sized first, then the records read one by one, so a read
// never loads the records it leaves out) and swept.
import type { StatementSync } from 'node:sqlite';
import type { ChangeFeed } from '../changeFeed.ts';
import { type ChangeEntry, type ChangeRead, type Changes, type EndpointEvent, missedChanges } from '../changes.ts';
import { LoggedEvent } from '../sql/rows.ts';
import type { SqliteDatabase } from './database.ts';
import type { RowWrites } from './rowWrites.ts';

/** The sweeps delete at most this many rows per statement (a few milliseconds). */
const PRUNE_BATCH = 1_000;

export class SqliteChanges implements Changes {
  private readonly database: SqliteDatabase;
  private readonly writes: RowWrites;
  private readonly othersCheckMs: number;
  private readonly st: Record<
    'eventSizes' | 'eventRecord' | 'changeSizes' | 'newestChange' | 'firstChange' | 'pruneEvents' | 'pruneChanges',
    StatementSync
  >;
  /** While a change feed is open: watches for commits of other processes (see openFeed). */
  private othersWatch: NodeJS.Timeout | undefined;

  constructor(database: SqliteDatabase, writes: RowWrites, othersCheckMs: number) {
    this.database = database;
    this.writes = writes;
    this.othersCheckMs = othersCheckMs;
    const q = (sql: string) => database.prepare(sql);
    this.st = {
      // The endpoint's listed events (?1, its list of IDs) after version ?3, with their sizes:
      // octet_length reads a TEXT value's length from the row header without loading the value, so
      // this costs the same for records of any size. Nothing stored after the record (created_at) is
      // read here: reaching it walks every page of the record. The records are then read one by one,
      // with their age.
      eventSizes: q(
        `SELECT e.id, e.version, octet_length(e.record) AS bytes FROM json_each(?1) j JOIN event_log e ON e.id = j.value
         WHERE e.endpoint_id = ?2 AND e.version > ?3 ORDER BY e.version LIMIT ?4`,
      ),
      // As bytes: see LoggedEvent.
      eventRecord: q(
        'SELECT CAST(record AS BLOB) AS record, created_at, message_number, kind FROM event_log WHERE id = ? AND endpoint_id = ?',
      ),
      // Entries after ?1 within the age limit, with their events' sizes (octet_length, as eventSizes:
      // no record is loaded here); NULL bytes: the endpoint's log no longer keeps that event.
      changeSizes: q(
        `SELECT c.position, c.endpoint_id, c.version, octet_length(e.record) AS bytes
         FROM change_log c LEFT JOIN event_log e ON e.id = c.position AND e.endpoint_id = c.endpoint_id
         WHERE c.position > ?1 AND c.created_at >= ?2 ORDER BY c.position LIMIT ?3`,
      ),
      newestChange: q('SELECT coalesce(max(position), 0) AS n FROM change_log'),
      // The oldest entry within the age limit: entries are in commit order, so those past it are a prefix.
      firstChange: q('SELECT position AS n FROM change_log WHERE created_at >= ? ORDER BY position LIMIT 1'),
      // The log is in commit order, so the events past the age limit are a prefix of it: each batch
      // looks at the oldest rows only (never the whole table), and a row stamped later than its
      // successors (a clock step back) only holds the sweep up until it ages itself.
      pruneEvents: q(
        `DELETE FROM event_log WHERE id IN (
           SELECT id FROM (SELECT id, created_at FROM event_log ORDER BY id LIMIT ?2) WHERE created_at < ?1)`,
      ),
      // As pruneEvents, a batch of the oldest entries at a time; the newest entry always stays.
      pruneChanges: q(
        `DELETE FROM change_log WHERE position IN (
           SELECT position FROM (SELECT position, created_at FROM change_log ORDER BY position LIMIT ?3)
           WHERE position < (SELECT max(position) FROM change_log)
             AND (created_at < ?1 OR position <= (SELECT max(position) FROM change_log) - ?2))`,
      ),
    };
  }

  async eventsSince(id: string, afterVersion: number, limit: number, maxBytes = Number.MAX_SAFE_INTEGER): Promise<EndpointEvent[]> {
    const row = this.writes.read(id);
    if (!row || row.version <= afterVersion) return [];
    const listed = this.writes.listedEventsOf(id, row);
    const since = this.database.clock() - this.database.eventWindow.maxAgeMs;
    const sized = this.st.eventSizes.all(listed, id, afterVersion, limit) as unknown as { id: number; version: number; bytes: number }[];
    const events: EndpointEvent[] = [];
    let total = 0;
    for (const { id: eventId, version, bytes } of sized) {
      if (events.length > 0 && total + bytes > maxBytes) break;
      const found = this.st.eventRecord.get(eventId, id) as
        | { record: Uint8Array; created_at: number; message_number: number | null; kind: string }
        | undefined;
      if (!found) break; // swept by another process since it was sized: the events after it wait for the next read
      // Past the age limit: never returned. Such events are the oldest, so they come first.
      if (found.created_at < since) continue;
      events.push(new LoggedEvent({ version, record: found.record, message_number: found.message_number, kind: found.kind }));
      total += bytes;
    }
    return events;
  }

  async changesSince(afterPosition: number, limit: number, maxBytes = Number.MAX_SAFE_INTEGER): Promise<ChangeRead> {
    const since = this.database.clock() - this.database.changeWindow.maxAgeMs;
    const sized = this.st.changeSizes.all(afterPosition, since, limit) as unknown as {
      position: number;
      endpoint_id: string;
      version: number;
      bytes: number | null;
    }[];
    const entries: ChangeEntry[] = [];
    let total = 0;
    for (const { position, endpoint_id: endpointId, version, bytes } of sized) {
      if (entries.length > 0 && total + (bytes ?? 0) > maxBytes) break;
      const found =
        bytes === null
          ? undefined
          : (this.st.eventRecord.get(position, endpointId) as
              | { record: Uint8Array; message_number: number | null; kind: string }
              | undefined);
      const event = found && new LoggedEvent({ version, record: found.record, message_number: found.message_number, kind: found.kind });
      entries.push({ position, endpointId, version, event });
      total += bytes ?? 0;
    }
    const newest = (this.st.newestChange.get() as { n: number }).n;
    return {
      entries,
      newest,
      missed: missedChanges(afterPosition, entries, newest, () => (this.st.firstChange.get(since) as { n: number } | undefined)?.n),
    };
  }

  /** In batches, yielding between them: node:sqlite blocks the event loop while a statement runs. */
  async prune(): Promise<number> {
    const now = this.database.clock();
    const before = now - this.database.eventWindow.maxAgeMs;
    const changesBefore = now - this.database.changeWindow.maxAgeMs;
    let total = 0;
    for (const [prune, args] of [
      [this.st.pruneEvents, [before, PRUNE_BATCH]],
      [this.st.pruneChanges, [changesBefore, this.database.changeWindow.maxChanges, PRUNE_BATCH]],
    ] as const) {
      while (this.database.isOpen) {
        const deleted = Number(prune.run(...args).changes);
        total += deleted;
        if (deleted < PRUNE_BATCH) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    return total;
  }

  /**
   * The in-process hub hears this process's commits. Another process's (the CLI rotating a token or
   * deleting an endpoint) change `PRAGMA data_version`, checked every `othersCheckMs`: then every
   * stream looks again, and one whose token was rotated or whose endpoint was deleted ends. Without
   * this it went on until its next heartbeat.
   */
  async openFeed(): Promise<ChangeFeed> {
    if (!this.othersWatch) {
      const dataVersion = this.database.prepare('PRAGMA data_version');
      let seen = dataVersion.get();
      this.othersWatch = setInterval(() => {
        const now = dataVersion.get();
        if ((now as { data_version: number }).data_version === (seen as { data_version: number }).data_version) return;
        seen = now;
        this.database.hub.publishToAll();
      }, this.othersCheckMs);
      this.othersWatch.unref();
    }
    return this.database.hub.feed();
  }

  /** Stops watching for other processes' commits. */
  close(): void {
    clearInterval(this.othersWatch);
  }
}

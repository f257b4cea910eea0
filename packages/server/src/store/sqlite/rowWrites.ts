// An endpoint's write on SQLite, shared by the aggregates that write one (an update, a delivery's
// completion): inside the caller's transaction, the row (its version + 1), the event of that version
// and the change-log entry, the pruned event log, the outbox, the message log and the lookup index.
import type { StatementSync } from 'node:sqlite';
import { queueJson } from '../../domain/messageQueue.ts';
import { messageNumberOf } from '../changes.ts';
import type { ChangeKind } from '../../domain/row.ts';
import type { Decision, StoredEndpoint } from '../endpoints.ts';
import { type ChannelEntry, changedChannelEntries } from '../sql/channelIndex.ts';
import { type EndpointRow, StoredRow, toStored } from '../sql/rows.ts';
import type { SqliteDatabase } from './database.ts';
import type { SqliteMessageLog } from './messageLog.ts';

/** What a transaction's write step returns: the caller's result and, if it wrote, the new row. */
export interface Written<T> {
  result: T;
  row?: StoredEndpoint;
}

/**
 * An endpoint's logged event IDs, oldest first, as the JSON array text its row stores, and how many.
 * An update appends to the text and drops from its front: no array to copy, parse or serialise.
 */
interface EventList {
  text: string;
  count: number;
}

/**
 * A row as this process has just committed it, with the list of its logged events' IDs: the
 * endpoint's next update extends that list instead of reading it back from the row (a statement per
 * update). Its record is not kept parsed: rows kept a while go to V8's old generation, and collecting
 * them there costs more than the parse would save.
 */
class CommittedRow extends StoredRow {
  readonly events: EventList;

  constructor(row: EndpointRow, events: EventList) {
    super(row);
    this.events = events;
  }
}

type StatementName =
  | 'get'
  | 'write'
  | 'dropStale'
  | 'enqueue'
  | 'eventIds'
  | 'logEvent'
  | 'logChange'
  | 'dropEvent'
  | 'dropDeliveryTo'
  | 'unindex'
  | 'index';

export class RowWrites {
  private readonly database: SqliteDatabase;
  private readonly messages: SqliteMessageLog;
  private readonly st: Record<StatementName, StatementSync>;

  constructor(database: SqliteDatabase, messages: SqliteMessageLog) {
    this.database = database;
    this.messages = messages;
    const q = (sql: string) => database.prepare(sql);
    this.st = {
      get: q('SELECT token_hash, record, message_seq, pending_since, version, queue, last_change FROM endpoints WHERE id = ?'),
      // Compare-and-set on the version read in the same transaction. No RETURNING: the new version is
      // known (RETURNING's result set: 2-3 us per update with the statements alone, within the noise
      // of a whole request).
      write: q(
        `UPDATE endpoints SET record = ?1, message_seq = ?2, pending_since = ?3, event_ids = ?4, version = ?6 + 1, queue = ?7, last_change = ?8,
           updated_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?5 AND version = ?6`,
      ),
      // Every create of an endpoint that has nothing unread (an edit or delete of a copy made already
      // still goes); one under way is left to finish, so its answer still records the copy's ID.
      dropStale: q("DELETE FROM outbox WHERE endpoint_id = ? AND kind = 'create' AND lease_until <= ?"),
      enqueue: q(
        `INSERT INTO outbox (endpoint_id, message_seq, platform, url, payload, next_attempt_at, expires_at, kind)
         VALUES (?, ?, ?, ?, ?, 0, ?, ?) ON CONFLICT DO NOTHING`,
      ),
      eventIds: q('SELECT event_ids FROM endpoints WHERE id = ?'),
      logEvent: q('INSERT INTO event_log (endpoint_id, version, record, created_at, message_number, kind) VALUES (?, ?, ?, ?, ?, ?)'),
      logChange: q('INSERT INTO change_log (position, endpoint_id, version, created_at) VALUES (?, ?, ?, ?)'),
      // By ID and endpoint: the ID comes from the endpoint's own list.
      dropEvent: q('DELETE FROM event_log WHERE id = ? AND endpoint_id = ?'),
      dropDeliveryTo: q('DELETE FROM outbox WHERE endpoint_id = ? AND platform = ? AND url = ?'),
      unindex: q('DELETE FROM channel_index WHERE endpoint_id = ?'),
      index: q('INSERT INTO channel_index (platform, channel, endpoint_id, bridge) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING'),
    };
  }

  /** The committed row (from the cache when it can be), or the row as this transaction sees it. */
  read(id: string): StoredEndpoint | undefined {
    return this.database.cache.get(id, this.database.db.isTransaction, () => toStored(this.st.get.get(id) as EndpointRow | undefined));
  }

  /**
   * The text of the endpoint's list of logged event IDs: from the row this process committed when it
   * is the one read, else read on its own (a statement that reads the list from the row with the
   * record: the list is stored after the record, and reading it walks the record's pages once).
   */
  listedEventsOf(id: string, row: StoredEndpoint): string {
    return row instanceof CommittedRow ? row.events.text : this.listedEvents(id).text;
  }

  /** Reads the row inside the caller's transaction, lets `decide` choose, and writes what it decided. */
  decideAndWrite<T>(id: string, decide: (current: StoredEndpoint | undefined) => Decision<T>): Written<T> {
    const current = this.read(id);
    return this.commit(id, current, decide(current));
  }

  /**
   * After the commit: the written row goes into the cache (the next update or read of this endpoint
   * needs no SQLite read or parse of it), and the change feed hears of the new version.
   */
  committed<T>(id: string, { result, row }: Written<T>): T {
    if (row) {
      this.database.cache.remember(id, row);
      this.database.hub.publish(id, row.version);
    }
    return result;
  }

  /** Writes the endpoint's lookup-index rows, inside the caller's transaction (`replace`: its old ones go first). */
  indexChannels(id: string, entries: ChannelEntry[], replace: boolean): void {
    if (replace) this.st.unindex.run(id);
    for (const e of entries) this.st.index.run(e.platform, e.channel, id, e.bridge);
  }

  /**
   * Writes what `decide` decided, inside the caller's transaction: the row (its version + 1), the
   * event of that version, the pruned log and the outbox. Returns the new row, if it wrote.
   */
  private commit<T>(id: string, current: StoredEndpoint | undefined, { write, result }: Decision<T>): Written<T> {
    if (!write || !current) return { result }; // nothing to write, or no such row
    const { record, state, deliveries = [] } = write;
    const json = write.recordJson ?? JSON.stringify(record);
    this.database.cache.evict(id); // until the commit: reads later in this transaction see the new row
    const version = current.version + 1;
    const kind = write.event?.kind ?? 'record';
    const listed = current instanceof CommittedRow ? current.events : undefined;
    const events = this.logEvent(id, version, kind, write.event?.json ?? json, messageNumberOf(state), listed);
    // `current` was read in this transaction, so the row is there at that version; if not, the throw
    // undoes the logged event with the rest of this update (the group commit's or transaction's rollback).
    const queue = queueJson(state.queue);
    if (this.st.write.run(json, state.seq, state.pendingSince, events.text, id, current.version, queue, kind).changes !== 1) {
      throw new Error(`endpoint ${id} changed under its write`);
    }
    if (write.messages) this.messages.apply(id, write.messages);
    if (state.pendingSince === null) this.st.dropStale.run(id, this.database.clock());
    for (const d of write.dropDeliveriesTo ?? []) this.st.dropDeliveryTo.run(id, d.platform, d.url);
    const entries = changedChannelEntries(current.recordJson, record);
    if (entries) this.indexChannels(id, entries, true);
    for (const d of deliveries)
      this.st.enqueue.run(id, d.number ?? state.seq, d.platform, d.url, d.payload, d.expiresAt, d.kind ?? 'create');
    const row = new CommittedRow(
      {
        token_hash: current.tokenHash,
        record: json,
        message_seq: state.seq,
        pending_since: state.pendingSince,
        version,
        queue,
        last_change: kind,
      },
      events,
    );
    return { result, row };
  }

  /**
   * Appends the event of `version` to the log and drops the endpoint's events beyond the window;
   * returns the endpoint's new list, for the row's write in the same transaction. `listed`: the row's
   * list when this process knows it (a row it committed), else it is read from the row.
   */
  private logEvent(
    id: string,
    version: number,
    kind: ChangeKind,
    json: string,
    messageNumber: number | null,
    listed: EventList | undefined,
  ): EventList {
    const before = listed ?? this.listedEvents(id);
    const now = this.database.clock();
    const added = Number(this.st.logEvent.run(id, version, json, now, messageNumber, kind).lastInsertRowid);
    this.st.logChange.run(added, id, version, now);
    let text = before.count === 0 ? `[${added}]` : `${before.text.slice(0, -1)},${added}]`;
    let count = before.count + 1;
    for (; count > this.database.eventWindow.maxEvents; count--) {
      const comma = text.indexOf(','); // -1: the list's last entry
      this.st.dropEvent.run(Number(text.slice(1, comma === -1 ? -1 : comma)), id);
      text = comma === -1 ? '[]' : `[${text.slice(comma + 1)}`;
    }
    return { text, count };
  }

  private listedEvents(id: string): EventList {
    const text = (this.st.eventIds.get(id) as { event_ids: string } | undefined)?.event_ids ?? '[]';
    let count = text === '[]' ? 0 : 1;
    for (let at = text.indexOf(','); at !== -1; at = text.indexOf(',', at + 1)) count++;
    return { text, count };
  }
}

// An endpoint's write on PostgreSQL, shared by the aggregates that write one (an update, a delivery's
// completion): one statement writes the row (its version + 1), the event of that version, the pruned
// event log, the outbox and the lookup index, and notifies (pg_notify, delivered on commit) so every
// instance's change feed hears of it. The change-log entry is added by a trigger at commit (migration
// 0006); the message log's writes follow in the same transaction (messageLog.ts).
//
// Lock order is always endpoint row, then its outbox rows and event-log rows (update, completion and
// the cascade of delete all follow it; a batch of writes locks its endpoint rows in ID order first;
// claim/retry/drop touch one outbox statement and hold nothing else; the event-log sweep skips rows
// it would have to wait for), so transactions cannot deadlock each other.
import type pg from 'pg';
import { queueJson } from '../../domain/messageQueue.ts';
import type { Decision, StoredEndpoint } from '../endpoints.ts';
import { type ChannelEntry, changedChannelEntries } from '../sql/channelIndex.ts';
import { type EndpointRow, toStored } from '../sql/rows.ts';
import { CHANGES_CHANNEL } from './changeFeed.ts';
import { type PostgresDatabase, type Queryable, prepared } from './database.ts';
import type { PostgresMessageLog } from './messageLog.ts';

/**
 * A channel ID as the lookup index keeps it: its JSON string literal, as JSON.stringify writes it into
 * the record (a text column cannot hold NUL, which a channel ID may). `json` (not `jsonb`) values keep
 * their text verbatim, so the migration and imports derive the same key from a stored record.
 */
export const channelKey = (channel: string) => JSON.stringify(channel);

/** `<endpointId>:<version>` on the changes channel, sent when the statement's transaction commits. */
export const NOTIFY = (versionColumn: string) => `pg_notify('${CHANGES_CHANNEL}', $1::text || ':' || ${versionColumn}::text)`;

const COLUMNS = 'token_hash, record, message_seq, pending_since, version, queue, last_change';

const SQL = {
  get: `SELECT ${COLUMNS} FROM endpoints WHERE id = $1`,
  lock: `SELECT ${COLUMNS} FROM endpoints WHERE id = $1 FOR UPDATE`,
  // The row (version + 1) with its queue summary $20 and the kind $21 of its change (an edit or delete
  // logs its event's data $22 instead of the record), only if it still has version $8 and token
  // digest $9, and in the same statement: the outbox entries no message waits for: every create when
  // nothing is unread ($5 NULL: an edit or delete of a copy made already still goes; a create under
  // way, leased past $6, is left to finish so that its answer records the copy's ID), and those to the webhooks ($18 platforms, $19 URLs) the decision
  // dropped; when $14, the lookup index's rows of the endpoint become the rows $15-$17 (those not
  // among them are deleted; the new ones are added, the others stand, so no statement both deletes
  // and inserts one key); the event of the new version (at $6, epoch ms); the endpoint's events
  // beyond the window of $7 events, a range of the primary key (events past the age limit are never
  // returned, and the sweep deletes them); the new deliveries ($10-$13, $23 kinds, $24 message numbers,
  // one array per column); and
  // the notification. Every sub-statement depends on `written`, so when the row has changed nothing
  // is written at all. The sub-statements share one snapshot, so the prune cannot see (or remove)
  // the event being added. It commits on its own (compare-and-set) or inside a transaction holding
  // the row lock, where its conditions always hold.
  write: `WITH written AS (
            UPDATE endpoints SET record = $2, message_seq = $3, pending_since = $4, version = version + 1, queue = $20, last_change = $21,
                                 updated_at = now()
            WHERE id = $1 AND version = $8 AND token_hash = $9 RETURNING version
          ), stale AS (
            DELETE FROM outbox
            WHERE endpoint_id = $1 AND EXISTS (SELECT 1 FROM written)
              AND (($5::bigint IS NULL AND kind = 'create' AND lease_until <= $6::bigint)
                   OR (platform, url) IN (SELECT * FROM unnest($18::text[], $19::text[])))
          ), unindexed AS (
            DELETE FROM channel_index
            WHERE $14::boolean AND endpoint_id = $1 AND EXISTS (SELECT 1 FROM written)
              AND (platform, channel, bridge) NOT IN (SELECT * FROM unnest($15::text[], $16::text[], $17::int[]))
          ), indexed AS (
            INSERT INTO channel_index (platform, channel, endpoint_id, bridge)
            SELECT n.platform, n.channel, $1, n.bridge FROM written, unnest($15::text[], $16::text[], $17::int[]) AS n (platform, channel, bridge)
            WHERE $14::boolean
            ON CONFLICT DO NOTHING
          ), logged AS (
            INSERT INTO endpoint_events (endpoint_id, version, record, created_at, message_number, kind)
            SELECT $1, version, coalesce($22, $2), $6::bigint, $5::bigint, $21 FROM written
          ), pruned AS (
            DELETE FROM endpoint_events WHERE endpoint_id = $1 AND version <= (SELECT version FROM written) - $7::bigint
          ), queued AS (
            INSERT INTO outbox (endpoint_id, message_seq, platform, url, payload, next_attempt_at, expires_at, kind)
            SELECT $1, d.number, d.platform, d.url, d.payload, 0, d.expires_at, d.kind
            FROM written, unnest($10::text[], $11::text[], $12::text[], $13::bigint[], $23::text[], $24::bigint[])
              AS d (platform, url, payload, expires_at, kind, number)
            ON CONFLICT DO NOTHING
          )
          SELECT version, ${NOTIFY('version')} FROM written`,
} as const;

const statement = (key: keyof typeof SQL, values: unknown[]) => prepared(key, SQL[key], values);

export type Write = NonNullable<Decision<unknown>['write']>;

export class PostgresRowWrites {
  private readonly database: PostgresDatabase;
  readonly messages: PostgresMessageLog;

  constructor(database: PostgresDatabase, messages: PostgresMessageLog) {
    this.database = database;
    this.messages = messages;
  }

  /** The committed row, as a statement of its own. */
  async read(id: string): Promise<StoredEndpoint | undefined> {
    return toStored((await this.database.pool.query<EndpointRow>(statement('get', [id]))).rows[0]);
  }

  /** The row, locked until the caller's transaction ends. */
  async lock(client: pg.PoolClient, id: string): Promise<StoredEndpoint | undefined> {
    return toStored((await client.query<EndpointRow>(statement('lock', [id]))).rows[0]);
  }

  /**
   * Commits what `decide` decided about `current` (inside the caller's transaction, or on its own),
   * only if the row still has `current`'s version and token digest; false if it has changed or gone.
   */
  async write(
    db: Queryable,
    id: string,
    current: StoredEndpoint,
    write: Write,
    entries: ChannelEntry[] | undefined = changedChannelEntries(current.recordJson, write.record),
  ): Promise<boolean> {
    const { record, state, deliveries = [], dropDeliveriesTo = [] } = write;
    const params = [
      id,
      write.recordJson ?? JSON.stringify(record),
      state.seq,
      state.pendingSince,
      state.pendingSince === null ? null : state.seq,
      this.database.clock(),
      this.database.eventWindow.maxEvents,
      current.version,
      current.tokenHash,
      deliveries.map((d) => d.platform),
      deliveries.map((d) => d.url),
      deliveries.map((d) => d.payload),
      deliveries.map((d) => d.expiresAt),
      entries !== undefined,
      (entries ?? []).map((e) => e.platform),
      (entries ?? []).map((e) => channelKey(e.channel)),
      (entries ?? []).map((e) => e.bridge),
      dropDeliveriesTo.map((d) => d.platform),
      dropDeliveriesTo.map((d) => d.url),
      queueJson(state.queue),
      write.event?.kind ?? 'record',
      write.event?.json ?? null,
      deliveries.map((d) => d.kind ?? 'create'),
      deliveries.map((d) => d.number ?? state.seq),
    ];
    return (await db.query(statement('write', params))).rowCount === 1;
  }

  /** Decides about the locked row and writes the decision with its message-log writes, inside the caller's transaction. */
  async decideLocked<T>(
    client: pg.PoolClient,
    id: string,
    current: StoredEndpoint | undefined,
    decide: (current: StoredEndpoint | undefined) => Decision<T>,
  ): Promise<T> {
    const { write, result } = decide(current);
    if (write && current && (await this.write(client, id, current, write)) && write.messages) {
      await this.messages.apply(client, id, write.messages);
    }
    return result;
  }
}

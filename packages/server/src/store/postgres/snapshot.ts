// Export and import on PostgreSQL.
import type { EndpointRecord } from '../../domain/record.ts';
import type { StoredBot } from '../bots.ts';
import { type EndpointSnapshot, type ImportOutcome, SNAPSHOT_PAGE_ROWS, type Snapshot } from '../snapshot.ts';
import { importOutcome, isRefused, planBotImport } from '../sql/botImport.ts';
import { channelEntries } from '../sql/channelIndex.ts';
import { type SnapshotRow, batchesOf, snapshotColumns, snapshotPages } from '../sql/snapshotRows.ts';
import type { PostgresBots } from './bots.ts';
import type { PostgresDatabase } from './database.ts';
import { channelKey } from './rowWrites.ts';

/** The longest one statement of an import may run (staging a batch, or the merge of every row). */
const IMPORT_STATEMENT_TIMEOUT_MS = 300_000;

const SQL = {
  // A message's IDs as one JSON object by platform.
  page: `SELECT e.id, e.token_hash, e.record, e.message_seq, e.pending_since, e.version, e.queue, e.last_change,
           coalesce((SELECT json_agg(json_build_object('messageSeq', o.message_seq, 'kind', o.kind, 'platform', o.platform, 'url', o.url,
                                                       'payload', o.payload, 'attempts', o.attempts, 'nextAttemptAt', o.next_attempt_at,
                                                       'expiresAt', o.expires_at)
                                     ORDER BY o.id)
                     FROM outbox o WHERE o.endpoint_id = e.id), '[]')::text AS deliveries,
           coalesce((SELECT json_agg(json_build_object('number', m.number, 'sender', m.sender, 'senderChannel', m.sender_channel,
                                                       'message', m.message, 'unread', m.unread, 'expired', m.expired, 'createdAt', m.created_at,
                                                       'replyTo', m.reply_to, 'edits', m.edits, 'editedAt', m.edited_at, 'deletedAt', m.deleted_at,
                                                       'ids', (SELECT json_object_agg(i.platform, i.message_id) FROM message_ids i
                                                               WHERE i.endpoint_id = m.endpoint_id AND i.number = m.number))
                                     ORDER BY m.number)
                     FROM messages m WHERE m.endpoint_id = e.id), '[]')::text AS messages
         FROM endpoints e WHERE e.id > $1 ORDER BY e.id LIMIT $2`,
  stagingTables: `CREATE TEMP TABLE import_endpoints (
                    id text COLLATE "C" PRIMARY KEY, token_hash bytea NOT NULL, record text NOT NULL, message_seq bigint NOT NULL,
                    pending_since bigint, version bigint NOT NULL, queue text NOT NULL, last_change text NOT NULL,
                    fresh boolean) ON COMMIT DROP;
                  CREATE TEMP TABLE import_messages (
                    endpoint_id text COLLATE "C" NOT NULL, number bigint NOT NULL, sender text, sender_channel text, message text NOT NULL,
                    unread integer NOT NULL, expired integer NOT NULL, created_at bigint NOT NULL, reply_to bigint, edits integer NOT NULL,
                    edited_at bigint, deleted_at bigint) ON COMMIT DROP;
                  CREATE TEMP TABLE import_message_ids (
                    endpoint_id text COLLATE "C" NOT NULL, platform text NOT NULL, message_id text COLLATE "C" NOT NULL,
                    number bigint NOT NULL) ON COMMIT DROP;
                  CREATE TEMP TABLE import_deliveries (
                    ord bigint GENERATED ALWAYS AS IDENTITY, endpoint_id text COLLATE "C" NOT NULL, message_seq bigint NOT NULL,
                    kind text NOT NULL, platform text NOT NULL, url text NOT NULL, payload text NOT NULL, attempts integer NOT NULL,
                    next_attempt_at bigint NOT NULL, expires_at bigint NOT NULL) ON COMMIT DROP;
                  CREATE TEMP TABLE import_channels (
                    endpoint_id text COLLATE "C" NOT NULL, platform text COLLATE "C" NOT NULL, channel text COLLATE "C" NOT NULL,
                    bridge integer NOT NULL) ON COMMIT DROP`,
  stage: `INSERT INTO import_endpoints (id, token_hash, record, message_seq, pending_since, version, queue, last_change)
          SELECT * FROM unnest($1::text[], $2::bytea[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[], $7::text[], $8::text[])`,
  stageMessages: `INSERT INTO import_messages (endpoint_id, number, sender, sender_channel, message, unread, expired, created_at,
                                               reply_to, edits, edited_at, deleted_at)
                  SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::integer[], $7::integer[], $8::bigint[],
                                       $9::bigint[], $10::integer[], $11::bigint[], $12::bigint[])`,
  stageMessageIds: `INSERT INTO import_message_ids (endpoint_id, platform, message_id, number)
                    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[])`,
  insertMessages: `INSERT INTO messages (endpoint_id, number, sender, sender_channel, message, unread, expired, created_at,
                                         reply_to, edits, edited_at, deleted_at)
                   SELECT m.endpoint_id, m.number, m.sender, m.sender_channel, m.message, m.unread, m.expired, m.created_at,
                          m.reply_to, m.edits, m.edited_at, m.deleted_at
                   FROM import_messages m JOIN import_endpoints s ON s.id = m.endpoint_id WHERE s.fresh`,
  // After the messages: an ID belongs to its message (a foreign key).
  insertMessageIds: `INSERT INTO message_ids (endpoint_id, platform, message_id, number)
                     SELECT i.endpoint_id, i.platform, i.message_id, i.number
                     FROM import_message_ids i JOIN import_endpoints s ON s.id = i.endpoint_id WHERE s.fresh`,
  stageDeliveries: `INSERT INTO import_deliveries (endpoint_id, message_seq, kind, platform, url, payload, attempts, next_attempt_at, expires_at)
                    SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::integer[], $8::bigint[],
                                         $9::bigint[])`,
  conflicts: `SELECT s.id FROM import_endpoints s JOIN endpoints e ON e.id = s.id
              WHERE e.token_hash <> s.token_hash OR e.record <> s.record OR e.message_seq <> s.message_seq
                 OR e.pending_since IS DISTINCT FROM s.pending_since OR e.version <> s.version OR e.queue <> s.queue
              ORDER BY s.id`,
  existing: 'SELECT count(*) AS n FROM import_endpoints s JOIN endpoints e ON e.id = s.id',
  markFresh: 'UPDATE import_endpoints s SET fresh = NOT EXISTS (SELECT 1 FROM endpoints e WHERE e.id = s.id)',
  // No ON CONFLICT: an endpoint another instance creates meanwhile fails the whole import instead of
  // leaving it half done.
  insert: `INSERT INTO endpoints (id, token_hash, record, message_seq, pending_since, version, queue, last_change)
           SELECT id, token_hash, record, message_seq, pending_since, version, queue, last_change FROM import_endpoints WHERE fresh`,
  insertDeliveries: `INSERT INTO outbox (endpoint_id, message_seq, kind, platform, url, payload, attempts, next_attempt_at, expires_at)
                     SELECT d.endpoint_id, d.message_seq, d.kind, d.platform, d.url, d.payload, d.attempts, d.next_attempt_at, d.expires_at
                     FROM import_deliveries d JOIN import_endpoints s ON s.id = d.endpoint_id WHERE s.fresh
                     ORDER BY d.ord`,
  stageChannels: `INSERT INTO import_channels (endpoint_id, platform, channel, bridge)
                  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[])`,
  // The lookup index of the endpoints inserted.
  indexInserted: `INSERT INTO channel_index (platform, channel, endpoint_id, bridge)
                  SELECT c.platform, c.channel, c.endpoint_id, c.bridge FROM import_channels c JOIN import_endpoints s ON s.id = c.endpoint_id
                  WHERE s.fresh
                  ON CONFLICT DO NOTHING`,
  // No ON CONFLICT: a bot another instance creates meanwhile fails the whole import.
  insertBots: 'INSERT INTO bots (id, platform, key_hash) SELECT * FROM unnest($1::text[], $2::text[], $3::bytea[])',
} as const;

export class PostgresSnapshot implements Snapshot {
  readonly source = 'postgres';
  private readonly database: PostgresDatabase;
  private readonly bots: PostgresBots;

  constructor(database: PostgresDatabase, bots: PostgresBots) {
    this.database = database;
    this.bots = bots;
  }

  exportRows(): AsyncIterable<EndpointSnapshot> {
    return snapshotPages(async (after) => (await this.database.pool.query<SnapshotRow>(SQL.page, [after, SNAPSHOT_PAGE_ROWS])).rows);
  }

  /**
   * One transaction on one connection: the rows are staged in TEMP tables (dropped at its end) a
   * batch per statement, then conflicts are looked for and, if there are none, the new endpoints,
   * their message logs (with their copies' IDs) and their deliveries are inserted. The statements get IMPORT_STATEMENT_TIMEOUT_MS (a merge of many
   * thousand rows outlasts a request's limit).
   */
  async importRows(
    rows: AsyncIterable<EndpointSnapshot> | Iterable<EndpointSnapshot>,
    bots?: readonly StoredBot[],
  ): Promise<ImportOutcome> {
    return this.database.transaction(async (client) => {
      await client.query(`SET LOCAL statement_timeout = ${IMPORT_STATEMENT_TIMEOUT_MS}`);
      await client.query(SQL.stagingTables);
      for await (const batch of batchesOf(rows, SNAPSHOT_PAGE_ROWS)) {
        const { endpoints: e, deliveries: d, messages: m, messageIds: i } = snapshotColumns(batch);
        await client.query(SQL.stage, [e.id, e.tokenHash, e.record, e.seq, e.pendingSince, e.version, e.queue, e.lastChange]);
        if (m.endpointId.length > 0) {
          const values = [m.endpointId, m.number, m.sender, m.senderChannel, m.message, m.unread, m.expired, m.createdAt];
          await client.query(SQL.stageMessages, [...values, m.replyTo, m.edits, m.editedAt, m.deletedAt]);
        }
        if (i.endpointId.length > 0) await client.query(SQL.stageMessageIds, [i.endpointId, i.platform, i.messageId, i.number]);
        if (d.endpointId.length > 0) {
          const values = [d.endpointId, d.seq, d.kind, d.platform, d.url, d.payload, d.attempts, d.nextAttemptAt, d.expiresAt];
          await client.query(SQL.stageDeliveries, values);
        }
        // The lookup index's rows, derived here: SQL cannot read a record holding `\u0000` as an object.
        const channels = batch.flatMap((r) => channelEntries(JSON.parse(r.recordJson) as EndpointRecord).map((c) => ({ id: r.id, ...c })));
        if (channels.length > 0) {
          await client.query(SQL.stageChannels, [
            channels.map((c) => c.id),
            channels.map((c) => c.platform),
            channels.map((c) => channelKey(c.channel)),
            channels.map((c) => c.bridge),
          ]);
        }
      }
      const conflicts = (await client.query<{ id: string }>(SQL.conflicts)).rows.map((r) => r.id);
      const existing = Number((await client.query<{ n: string }>(SQL.existing)).rows[0]!.n);
      const plan = { conflicts, unchanged: existing - conflicts.length, bots: bots && planBotImport(await this.bots.listOn(client), bots) };
      if (isRefused(plan)) return importOutcome(plan, 0);
      await client.query(SQL.markFresh);
      const imported = (await client.query(SQL.insert)).rowCount ?? 0;
      await client.query(SQL.insertDeliveries);
      await client.query(SQL.insertMessages);
      await client.query(SQL.insertMessageIds);
      await client.query(SQL.indexInserted);
      const fresh = plan.bots?.fresh ?? [];
      if (fresh.length > 0)
        await client.query(SQL.insertBots, [
          fresh.map((b) => b.id),
          fresh.map((b) => b.platform),
          fresh.map((b) => Buffer.from(b.keyHash)),
        ]);
      return importOutcome(plan, imported);
    });
  }
}

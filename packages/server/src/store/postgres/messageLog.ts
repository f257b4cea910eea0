// The message log on PostgreSQL: the writes a decision carries (applied by the endpoint adapter
// inside its transaction) and the reads and sweep of the port. The table is migration 0007.
import type pg from 'pg';
import { MESSAGE_RETENTION, type MessageLogWrite, PLATFORM_BITS } from '../../domain/messageQueue.ts';
import type { Platform } from '../../domain/record.ts';
import { type LoggedMessage, MESSAGE_COLUMNS, type MessageIdRow, type MessageLog, type MessageRow, withIds } from '../messageLog.ts';

const COLUMNS = MESSAGE_COLUMNS;

/** Rows deleted per statement by the sweep, and statements per call. */
const PRUNE_BATCH = 5_000;
const PRUNE_MAX_BATCHES = 20;

const SQL = {
  // The appended message, and the endpoint's read messages beyond the retained count (a key range).
  append: `WITH added AS (
             INSERT INTO messages (endpoint_id, number, sender, sender_channel, message, unread, created_at, reply_to)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $9) ON CONFLICT DO NOTHING
           )
           DELETE FROM messages WHERE endpoint_id = $1 AND number <= $2::bigint - $8::bigint AND unread = 0`,
  // New read states ($2 numbers, $3 unread masks, $4 expired bits), and the creates of those
  // messages for platforms that no longer have them to read. One under way (leased past $5) is left to
  // finish, so the webhook's answer still records its copy's ID (an edit or delete behind it needs it).
  settle: `WITH s AS (SELECT * FROM unnest($2::bigint[], $3::int[], $4::int[]) AS s (number, unread, expired)),
           settled AS (
             UPDATE messages m SET unread = s.unread, expired = m.expired | s.expired FROM s
             WHERE m.endpoint_id = $1 AND m.number = s.number
           )
           DELETE FROM outbox o USING s
           WHERE o.endpoint_id = $1 AND o.message_seq = s.number AND o.kind = 'create' AND o.lease_until <= $5
             AND (s.unread & (CASE o.platform WHEN 'chat_a' THEN ${PLATFORM_BITS.chat_a} WHEN 'chat_b' THEN ${PLATFORM_BITS.chat_b} ELSE 0 END)) = 0`,
  list: `SELECT ${COLUMNS} FROM messages WHERE endpoint_id = $1 AND number > $2 AND ($4::int IS NULL OR (unread & $4::int) <> 0)
         ORDER BY number LIMIT $3`,
  get: `SELECT ${COLUMNS} FROM messages WHERE endpoint_id = $1 AND number = $2`,
  find: `SELECT ${COLUMNS} FROM messages WHERE endpoint_id = $1
           AND number = (SELECT number FROM message_ids WHERE endpoint_id = $1 AND platform = $2 AND message_id = $3)`,
  idsBetween: 'SELECT number, platform, message_id FROM message_ids WHERE endpoint_id = $1 AND number BETWEEN $2 AND $3',
  // A copy has one ID: a new one replaces the one it had (the copy last posted is the one edits reach),
  // in a statement before the insert, which would otherwise still see the old one. An ID another
  // message has is not taken from it: the callers refuse a known duplicate before they write, and one
  // that races them in is left out.
  unclaimIds: `DELETE FROM message_ids m USING unnest($2::text[], $3::text[], $4::bigint[]) AS c (platform, message_id, number)
               WHERE m.endpoint_id = $1 AND m.number = c.number AND m.platform = c.platform AND m.message_id <> c.message_id`,
  claimIds: `INSERT INTO message_ids (endpoint_id, platform, message_id, number)
             SELECT $1, * FROM unnest($2::text[], $3::text[], $4::bigint[]) ON CONFLICT DO NOTHING`,
  edit: 'UPDATE messages SET message = $3, edits = edits + 1, edited_at = $4 WHERE endpoint_id = $1 AND number = $2 AND deleted_at IS NULL',
  erase: 'UPDATE messages SET message = $3, deleted_at = $4 WHERE endpoint_id = $1 AND number = $2 AND deleted_at IS NULL',
  pruneAged: `DELETE FROM messages WHERE (endpoint_id, number) IN (
                SELECT endpoint_id, number FROM messages WHERE unread = 0 AND created_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`,
} as const;

const statement = (key: keyof typeof SQL, values: unknown[]): pg.QueryConfig => ({
  name: `chatbridge.messages.${key}`,
  text: SQL[key],
  values,
});

export class PostgresMessageLog implements MessageLog {
  private readonly pool: pg.Pool;
  private readonly clock: () => number;

  constructor(pool: pg.Pool, clock: () => number) {
    this.pool = pool;
    this.clock = clock;
  }

  /** Applies a decision's log writes for `endpointId` inside the caller's transaction (`client` holds it). */
  async apply(client: pg.ClientBase, endpointId: string, write: MessageLogWrite): Promise<void> {
    const { append, settle = [], ids = [], rewrite } = write;
    if (append) {
      const { number, sender, senderChannel, message, unread, createdAt, replyTo = null } = append;
      await client.query(
        statement('append', [endpointId, number, sender, senderChannel, message, unread, createdAt, MESSAGE_RETENTION.count, replyTo]),
      );
    }
    if (settle.length > 0) {
      const [numbers, unread, expired] = [settle.map((s) => s.number), settle.map((s) => s.unread), settle.map((s) => s.expired)];
      await client.query(statement('settle', [endpointId, numbers, unread, expired, this.clock()]));
    }
    if (ids.length > 0) {
      const columns = [endpointId, ids.map((c) => c.platform), ids.map((c) => c.id), ids.map((c) => c.number)];
      await client.query(statement('unclaimIds', columns));
      await client.query(statement('claimIds', columns));
    }
    if (rewrite) {
      await client.query(statement(rewrite.deleted ? 'erase' : 'edit', [endpointId, rewrite.number, rewrite.message, rewrite.at]));
    }
  }

  async list(endpointId: string, after: number, limit: number, platform?: Platform): Promise<LoggedMessage[]> {
    const bit = platform === undefined ? null : PLATFORM_BITS[platform];
    const { rows } = await this.pool.query<MessageRow>(statement('list', [endpointId, after, limit, bit]));
    return this.withIds(endpointId, rows);
  }

  async get(endpointId: string, number: number): Promise<LoggedMessage | undefined> {
    const { rows } = await this.pool.query<MessageRow>(statement('get', [endpointId, number]));
    return (await this.withIds(endpointId, rows))[0];
  }

  async find(endpointId: string, platform: Platform, id: string): Promise<LoggedMessage | undefined> {
    const { rows } = await this.pool.query<MessageRow>(statement('find', [endpointId, platform, id]));
    return (await this.withIds(endpointId, rows))[0];
  }

  /** The rows with their copies' IDs (one more read, of the rows' number range). */
  private async withIds(endpointId: string, rows: MessageRow[]): Promise<LoggedMessage[]> {
    if (rows.length === 0) return [];
    const range = [endpointId, rows[0]!.number, rows.at(-1)!.number];
    const ids = await this.pool.query<MessageIdRow>(statement('idsBetween', range));
    return withIds(rows, ids.rows);
  }

  /** Batches never wait for a writer (SKIP LOCKED) and each commits on its own. */
  async prune(): Promise<number> {
    const before = this.clock() - MESSAGE_RETENTION.maxAgeMs;
    let total = 0;
    for (let i = 0; i < PRUNE_MAX_BATCHES; i++) {
      const deleted = (await this.pool.query(statement('pruneAged', [before, PRUNE_BATCH]))).rowCount ?? 0;
      total += deleted;
      if (deleted < PRUNE_BATCH) break;
    }
    return total;
  }
}

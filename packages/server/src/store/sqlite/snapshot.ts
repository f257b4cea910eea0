// Export and import on SQLite. Its statements are prepared on first use: most processes never move a store.
import type { StatementSync } from 'node:sqlite';
import { queueJson } from '../../domain/messageQueue.ts';
import type { StoredBot } from '../bots.ts';
import { type EndpointSnapshot, type ImportOutcome, SNAPSHOT_PAGE_ROWS, type Snapshot } from '../snapshot.ts';
import { importOutcome, isRefused, planBotImport } from '../sql/botImport.ts';
import { type SnapshotRow, batchesOf, snapshotPages } from '../sql/snapshotRows.ts';
import type { SqliteBots } from './bots.ts';
import type { SqliteDatabase } from './database.ts';

type StatementName =
  | 'page'
  | 'stage'
  | 'stageDelivery'
  | 'stageMessage'
  | 'stageMessageId'
  | 'conflicts'
  | 'existing'
  | 'markFresh'
  | 'insert'
  | 'insertDeliveries'
  | 'insertMessages'
  | 'insertMessageIds'
  | 'indexInserted'
  | 'insertBot';

// Staging tables of an import: TEMP, so they live on this connection only and take no lock of the
// store's file while rows arrive.
const STAGING_TABLES = `
  CREATE TEMP TABLE IF NOT EXISTS import_endpoints (
    id TEXT PRIMARY KEY, token_hash BLOB NOT NULL, record TEXT NOT NULL, message_seq INTEGER NOT NULL,
    pending_since INTEGER, version INTEGER NOT NULL, queue TEXT NOT NULL, last_change TEXT NOT NULL,
    fresh INTEGER NOT NULL DEFAULT 0) STRICT;
  CREATE TEMP TABLE IF NOT EXISTS import_messages (
    endpoint_id TEXT NOT NULL, number INTEGER NOT NULL, sender TEXT, sender_channel TEXT, message TEXT NOT NULL,
    unread INTEGER NOT NULL, expired INTEGER NOT NULL, created_at INTEGER NOT NULL, reply_to INTEGER, edits INTEGER NOT NULL,
    edited_at INTEGER, deleted_at INTEGER) STRICT;
  CREATE TEMP TABLE IF NOT EXISTS import_message_ids (
    endpoint_id TEXT NOT NULL, platform TEXT NOT NULL, message_id TEXT NOT NULL, number INTEGER NOT NULL) STRICT;
  CREATE TEMP TABLE IF NOT EXISTS import_deliveries (
    endpoint_id TEXT NOT NULL, message_seq INTEGER NOT NULL, kind TEXT NOT NULL, platform TEXT NOT NULL, url TEXT NOT NULL,
    payload TEXT NOT NULL, attempts INTEGER NOT NULL, next_attempt_at INTEGER NOT NULL, expires_at INTEGER NOT NULL) STRICT;`;

const CLEAR_STAGING =
  'DELETE FROM import_endpoints; DELETE FROM import_deliveries; DELETE FROM import_messages; DELETE FROM import_message_ids;';

export class SqliteSnapshot implements Snapshot {
  readonly source = 'sqlite';
  private readonly database: SqliteDatabase;
  private readonly bots: SqliteBots;
  private statements: Record<StatementName, StatementSync> | undefined;

  constructor(database: SqliteDatabase, bots: SqliteBots) {
    this.database = database;
    this.bots = bots;
  }

  exportRows(): AsyncIterable<EndpointSnapshot> {
    const { page } = this.prepared();
    return snapshotPages((after) => page.all(after, SNAPSHOT_PAGE_ROWS) as unknown as SnapshotRow[]);
  }

  /**
   * Rows are staged in TEMP tables a batch at a time (each batch its own short transaction, taken and
   * ended within one synchronous step, so no update of this process ever runs inside it), then merged
   * into the store in one IMMEDIATE transaction, also synchronous: all rows or none.
   */
  async importRows(
    rows: AsyncIterable<EndpointSnapshot> | Iterable<EndpointSnapshot>,
    bots?: readonly StoredBot[],
  ): Promise<ImportOutcome> {
    const st = this.prepared();
    const { db } = this.database;
    db.exec(CLEAR_STAGING);
    try {
      for await (const batch of batchesOf(rows, SNAPSHOT_PAGE_ROWS)) {
        db.exec('BEGIN');
        try {
          for (const r of batch) {
            const { seq, pendingSince, queue } = r.state;
            st.stage.run(r.id, r.tokenHash, r.recordJson, seq, pendingSince, r.version, queueJson(queue), r.lastChange);
            for (const d of r.deliveries) {
              st.stageDelivery.run(r.id, d.messageSeq, d.kind, d.platform, d.url, d.payload, d.attempts, d.nextAttemptAt, d.expiresAt);
            }
            for (const m of r.messages) {
              const accepted = [m.number, m.sender, m.senderChannel, m.message, m.unread, m.expired, m.createdAt] as const;
              st.stageMessage.run(r.id, ...accepted, m.replyTo, m.edits, m.editedAt, m.deletedAt);
              for (const [platform, id] of Object.entries(m.ids)) st.stageMessageId.run(r.id, platform, id, m.number);
            }
          }
          db.exec('COMMIT');
        } catch (error) {
          this.database.rollback();
          throw error;
        }
      }
      return this.database.transaction(() => {
        const conflicts = (st.conflicts.all() as { id: string }[]).map((r) => r.id);
        const unchanged = (st.existing.get() as { n: number }).n - conflicts.length;
        const plan = { conflicts, unchanged, bots: bots && planBotImport(this.bots.listNow(), bots) };
        if (isRefused(plan)) return importOutcome(plan, 0);
        st.markFresh.run();
        const imported = Number(st.insert.run().changes);
        st.insertDeliveries.run();
        st.insertMessages.run();
        st.insertMessageIds.run();
        st.indexInserted.run();
        for (const bot of plan.bots?.fresh ?? []) st.insertBot.run(bot.id, bot.platform, bot.keyHash);
        return importOutcome(plan, imported);
      });
    } finally {
      if (db.isOpen) db.exec(CLEAR_STAGING);
    }
  }

  private prepared(): Record<StatementName, StatementSync> {
    if (this.statements) return this.statements;
    this.database.db.exec(STAGING_TABLES);
    const q = (sql: string) => this.database.prepare(sql);
    this.statements = {
      // A message's IDs as one JSON object by platform (json(): an object in the message's object, not its text).
      page: q(
        `SELECT e.id, e.token_hash, e.record, e.message_seq, e.pending_since, e.version, e.queue, e.last_change,
           (SELECT json_group_array(json_object('messageSeq', o.message_seq, 'kind', o.kind, 'platform', o.platform, 'url', o.url,
                                                'payload', o.payload, 'attempts', o.attempts, 'nextAttemptAt', o.next_attempt_at,
                                                'expiresAt', o.expires_at))
              FROM (SELECT * FROM outbox WHERE endpoint_id = e.id ORDER BY id) o) AS deliveries,
           (SELECT json_group_array(json_object('number', m.number, 'sender', m.sender, 'senderChannel', m.sender_channel,
                                                'message', m.message, 'unread', m.unread, 'expired', m.expired, 'createdAt', m.created_at,
                                                'replyTo', m.reply_to, 'edits', m.edits, 'editedAt', m.edited_at, 'deletedAt', m.deleted_at,
                                                'ids', json((SELECT json_group_object(i.platform, i.message_id) FROM message_ids i
                                                             WHERE i.endpoint_id = m.endpoint_id AND i.number = m.number))))
              FROM (SELECT * FROM messages WHERE endpoint_id = e.id ORDER BY number) m) AS messages
         FROM endpoints e WHERE e.id > ? ORDER BY e.id LIMIT ?`,
      ),
      stage: q(
        `INSERT INTO import_endpoints (id, token_hash, record, message_seq, pending_since, version, queue, last_change)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      stageMessage: q(
        `INSERT INTO import_messages (endpoint_id, number, sender, sender_channel, message, unread, expired, created_at,
                                      reply_to, edits, edited_at, deleted_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      stageMessageId: q('INSERT INTO import_message_ids (endpoint_id, platform, message_id, number) VALUES (?, ?, ?, ?)'),
      insertMessages: q(
        `INSERT INTO messages (endpoint_id, number, sender, sender_channel, message, unread, expired, created_at,
                               reply_to, edits, edited_at, deleted_at)
         SELECT m.endpoint_id, m.number, m.sender, m.sender_channel, m.message, m.unread, m.expired, m.created_at,
                m.reply_to, m.edits, m.edited_at, m.deleted_at
         FROM import_messages m JOIN import_endpoints s ON s.id = m.endpoint_id WHERE s.fresh = 1`,
      ),
      // After the messages: an ID belongs to its message (a foreign key).
      insertMessageIds: q(
        `INSERT INTO message_ids (endpoint_id, platform, message_id, number)
         SELECT i.endpoint_id, i.platform, i.message_id, i.number
         FROM import_message_ids i JOIN import_endpoints s ON s.id = i.endpoint_id WHERE s.fresh = 1`,
      ),
      stageDelivery: q(
        `INSERT INTO import_deliveries (endpoint_id, message_seq, kind, platform, url, payload, attempts, next_attempt_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      conflicts: q(
        `SELECT s.id FROM import_endpoints s JOIN endpoints e ON e.id = s.id
         WHERE e.token_hash <> s.token_hash OR e.record <> s.record OR e.message_seq <> s.message_seq
            OR e.pending_since IS NOT s.pending_since OR e.version <> s.version OR e.queue <> s.queue
         ORDER BY s.id`,
      ),
      existing: q('SELECT count(*) AS n FROM import_endpoints s JOIN endpoints e ON e.id = s.id'),
      markFresh: q('UPDATE import_endpoints SET fresh = 1 WHERE id NOT IN (SELECT id FROM endpoints)'),
      insert: q(
        `INSERT INTO endpoints (id, token_hash, record, message_seq, pending_since, version, queue, last_change)
         SELECT id, token_hash, record, message_seq, pending_since, version, queue, last_change FROM import_endpoints WHERE fresh = 1`,
      ),
      insertDeliveries: q(
        `INSERT INTO outbox (endpoint_id, message_seq, kind, platform, url, payload, attempts, next_attempt_at, expires_at)
         SELECT d.endpoint_id, d.message_seq, d.kind, d.platform, d.url, d.payload, d.attempts, d.next_attempt_at, d.expires_at
         FROM import_deliveries d JOIN import_endpoints s ON s.id = d.endpoint_id WHERE s.fresh = 1 ORDER BY d.rowid`,
      ),
      // The lookup index of the endpoints inserted (as migration 0005 indexes the stored ones).
      indexInserted: q(
        `INSERT INTO channel_index (platform, channel, endpoint_id, bridge)
           SELECT p.key, c.value, e.id, c.key FROM import_endpoints e, json_each(e.record, '$.config.channels') p, json_each(p.value) c
           WHERE e.fresh = 1 AND p.type = 'array' AND c.type = 'text' ON CONFLICT DO NOTHING`,
      ),
      insertBot: q('INSERT INTO bots (id, platform, key_hash) VALUES (?, ?, ?)'),
    };
    return this.statements;
  }
}

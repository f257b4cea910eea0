// The message log on SQLite: the writes a decision carries
// (applied by the endpoint adapter inside its transaction) and the reads and sweep of the port. The
// table is migration 0007.
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { MESSAGE_RETENTION, type MessageLogWrite, PLATFORM_BITS } from '../../domain/messageQueue.ts';
import type { Platform } from '../../domain/record.ts';
import { type LoggedMessage, MESSAGE_COLUMNS, type MessageIdRow, type MessageLog, type MessageRow, withIds } from '../messageLog.ts';

/** The bit of an outbox entry's platform, in SQL (only webhook platforms have outbox entries). */
const OUTBOX_BIT = `(CASE platform WHEN 'chat_a' THEN ${PLATFORM_BITS.chat_a} WHEN 'chat_b' THEN ${PLATFORM_BITS.chat_b} ELSE 0 END)`;

/** Rows deleted per statement by the sweep (a few milliseconds each). */
const PRUNE_BATCH = 1_000;

const COLUMNS = MESSAGE_COLUMNS;
type Statement =
  | 'append'
  | 'settle'
  | 'dropSettled'
  | 'trim'
  | 'list'
  | 'listFor'
  | 'get'
  | 'pruneAged'
  | 'claimId'
  | 'unclaimId'
  | 'edit'
  | 'erase'
  | 'idsOf'
  | 'idsBetween'
  | 'find';

export class SqliteMessageLog implements MessageLog {
  private readonly db: DatabaseSync;
  private readonly clock: () => number;
  private readonly st: Record<Statement, StatementSync>;

  constructor(db: DatabaseSync, clock: () => number) {
    this.db = db;
    this.clock = clock;
    const q = (sql: string) => db.prepare(sql);
    this.st = {
      append: q(
        `INSERT INTO messages (endpoint_id, number, sender, sender_channel, message, unread, created_at, reply_to) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT DO NOTHING`,
      ),
      settle: q('UPDATE messages SET unread = ?3, expired = expired | ?4 WHERE endpoint_id = ?1 AND number = ?2'),
      // Creates of a message for platforms that no longer have it to read: nothing is sent for them.
      // One under way (leased) is left to finish, so the webhook's answer still records its copy's ID
      // (an edit or delete queued behind it needs that ID).
      dropSettled: q(
        `DELETE FROM outbox WHERE endpoint_id = ?1 AND message_seq = ?2 AND kind = 'create' AND (?3 & ${OUTBOX_BIT}) = 0 AND lease_until <= ?4`,
      ),
      // A copy has one ID: a new one replaces the one it had (the copy last posted is the one edits
      // reach). An ID another message has is not taken from it: the callers refuse a known duplicate
      // before they write, and one that races them in is left out.
      unclaimId: q('DELETE FROM message_ids WHERE endpoint_id = ?1 AND number = ?2 AND platform = ?3 AND message_id <> ?4'),
      claimId: q('INSERT INTO message_ids (endpoint_id, platform, message_id, number) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING'),
      edit: q(
        'UPDATE messages SET message = ?3, edits = edits + 1, edited_at = ?4 WHERE endpoint_id = ?1 AND number = ?2 AND deleted_at IS NULL',
      ),
      erase: q('UPDATE messages SET message = ?3, deleted_at = ?4 WHERE endpoint_id = ?1 AND number = ?2 AND deleted_at IS NULL'),
      idsOf: q('SELECT number, platform, message_id FROM message_ids WHERE endpoint_id = ? AND number = ?'),
      idsBetween: q('SELECT number, platform, message_id FROM message_ids WHERE endpoint_id = ? AND number BETWEEN ? AND ?'),
      find: q(
        `SELECT ${COLUMNS} FROM messages WHERE endpoint_id = ?1
           AND number = (SELECT number FROM message_ids WHERE endpoint_id = ?1 AND platform = ?2 AND message_id = ?3)`,
      ),
      // Retention by count: the endpoint's read messages numbered below its newest count (a key range).
      trim: q('DELETE FROM messages WHERE endpoint_id = ?1 AND number <= ?2 AND unread = 0'),
      list: q(`SELECT ${COLUMNS} FROM messages WHERE endpoint_id = ? AND number > ? ORDER BY number LIMIT ?`),
      listFor: q(`SELECT ${COLUMNS} FROM messages WHERE endpoint_id = ? AND number > ? AND (unread & ?) <> 0 ORDER BY number LIMIT ?`),
      get: q(`SELECT ${COLUMNS} FROM messages WHERE endpoint_id = ? AND number = ?`),
      pruneAged: q(
        'DELETE FROM messages WHERE rowid IN (SELECT rowid FROM messages WHERE unread = 0 AND created_at < ? ORDER BY created_at LIMIT ?)',
      ),
    };
  }

  /** Applies a decision's log writes for `endpointId`, inside the caller's transaction. */
  apply(endpointId: string, write: MessageLogWrite): void {
    const { append, settle = [], ids = [], rewrite } = write;
    if (append) {
      const { number, sender, senderChannel, message, unread, createdAt, replyTo = null } = append;
      this.st.append.run(endpointId, number, sender, senderChannel, message, unread, createdAt, replyTo);
      if (number > MESSAGE_RETENTION.count) this.st.trim.run(endpointId, number - MESSAGE_RETENTION.count);
    }
    for (const s of settle) {
      this.st.settle.run(endpointId, s.number, s.unread, s.expired);
      this.st.dropSettled.run(endpointId, s.number, s.unread, this.clock());
    }
    for (const c of ids) {
      this.st.unclaimId.run(endpointId, c.number, c.platform, c.id);
      this.st.claimId.run(endpointId, c.platform, c.id, c.number);
    }
    if (rewrite) (rewrite.deleted ? this.st.erase : this.st.edit).run(endpointId, rewrite.number, rewrite.message, rewrite.at);
  }

  async list(endpointId: string, after: number, limit: number, platform?: Platform): Promise<LoggedMessage[]> {
    const rows =
      platform === undefined
        ? this.st.list.all(endpointId, after, limit)
        : this.st.listFor.all(endpointId, after, PLATFORM_BITS[platform], limit);
    const messages = rows as unknown as MessageRow[];
    if (messages.length === 0) return [];
    const ids = this.st.idsBetween.all(endpointId, messages[0]!.number, messages.at(-1)!.number);
    return withIds(messages, ids as unknown as MessageIdRow[]);
  }

  async get(endpointId: string, number: number): Promise<LoggedMessage | undefined> {
    return this.withIdsOf(endpointId, this.st.get.get(endpointId, number) as MessageRow | undefined);
  }

  async find(endpointId: string, platform: Platform, id: string): Promise<LoggedMessage | undefined> {
    return this.withIdsOf(endpointId, this.st.find.get(endpointId, platform, id) as MessageRow | undefined);
  }

  private withIdsOf(endpointId: string, row: MessageRow | undefined): LoggedMessage | undefined {
    if (!row) return undefined;
    return withIds([row], this.st.idsOf.all(endpointId, row.number) as unknown as MessageIdRow[])[0];
  }

  /** node:sqlite blocks the event loop while a statement runs: one bounded batch per turn. */
  async prune(): Promise<number> {
    const before = this.clock() - MESSAGE_RETENTION.maxAgeMs;
    let total = 0;
    while (this.db.isOpen) {
      const deleted = Number(this.st.pruneAged.run(before, PRUNE_BATCH).changes);
      total += deleted;
      if (deleted < PRUNE_BATCH) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    return total;
  }
}

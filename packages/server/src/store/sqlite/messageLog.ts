// The message log on SQLite: the writes a decision carries
// (applied by the endpoint adapter inside its transaction) and the reads and sweep of the port. The
// table is migration 0007.
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { MESSAGE_RETENTION, type MessageLogWrite, PLATFORM_BITS } from '../../domain/messageQueue.ts';
import type { Platform } from '../../domain/record.ts';
import { type LoggedMessage, type MessageLog, type MessageRow, toLoggedMessage } from '../messageLog.ts';

/** The bit of an outbox entry's platform, in SQL (only webhook platforms have outbox entries). */
const OUTBOX_BIT = `(CASE platform WHEN 'chat_a' THEN ${PLATFORM_BITS.chat_a} WHEN 'chat_b' THEN ${PLATFORM_BITS.chat_b} ELSE 0 END)`;

/** Rows deleted per statement by the sweep (a few milliseconds each). */
const PRUNE_BATCH = 1_000;

const COLUMNS = 'number, sender, sender_channel, message, unread, expired, created_at';

export class SqliteMessageLog implements MessageLog {
  private readonly db: DatabaseSync;
  private readonly clock: () => number;
  private readonly st: Record<'append' | 'settle' | 'dropSettled' | 'trim' | 'list' | 'listFor' | 'get' | 'pruneAged', StatementSync>;

  constructor(db: DatabaseSync, clock: () => number) {
    this.db = db;
    this.clock = clock;
    const q = (sql: string) => db.prepare(sql);
    this.st = {
      append: q(
        `INSERT INTO messages (endpoint_id, number, sender, sender_channel, message, unread, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT DO NOTHING`,
      ),
      settle: q('UPDATE messages SET unread = ?3, expired = expired | ?4 WHERE endpoint_id = ?1 AND number = ?2'),
      // Deliveries of a message to platforms that no longer have it to read: nothing is sent for them.
      dropSettled: q(`DELETE FROM outbox WHERE endpoint_id = ?1 AND message_seq = ?2 AND (?3 & ${OUTBOX_BIT}) = 0`),
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
    const { append, settle = [] } = write;
    if (append) {
      const { number, sender, senderChannel, message, unread, createdAt } = append;
      this.st.append.run(endpointId, number, sender, senderChannel, message, unread, createdAt);
      if (number > MESSAGE_RETENTION.count) this.st.trim.run(endpointId, number - MESSAGE_RETENTION.count);
    }
    for (const s of settle) {
      this.st.settle.run(endpointId, s.number, s.unread, s.expired);
      this.st.dropSettled.run(endpointId, s.number, s.unread);
    }
  }

  async list(endpointId: string, after: number, limit: number, platform?: Platform): Promise<LoggedMessage[]> {
    const rows =
      platform === undefined
        ? this.st.list.all(endpointId, after, limit)
        : this.st.listFor.all(endpointId, after, PLATFORM_BITS[platform], limit);
    return (rows as unknown as MessageRow[]).map(toLoggedMessage);
  }

  async get(endpointId: string, number: number): Promise<LoggedMessage | undefined> {
    const row = this.st.get.get(endpointId, number) as MessageRow | undefined;
    return row && toLoggedMessage(row);
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

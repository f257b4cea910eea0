// Bot keys on SQLite.
import type { StatementSync } from 'node:sqlite';
import type { Platform } from '../../domain/record.ts';
import type { Bots, StoredBot } from '../bots.ts';
import type { SqliteDatabase } from './database.ts';

export class SqliteBots implements Bots {
  private readonly st: Record<'create' | 'setKey' | 'delete' | 'list', StatementSync>;

  constructor(database: SqliteDatabase) {
    const q = (sql: string) => database.prepare(sql);
    this.st = {
      create: q('INSERT INTO bots (id, platform, key_hash) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING'),
      setKey: q('UPDATE bots SET key_hash = ? WHERE id = ?'),
      delete: q('DELETE FROM bots WHERE id = ?'),
      list: q('SELECT id, platform, key_hash FROM bots ORDER BY id'),
    };
  }

  async create(bot: StoredBot): Promise<boolean> {
    return this.st.create.run(bot.id, bot.platform, bot.keyHash).changes === 1;
  }

  async setKeyHash(id: string, keyHash: Uint8Array): Promise<boolean> {
    return this.st.setKey.run(keyHash, id).changes === 1;
  }

  async delete(id: string): Promise<boolean> {
    return this.st.delete.run(id).changes === 1;
  }

  async list(): Promise<StoredBot[]> {
    return this.listNow();
  }

  /** Every bot, read synchronously (inside the caller's transaction too: an import's). */
  listNow(): StoredBot[] {
    const rows = this.st.list.all() as { id: string; platform: Platform; key_hash: Uint8Array }[];
    return rows.map((r) => ({ id: r.id, platform: r.platform, keyHash: r.key_hash }));
  }
}

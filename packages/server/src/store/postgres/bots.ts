// Bot keys on PostgreSQL.
import type { Platform } from '../../domain/record.ts';
import type { Bots, StoredBot } from '../bots.ts';
import type { PostgresDatabase, Queryable } from './database.ts';

export class PostgresBots implements Bots {
  private readonly database: PostgresDatabase;

  constructor(database: PostgresDatabase) {
    this.database = database;
  }

  async create(bot: StoredBot): Promise<boolean> {
    const sql = 'INSERT INTO bots (id, platform, key_hash) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING';
    return (await this.database.pool.query(sql, [bot.id, bot.platform, bot.keyHash])).rowCount === 1;
  }

  async setKeyHash(id: string, keyHash: Uint8Array): Promise<boolean> {
    return (await this.database.pool.query('UPDATE bots SET key_hash = $2 WHERE id = $1', [id, keyHash])).rowCount === 1;
  }

  async delete(id: string): Promise<boolean> {
    return (await this.database.pool.query('DELETE FROM bots WHERE id = $1', [id])).rowCount === 1;
  }

  async list(): Promise<StoredBot[]> {
    return this.listOn(this.database.pool);
  }

  /** Every bot, on `db` (inside the caller's transaction: an import's). */
  async listOn(db: Queryable): Promise<StoredBot[]> {
    const { rows } = await db.query<{ id: string; platform: Platform; key_hash: Buffer }>(
      'SELECT id, platform, key_hash FROM bots ORDER BY id',
    );
    return rows.map((r) => ({ id: r.id, platform: r.platform, keyHash: r.key_hash }));
  }
}

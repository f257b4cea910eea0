// The endpoints aggregate on SQLite. Reads come from the row cache when they can (rowCache.ts); updates
// join the turn's group commit (groupCommit.ts); the other writes are statements of their own.
import type { StatementSync } from 'node:sqlite';
import type { EndpointRecord, Platform } from '../../domain/record.ts';
import type { ChannelMatch, Decision, Endpoints, StoredEndpoint } from '../endpoints.ts';
import { channelEntries } from '../sql/channelIndex.ts';
import type { SqliteDatabase } from './database.ts';
import type { GroupCommit } from './groupCommit.ts';
import type { RowWrites } from './rowWrites.ts';

export class SqliteEndpoints implements Endpoints {
  private readonly database: SqliteDatabase;
  private readonly writes: RowWrites;
  private readonly groupCommit: GroupCommit;
  private readonly st: Record<
    'create' | 'setToken' | 'delete' | 'dropEndpointEvents' | 'list' | 'lookup' | 'countPending' | 'expired',
    StatementSync
  >;

  constructor(database: SqliteDatabase, writes: RowWrites, groupCommit: GroupCommit) {
    this.database = database;
    this.writes = writes;
    this.groupCommit = groupCommit;
    const q = (sql: string) => database.prepare(sql);
    this.st = {
      create: q('INSERT INTO endpoints (id, token_hash, record) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING'),
      setToken: q('UPDATE endpoints SET token_hash = ? WHERE id = ? RETURNING version'),
      delete: q('DELETE FROM endpoints WHERE id = ? RETURNING version'),
      dropEndpointEvents: q(
        `DELETE FROM event_log WHERE endpoint_id = ?1
           AND id IN (SELECT value FROM json_each((SELECT event_ids FROM endpoints WHERE id = ?1)))`,
      ),
      list: q('SELECT id FROM endpoints WHERE id > ? ORDER BY id LIMIT ?'),
      lookup: q(
        'SELECT endpoint_id AS endpoint, bridge FROM channel_index WHERE platform = ? AND channel = ? ORDER BY endpoint_id, bridge LIMIT ?',
      ),
      countPending: q('SELECT count(*) AS n FROM endpoints WHERE pending_since IS NOT NULL'),
      expired: q('SELECT id FROM endpoints WHERE pending_since IS NOT NULL AND pending_since < ? ORDER BY pending_since LIMIT ?'),
    };
  }

  async get(id: string): Promise<StoredEndpoint | undefined> {
    return this.writes.read(id);
  }

  update<T>(id: string, decide: (current: StoredEndpoint | undefined) => Decision<T>): Promise<T> {
    return this.groupCommit.add(id, () => this.writes.decideAndWrite(id, decide));
  }

  async create(id: string, tokenHash: Uint8Array, record: EndpointRecord): Promise<boolean> {
    const entries = channelEntries(record);
    if (entries.length === 0) return this.st.create.run(id, tokenHash, JSON.stringify(record)).changes === 1;
    return this.database.transaction(() => {
      const created = this.st.create.run(id, tokenHash, JSON.stringify(record)).changes === 1;
      if (created) this.writes.indexChannels(id, entries, false);
      return created;
    });
  }

  async setTokenHash(id: string, tokenHash: Uint8Array): Promise<boolean> {
    this.database.cache.evict(id);
    // Streams authenticated with the old token hear of it and end.
    return this.notified(id, this.st.setToken.get(tokenHash, id));
  }

  async delete(id: string): Promise<boolean> {
    this.database.cache.evict(id);
    // Its events go first (listed in its row); its outbox entries go with it (ON DELETE CASCADE); its
    // streams hear of it and end.
    return this.notified(
      id,
      this.database.transaction(() => {
        this.st.dropEndpointEvents.run(id);
        return this.st.delete.get(id);
      }),
    );
  }

  async listIds(after: string | undefined, limit: number): Promise<string[]> {
    return (this.st.list.all(after ?? '', limit) as { id: string }[]).map((r) => r.id);
  }

  async lookupChannel(platform: Platform, channel: string, limit: number): Promise<ChannelMatch[]> {
    return (this.st.lookup.all(platform, channel, limit) as unknown as ChannelMatch[]).map((r) => ({
      endpoint: r.endpoint,
      bridge: r.bridge,
    }));
  }

  async countPending(): Promise<number> {
    return (this.st.countPending.get() as { n: number }).n;
  }

  async listExpired(pendingBefore: number, limit: number): Promise<string[]> {
    return (this.st.expired.all(pendingBefore, limit) as { id: number | string }[]).map((r) => String(r.id));
  }

  private notified(id: string, row: unknown): boolean {
    if (!row) return false;
    this.database.hub.publish(id, (row as { version: number }).version);
    return true;
  }
}

// The webhook outbox on PostgreSQL. Claims use FOR UPDATE SKIP LOCKED, so instances drain the queue
// together without handing one entry to two workers; a completion and a drop hold their endpoint's
// row lock until they commit (the lock order of rowWrites.ts).
import type pg from 'pg';
import type { Platform } from '../../domain/record.ts';
import type { ClaimLimits, ClaimSkips, Deliveries, Delivery } from '../deliveries.ts';
import type { Decision, StoredEndpoint } from '../endpoints.ts';
import { type OutboxRow, claimLanes, toDelivery } from '../sql/rows.ts';
import { type PostgresDatabase, type Queryable, prepared } from './database.ts';
import type { PostgresRowWrites } from './rowWrites.ts';

const SQL = {
  // SKIP LOCKED: an entry another instance is claiming right now is passed over, not waited for;
  // one it has just claimed fails the lease condition when rechecked.
  // Only the oldest entry of each webhook (its head, migration 0008) is due: a webhook's messages go
  // out one at a time, in order, on any instance (a head another instance holds stays the head until
  // it is acknowledged). An expired create is removed by the expiry pass that runs before each claim
  // (it expires the message for that platform); an expired edit or delete is claimed, and the relay
  // gives it up.
  claim: `UPDATE outbox SET lease_until = $1, attempts = attempts + 1
          WHERE id IN (SELECT o.id FROM outbox o
                       WHERE o.head AND o.next_attempt_at <= $2 AND o.lease_until <= $2 AND (o.expires_at > $2 OR o.kind <> 'create')
                         AND ($4::text IS NULL OR o.platform = $4)
                         AND NOT (o.endpoint_id = ANY ($5::text[]))
                         AND NOT EXISTS (SELECT 1 FROM webhook_holds h WHERE h.endpoint_id = o.endpoint_id
                                           AND h.platform = o.platform AND h.url = o.url AND h.until > $2)
                       ORDER BY o.next_attempt_at, o.id LIMIT $3
                       FOR UPDATE SKIP LOCKED)
          RETURNING id, endpoint_id, message_seq, platform, url, payload, attempts, expires_at, kind`,
  dequeue: 'DELETE FROM outbox WHERE id = $1',
  lockOf: 'SELECT 1 FROM endpoints WHERE id = (SELECT endpoint_id FROM outbox WHERE id = $1) FOR UPDATE',
  endedHolds: 'DELETE FROM webhook_holds WHERE endpoint_id = $1 AND until <= $2',
  hold: `INSERT INTO webhook_holds (endpoint_id, platform, url, until) VALUES ($1, $2, $3, $4)
         ON CONFLICT (endpoint_id, platform, url) DO UPDATE SET until = greatest(webhook_holds.until, excluded.until)`,
  retry: 'UPDATE outbox SET next_attempt_at = $2, lease_until = 0 WHERE id = $1',
  count: 'SELECT count(*) AS n FROM outbox',
} as const;

const statement = (key: keyof typeof SQL, values: unknown[]) => prepared(key, SQL[key], values);

export class PostgresDeliveries implements Deliveries {
  private readonly database: PostgresDatabase;
  private readonly writes: PostgresRowWrites;

  constructor(database: PostgresDatabase, writes: PostgresRowWrites) {
    this.database = database;
    this.writes = writes;
  }

  async claim(now: number, leaseMs: number, limits: ClaimLimits, skip?: ClaimSkips): Promise<Delivery[]> {
    const lanes = claimLanes(limits, skip);
    if (lanes.length === 0) return [];
    // Several lanes in one transaction: if one claim fails, none is left leased with nobody sending it.
    const claimed =
      lanes.length === 1
        ? await this.claimLane(this.database.pool, now, leaseMs, lanes[0]!)
        : await this.database.transaction(async (client) => {
            const rows: OutboxRow[] = [];
            for (const lane of lanes) rows.push(...(await this.claimLane(client, now, leaseMs, lane)));
            return rows;
          });
    return claimed.map(toDelivery).sort((a, b) => a.id - b.id);
  }

  async complete<T>(
    delivery: Delivery,
    decide: (current: StoredEndpoint | undefined, stillQueued: boolean) => Decision<T>,
    holdUntil?: number,
  ): Promise<T> {
    const { id, endpointId, platform, url } = delivery;
    return this.database.transaction(async (client: pg.PoolClient) => {
      // Endpoint row first, then the entry: the lock order every writer uses.
      const current = await this.writes.lock(client, endpointId);
      const stillQueued = (await client.query(statement('dequeue', [id]))).rowCount === 1;
      if (holdUntil !== undefined) {
        await client.query(statement('endedHolds', [endpointId, this.database.clock()]));
        await client.query(statement('hold', [endpointId, platform, url, holdUntil]));
      }
      return this.writes.decideLocked(client, endpointId, current, (row) => decide(row, stillQueued));
    });
  }

  async retry(id: number, nextAttemptAt: number): Promise<void> {
    await this.database.pool.query(statement('retry', [id, nextAttemptAt]));
  }

  async drop(id: number): Promise<void> {
    // Under its endpoint's row lock, as every path that removes an entry: the next head is then
    // chosen among every entry committed so far (migration 0008).
    await this.database.transaction(async (client) => {
      await client.query(statement('lockOf', [id]));
      await client.query(statement('dequeue', [id]));
    });
  }

  async count(): Promise<number> {
    return (await this.database.pool.query<{ n: number }>(SQL.count)).rows[0]!.n;
  }

  private async claimLane(
    db: Queryable,
    now: number,
    leaseMs: number,
    [to, limit, passOver]: [Platform | null, number, readonly string[]],
  ): Promise<OutboxRow[]> {
    return (await db.query<OutboxRow>(statement('claim', [now + leaseMs, now, limit, to, passOver]))).rows;
  }
}

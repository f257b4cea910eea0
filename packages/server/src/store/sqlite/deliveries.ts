// The webhook outbox on SQLite.
import type { StatementSync } from 'node:sqlite';
import type { Platform } from '../../domain/record.ts';
import type { ClaimLimits, ClaimSkips, Deliveries, Delivery } from '../deliveries.ts';
import type { Decision, StoredEndpoint } from '../endpoints.ts';
import { type OutboxRow, claimLanes, toDelivery } from '../sql/rows.ts';
import type { SqliteDatabase } from './database.ts';
import type { RowWrites } from './rowWrites.ts';

export class SqliteDeliveries implements Deliveries {
  private readonly database: SqliteDatabase;
  private readonly writes: RowWrites;
  private readonly st: Record<'claim' | 'hold' | 'dequeue' | 'retry' | 'count', StatementSync>;

  constructor(database: SqliteDatabase, writes: RowWrites) {
    this.database = database;
    this.writes = writes;
    const q = (sql: string) => database.prepare(sql);
    this.st = {
      // Only the oldest entry of each webhook (its head, migration 0008) is due: a webhook's messages go
      // out one at a time, in order, and one held back (a retry, a rate limit) holds the ones after it.
      // An expired create is removed by the relay's expiry pass, which runs before each claim (it
      // expires the message for that platform); an expired edit or delete is claimed, and the relay
      // gives it up.
      claim: q(
        `UPDATE outbox SET lease_until = ?1, attempts = attempts + 1
         WHERE id IN (SELECT o.id FROM outbox o WHERE o.head = 1 AND o.next_attempt_at <= ?2 AND o.lease_until <= ?2
                                              AND (o.expires_at > ?2 OR o.kind <> 'create')
                                              AND (?3 IS NULL OR o.platform = ?3)
                                              AND o.endpoint_id NOT IN (SELECT value FROM json_each(?4))
                      ORDER BY o.next_attempt_at, o.id LIMIT ?5)
         RETURNING id, endpoint_id, message_seq, platform, url, payload, attempts, expires_at, kind`,
      ),
      hold: q('UPDATE outbox SET next_attempt_at = max(next_attempt_at, ?4) WHERE endpoint_id = ?1 AND platform = ?2 AND url = ?3'),
      dequeue: q('DELETE FROM outbox WHERE id = ?'),
      retry: q('UPDATE outbox SET next_attempt_at = ?, lease_until = 0 WHERE id = ?'),
      count: q('SELECT count(*) AS n FROM outbox'),
    };
  }

  async claim(now: number, leaseMs: number, limits: ClaimLimits, skip?: ClaimSkips): Promise<Delivery[]> {
    const lanes = claimLanes(limits, skip);
    if (lanes.length === 0) return [];
    // One transaction for every lane: one commit (and fsync, if anything was claimed) on the event loop.
    return this.database.transaction(() =>
      lanes.flatMap(([to, limit, passOver]) =>
        (this.st.claim.all(now + leaseMs, now, to, JSON.stringify(passOver), limit) as unknown as OutboxRow[]).map(toDelivery),
      ),
    );
  }

  async complete<T>(delivery: Delivery, decide: (current: StoredEndpoint | undefined, stillQueued: boolean) => Decision<T>): Promise<T> {
    const written = this.database.transaction(() => {
      const stillQueued = this.st.dequeue.run(delivery.id).changes === 1;
      return this.writes.decideAndWrite(delivery.endpointId, (current) => decide(current, stillQueued));
    });
    return this.writes.committed(delivery.endpointId, written);
  }

  async retry(id: number, nextAttemptAt: number): Promise<void> {
    this.st.retry.run(nextAttemptAt, id);
  }

  async drop(id: number): Promise<void> {
    this.st.dequeue.run(id);
  }

  async hold(endpointId: string, platform: Platform, url: string, until: number): Promise<void> {
    this.st.hold.run(endpointId, platform, url, until);
  }

  async count(): Promise<number> {
    return (this.st.count.get() as { n: number }).n;
  }
}

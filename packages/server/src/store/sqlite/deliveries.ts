// The webhook outbox on SQLite.
import type { StatementSync } from 'node:sqlite';
import type { ClaimLimits, ClaimSkips, Deliveries, Delivery } from '../deliveries.ts';
import type { Decision, StoredEndpoint } from '../endpoints.ts';
import { type OutboxRow, claimLanes, toDelivery } from '../sql/rows.ts';
import type { SqliteDatabase } from './database.ts';
import type { GroupCommit } from './groupCommit.ts';
import type { RowWrites } from './rowWrites.ts';

export class SqliteDeliveries implements Deliveries {
  private readonly database: SqliteDatabase;
  private readonly writes: RowWrites;
  private readonly st: Record<'claim' | 'endedHolds' | 'hold' | 'dequeue' | 'retry' | 'count', StatementSync>;

  private readonly groupCommit: GroupCommit;

  constructor(database: SqliteDatabase, writes: RowWrites, groupCommit: GroupCommit) {
    this.database = database;
    this.writes = writes;
    this.groupCommit = groupCommit;
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
                                              AND NOT EXISTS (SELECT 1 FROM webhook_holds h WHERE h.endpoint_id = o.endpoint_id
                                                                AND h.platform = o.platform AND h.url = o.url AND h.until > ?2)
                      ORDER BY o.next_attempt_at, o.id LIMIT ?5)
         RETURNING id, endpoint_id, message_seq, platform, url, payload, attempts, expires_at, kind`,
      ),
      endedHolds: q('DELETE FROM webhook_holds WHERE endpoint_id = ? AND until <= ?'),
      hold: q(
        `INSERT INTO webhook_holds (endpoint_id, platform, url, until) VALUES (?, ?, ?, ?)
         ON CONFLICT (endpoint_id, platform, url) DO UPDATE SET until = max(until, excluded.until)`,
      ),
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

  /**
   * Joins the turn's group commit, as updates do: at a webhook's pace of deliveries, a transaction
   * and commit of its own for each completion would cost more of the event loop than the rest of
   * the relay together.
   */
  complete<T>(
    delivery: Delivery,
    decide: (current: StoredEndpoint | undefined, stillQueued: boolean) => Decision<T>,
    holdUntil?: number,
  ): Promise<T> {
    const { id, endpointId, platform, url } = delivery;
    return this.groupCommit.add(endpointId, () => {
      const stillQueued = this.st.dequeue.run(id).changes === 1;
      if (holdUntil !== undefined) {
        this.st.endedHolds.run(endpointId, this.database.clock());
        this.st.hold.run(endpointId, platform, url, holdUntil);
      }
      return this.writes.decideAndWrite(endpointId, (current) => decide(current, stillQueued));
    });
  }

  async retry(id: number, nextAttemptAt: number): Promise<void> {
    this.st.retry.run(nextAttemptAt, id);
  }

  async drop(id: number): Promise<void> {
    this.st.dequeue.run(id);
  }

  async count(): Promise<number> {
    return (this.st.count.get() as { n: number }).n;
  }
}

// The deliveries aggregate: the webhook outbox. An entry is written in the transaction of the
// endpoint write that queued its message (a decision's `write.deliveries`), so accepted work is never
// lost; workers claim entries with a lease, and a webhook's entries go out one at a time, oldest first.
import type { Platform } from '../domain/record.ts';
import type { CopyCall } from '../domain/row.ts';
import type { Decision, DeliveryDraft, StoredEndpoint } from './endpoints.ts';

/** An outbox entry claimed by a worker (leased until `leaseUntil`). */
export interface Delivery extends DeliveryDraft {
  id: number;
  endpointId: string;
  /** The message it is about. */
  seq: number;
  kind: CopyCall;
  /** Attempts made so far, including the current one. */
  attempts: number;
}

/** How many entries a claim may lease: in all, or per platform (a platform not named gets none). */
export type ClaimLimits = number | Partial<Record<Platform, number>>;
/** Per platform, the endpoints whose entries to it a claim passes over. */
export type ClaimSkips = Partial<Record<Platform, readonly string[]>>;

export interface Deliveries {
  /**
   * Leases due, unleased outbox entries until `now + leaseMs` and counts the attempt, only the oldest
   * entry of each webhook (endpoint, platform, URL) while it is queued, expired or not: an expired
   * create is never handed out (the expiry pass removes it, and the next becomes due), an expired edit
   * or delete is (the caller gives it up): up to `limits` of them, or, given
   * per platform, up to each platform's limit, all in one transaction. Concurrent callers (other
   * processes included) never receive the same entry while its lease runs. `skip` names, per
   * platform, endpoints whose entries to that platform stay unclaimed (the caller has no room for
   * them yet).
   */
  claim(now: number, leaseMs: number, limits: ClaimLimits, skip?: ClaimSkips): Promise<Delivery[]>;
  /**
   * The delivery succeeded: removes its entry and, in the same transaction, applies `decide` to its
   * endpoint (marks the platform read) as Endpoints.update does. If the entry is gone (superseded),
   * `decide` sees that. With `holdUntil` (epoch ms), the webhook asked for a pause (its rate limit's
   * window is used up): none of the endpoint's entries to it, queued now or later, is claimed before
   * then, from the same commit on, so no claim sees its next entry due in between.
   */
  complete<T>(
    delivery: Delivery,
    decide: (current: StoredEndpoint | undefined, stillQueued: boolean) => Decision<T>,
    holdUntil?: number,
  ): Promise<T>;
  /** Not delivered yet: releases the lease and schedules the next attempt. */
  retry(id: number, nextAttemptAt: number): Promise<void>;
  /** Gives up on an entry. */
  drop(id: number): Promise<void>;
  /** Outbox entries waiting (for metrics and tests). */
  count(): Promise<number>;
}

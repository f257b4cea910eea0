import type { EndpointRecord, Platform } from '../domain/record.ts';

/** Lifecycle facts kept beside the record (not part of the wire format). */
export interface MessageState {
  /** Increments each time a new message becomes pending; names the message in the outbox. */
  seq: number;
  /** When the current message became pending (epoch ms); null while idle. */
  pendingSince: number | null;
}

export interface StoredEndpoint {
  tokenHash: Uint8Array;
  record: EndpointRecord;
  state: MessageState;
}

/** A webhook delivery to enqueue in the same transaction that makes a message pending. */
export interface DeliveryDraft {
  platform: Platform;
  url: string;
  /** The JSON body to POST, serialised. */
  payload: string;
  /** No attempt is made after this instant (epoch ms): the message's TTL. */
  expiresAt: number;
}

/** An outbox entry claimed by a worker (leased until `leaseUntil`). */
export interface Delivery extends DeliveryDraft {
  id: number;
  endpointId: string;
  seq: number;
  /** Attempts made so far, including the current one. */
  attempts: number;
}

/** What an atomic update decided: the row to commit (if any) and a result for the caller. */
export interface Decision<T> {
  write?: {
    record: EndpointRecord;
    state: MessageState;
    /**
     * Deliveries of message `state.seq`. On every write the adapter also drops outbox entries that
     * no longer belong to the pending message: all of them when idle, other messages' when pending.
     */
    deliveries?: DeliveryDraft[];
  };
  result: T;
}

/**
 * The storage port. Adapters (SQLite, PostgreSQL) make `update` atomic: `decide` sees the committed
 * row and nothing else can change it until its decision is committed or dropped.
 */
export interface EndpointStore {
  readonly kind: string;
  get(id: string): Promise<StoredEndpoint | undefined>;
  /** Read-decide-write in one transaction. `decide` must be synchronous and free of I/O. */
  update<T>(id: string, decide: (current: StoredEndpoint | undefined) => Decision<T>): Promise<T>;
  /** false when the ID is taken. */
  create(id: string, tokenHash: Uint8Array, record: EndpointRecord): Promise<boolean>;
  /** false when there is no such endpoint. */
  setTokenHash(id: string, tokenHash: Uint8Array): Promise<boolean>;
  /** false when there is no such endpoint. Its outbox entries go with it. */
  delete(id: string): Promise<boolean>;
  /** IDs in ascending order, starting after `after`. */
  listIds(after: string | undefined, limit: number): Promise<string[]>;

  /**
   * Leases up to `limit` due, unexpired, unleased outbox entries until `now + leaseMs` and counts
   * the attempt. Concurrent callers (other processes included) never receive the same entry while
   * its lease runs.
   */
  claimDeliveries(now: number, leaseMs: number, limit: number): Promise<Delivery[]>;
  /**
   * The delivery succeeded: removes its entry and, in the same transaction, applies `decide` to its
   * endpoint (marks the platform read). If the entry is gone (superseded), `decide` sees that.
   */
  completeDelivery<T>(delivery: Delivery, decide: (current: StoredEndpoint | undefined, stillQueued: boolean) => Decision<T>): Promise<T>;
  /** Not delivered yet: releases the lease and schedules the next attempt. */
  retryDelivery(id: number, nextAttemptAt: number): Promise<void>;
  /** Gives up on an entry. */
  dropDelivery(id: number): Promise<void>;
  /** Outbox entries waiting (for metrics and tests). */
  countDeliveries(): Promise<number>;
  /** Endpoints with a pending message (for metrics). */
  countPending(): Promise<number>;
  /** IDs of endpoints whose message has been pending since before `pendingBefore`. */
  listExpired(pendingBefore: number, limit: number): Promise<string[]>;

  /** Rejects when the store cannot serve requests. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

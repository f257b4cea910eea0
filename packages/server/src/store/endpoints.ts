// The endpoints aggregate: each endpoint's record, token digest and message state, written only as
// its rules decide (domain/update.ts and friends), atomically; and the lookup index of its channels.
import type { EndpointRecord, Platform } from '../domain/record.ts';
import type { ChangeKind, Decision, DeliveryDraft, MessageState } from '../domain/row.ts';

export type { Decision, DeliveryDraft, MessageState };

export interface StoredEndpoint {
  tokenHash: Uint8Array;
  /** Parsed on first use, and shared by every reader of a row kept in memory: never mutate it (copy first). */
  record: EndpointRecord;
  /**
   * The record's JSON text exactly as committed: JSON.stringify of the record, in both adapters. A read
   * sends it without re-serialising, and applyUpdate compares against it to tell a no-op update.
   */
  recordJson: string;
  /** recordJson's length in UTF-8 bytes, when the adapter keeps it with the row (both do). */
  recordJsonBytes?: number;
  state: MessageState;
  /** 0 at creation, + 1 with every committed write of the row; the ID of the change's event. */
  version: number;
  /**
   * What that change's event is: the record (the row is that event), or an edit or delete of a logged
   * message (the event log holds its data).
   */
  lastChange?: ChangeKind;
}

/** An endpoint that has the channel looked up, at position `bridge` of its platform's list. */
export interface ChannelMatch {
  endpoint: string;
  bridge: number;
}

/**
 * Adapters make `update` atomic: `decide` sees the committed row, and its decision commits only if
 * nothing else has changed the row since. Every committed write (of `update`, or of a delivery's
 * completion, see deliveries.ts) also increments the row's `version`, appends the new record to the
 * endpoint's event log and the change log, applies the decision's outbox and message-log writes and
 * keeps the lookup index, all in one transaction, and tells the change feed once committed. A
 * decision without `write` changes nothing.
 */
export interface Endpoints {
  get(id: string): Promise<StoredEndpoint | undefined>;
  /**
   * Read-decide-write, atomically. `decide` must be synchronous and free of I/O, and may run more than
   * once: only the decision on the row as it is when the write commits takes effect.
   */
  update<T>(id: string, decide: (current: StoredEndpoint | undefined) => Decision<T>): Promise<T>;
  /** false when the ID is taken. */
  create(id: string, tokenHash: Uint8Array, record: EndpointRecord): Promise<boolean>;
  /** false when there is no such endpoint. Streams opened with the old token hear of it. */
  setTokenHash(id: string, tokenHash: Uint8Array): Promise<boolean>;
  /** false when there is no such endpoint. Its outbox entries, messages and events go with it. */
  delete(id: string): Promise<boolean>;
  /** IDs in ascending order, starting after `after`. */
  listIds(after: string | undefined, limit: number): Promise<string[]>;
  /**
   * The endpoints whose `config.channels[platform]` holds `channel` (exact match), with its position
   * there, ordered by endpoint ID (byte order) then position; at most `limit`. Answered from an index
   * that every write of a record (create, update, delete, import) keeps in its own transaction, so it
   * is never behind the records, and its cost does not grow with the number of endpoints.
   */
  lookupChannel(platform: Platform, channel: string, limit: number): Promise<ChannelMatch[]>;
  /** Endpoints with a pending message (for metrics). */
  countPending(): Promise<number>;
  /** IDs of endpoints whose message has been pending since before `pendingBefore`. */
  listExpired(pendingBefore: number, limit: number): Promise<string[]>;
}

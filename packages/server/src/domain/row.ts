// An endpoint's row as the rules see it: the record, and the lifecycle facts kept beside it. The
// store commits what the rules decide (store/port.ts); the rules never see how.
import type { EndpointRecord, Platform } from './record.ts';

/** Lifecycle facts kept beside the record (not part of the wire format). */
export interface MessageState {
  /** Increments each time a new message becomes pending; names the message in the outbox. */
  seq: number;
  /** When the current message became pending (epoch ms); null while idle. */
  pendingSince: number | null;
}

export interface Row {
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

/** What an atomic update decided: the row to commit (if any) and a result for the caller. */
export interface Decision<T> {
  write?: {
    record: EndpointRecord;
    /** JSON.stringify(record), when the caller has it already (the adapter serialises it otherwise). */
    recordJson?: string;
    state: MessageState;
    /**
     * Deliveries of message `state.seq`. On every write the adapter also drops outbox entries that
     * no longer belong to the pending message: all of them when idle, other messages' when pending.
     */
    deliveries?: DeliveryDraft[];
    /**
     * Outbox entries of this endpoint to these webhooks are deleted in the same transaction: the
     * record no longer has the webhook, so nothing queued for it is sent.
     */
    dropDeliveriesTo?: { platform: Platform; url: string }[];
  };
  result: T;
}

// An endpoint's row as the rules see it: the record, and the lifecycle facts kept beside it. The
// store commits what the rules decide (store/port.ts); the rules never see how.
import type { MessageLogWrite, QueuedMessage } from './messageQueue.ts';
import type { EndpointRecord, Platform } from './record.ts';

/** Lifecycle facts kept beside the record (not part of the wire format). */
export interface MessageState {
  /** The newest message's number: increments with every accepted message; names it in the log and the outbox. */
  seq: number;
  /** When the oldest unread message was accepted (epoch ms), `queue[0].at`; null while idle (nothing unread). */
  pendingSince: number | null;
  /** The messages some platform has not read yet, oldest first (see messageQueue.ts). */
  queue: readonly QueuedMessage[];
}

export interface Row {
  record: EndpointRecord;
  state: MessageState;
}

/**
 * What a webhook call does to the platform's copy of a message: posts it (`create`), or changes or
 * deletes the copy posted before (known by the ID the webhook answered the create with).
 */
export type CopyCall = 'create' | 'edit' | 'delete';

/** A webhook delivery to enqueue in the same transaction that makes a message pending (or edits or deletes it). */
export interface DeliveryDraft {
  /** Default `create`. */
  kind?: CopyCall;
  /** The message it is about; default the write's newest message (`state.seq`). */
  number?: number;
  platform: Platform;
  url: string;
  /** The JSON body to send, serialised (empty for a delete). */
  payload: string;
  /** No attempt is made after this instant (epoch ms): the message's TTL. */
  expiresAt: number;
}

/** The kinds of change an endpoint's event log and streams carry. */
export type ChangeKind = 'record' | 'edit' | 'delete';

export interface MessageEvent {
  kind: Exclude<ChangeKind, 'record'>;
  json: string;
}

/** What an atomic update decided: the row to commit (if any) and a result for the caller. */
export interface Decision<T> {
  write?: {
    record: EndpointRecord;
    /** JSON.stringify(record), when the caller has it already (the adapter serialises it otherwise). */
    recordJson?: string;
    state: MessageState;
    /**
     * Deliveries of message `state.seq`. A write that leaves the endpoint idle (nothing unread) also
     * drops its outbox entries: no message is waiting for them.
     */
    deliveries?: DeliveryDraft[];
    /**
     * Outbox entries of this endpoint to these webhooks are deleted in the same transaction: the
     * record no longer has the webhook, so nothing queued for it is sent.
     */
    dropDeliveriesTo?: { platform: Platform; url: string }[];
    /** Writes to the endpoint's message log, in the same transaction. */
    messages?: MessageLogWrite;
    /**
     * The event of this write when it is about a logged message rather than the record: an edit or a
     * delete, with its data's JSON text. Without it, the event is the record.
     */
    event?: MessageEvent;
  };
  result: T;
}

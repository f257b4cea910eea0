// The snapshot aggregate: the whole store read out, and rows read in, to move endpoints and bots
// between stores (the CLI's export and import, portability/).
import type { StoredBot } from './bots.ts';
import type { MessageState } from './endpoints.ts';
import type { LoggedMessage } from './messageLog.ts';
import type { Platform } from '../domain/record.ts';
import type { ChangeKind, CopyCall } from '../domain/row.ts';

/** Endpoints per page of exportRows (and per staged batch of importRows). */
export const SNAPSHOT_PAGE_ROWS = 100;

/** An outbox entry of an endpoint, as exported (a lease is not kept). */
export interface SnapshotDelivery {
  /** The message it is about. */
  messageSeq: number;
  /** What it does to the platform's copy: posts it, edits it or deletes it (domain/row.ts). */
  kind: CopyCall;
  platform: Platform;
  url: string;
  payload: string;
  attempts: number;
  nextAttemptAt: number;
  expiresAt: number;
}

/** Everything a store keeps of one endpoint that a move to another store must carry. */
export interface EndpointSnapshot {
  id: string;
  tokenHash: Uint8Array;
  /** The record's JSON text, exactly as committed. */
  recordJson: string;
  state: MessageState;
  version: number;
  /**
   * What the change that made `version` was: the record, or an edit or delete of a logged message
   * (then a stream client one version behind is told it missed an event, as the row is not that event).
   */
  lastChange: ChangeKind;
  /** Webhook calls not yet made, in queue order: creates (none while idle), and edits and deletes of copies. */
  deliveries: SnapshotDelivery[];
  /** The endpoint's message log by number, each message with its copies' IDs (`state.queue` summarises its unread part). */
  messages: LoggedMessage[];
}

export interface ImportOutcome {
  /** Endpoints added (0 when there are conflicts: nothing was written). */
  imported: number;
  /** Endpoints that already existed with identical content. */
  unchanged: number;
  /** IDs that exist with another token digest, record, message state or version, ascending. */
  conflicts: string[];
  /** When bots were given: how many were added (0 when anything conflicts), left as they were, and the conflicting IDs. */
  bots?: { imported: number; unchanged: number; conflicts: string[] };
}

export interface Snapshot {
  /** Names this store in an export's header ("sqlite", "postgres"). */
  readonly source: string;
  /**
   * Every endpoint with its outbox entries and message log, in ascending ID order, read a page of
   * SNAPSHOT_PAGE_ROWS endpoints at a time (memory stays bounded whatever the store's size). Each
   * page is one statement, so an endpoint, its log and its deliveries are consistent with each other; pages
   * read while another process writes may come from different moments (stop the server to move a store).
   */
  exportRows(): AsyncIterable<EndpointSnapshot>;
  /**
   * Adds the endpoints of `rows` (IDs unique among them) in one transaction: all of them, or, if any
   * ID already exists with other content (see ImportOutcome), none. An ID that exists with the same
   * token digest, record, message state and version is left as it is (counted unchanged), so importing
   * the same rows again changes nothing (its message log and outbox are not compared). Imported rows
   * start with an empty event log.
   *
   * `bots` (IDs and key digests unique among them) are added in the same transaction, by the same rule
   * (store/sql/botImport.ts): a bot that exists with another platform or key digest, or whose digest
   * another bot holds, is a conflict, and then nothing at all is written.
   */
  importRows(rows: AsyncIterable<EndpointSnapshot> | Iterable<EndpointSnapshot>, bots?: readonly StoredBot[]): Promise<ImportOutcome>;
}

// The storage port: one store, its aggregates each a small port of its own (endpoints.ts, bots.ts,
// messageLog.ts, deliveries.ts, changes.ts, snapshot.ts, counters.ts). The aggregates of one adapter
// share one database and its transactions: an endpoint's write commits its row, its events, its
// outbox entries, its logged messages and its lookup-index rows together. Adapters: sqlite/ and
// postgres/, each a folder of one small class per aggregate over one shared query runner; open.ts
// builds the one the configuration names.
import type { Bots } from './bots.ts';
import type { Changes } from './changes.ts';
import type { Counters } from './counters.ts';
import type { Deliveries } from './deliveries.ts';
import type { Endpoints } from './endpoints.ts';
import type { MessageLog } from './messageLog.ts';
import type { Snapshot } from './snapshot.ts';

export type { StoredBot } from './bots.ts';
export type { ChangeEntry, ChangeLogWindow, ChangeRead, EndpointEvent, EventLogWindow } from './changes.ts';
export type { Delivery } from './deliveries.ts';
export type { ChannelMatch, Decision, DeliveryDraft, MessageState, StoredEndpoint } from './endpoints.ts';
export type { EndpointSnapshot, ImportOutcome, SnapshotDelivery } from './snapshot.ts';
export type { Bots, Changes, Counters, Deliveries, Endpoints, MessageLog, Snapshot };

/** One group commit, timed on the event loop (wall time: the loop serves nothing else meanwhile). */
export interface GroupCommitTiming {
  /** Updates in the transaction (acknowledged webhook deliveries included). */
  updates: number;
  /** BEGIN, then every update's read, decision and statements, in milliseconds. */
  statementsMs: number;
  /** The COMMIT in milliseconds: the WAL's frames, its fsync, and any automatic checkpoint. */
  commitMs: number;
}

export interface EndpointStore {
  readonly endpoints: Endpoints;
  readonly bots: Bots;
  /** The message log: written with its endpoint's row (Decision.write.messages), read and swept here. */
  readonly messages: MessageLog;
  /** The webhook outbox. */
  readonly deliveries: Deliveries;
  /** The event log, the change log and the change feed. */
  readonly changes: Changes;
  readonly snapshot: Snapshot;
  /** The rate limits' counters. */
  readonly counters: Counters;
  /**
   * The database runs in this process (SQLite): a read answers from memory within the caller's turn.
   * False for a database server across the network (PostgreSQL), whose round trips the HTTP layer
   * overlaps with its other work.
   */
  readonly inProcess: boolean;
  /**
   * A store that groups the updates of one event-loop turn into one transaction (SQLite) tells
   * `listener` of each group commit, for metrics and benchmarks; others leave this out.
   */
  observeGroupCommits?(listener: (commit: GroupCommitTiming) => void): void;
  /** Rejects when the store cannot serve requests. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

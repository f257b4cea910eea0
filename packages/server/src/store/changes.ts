// The changes aggregate: each endpoint's event log (its records as of its newest versions, for a
// stream's replay), the service-wide change log (every committed change in commit order, for the
// stream of all changes), and the feed that says something changed. Both logs are written by the
// endpoint writes themselves, in their transactions (endpoints.ts); this port reads and sweeps them.
import type { EndpointRecord } from '../domain/record.ts';
import type { ChangeKind } from '../domain/row.ts';
import type { ChangeFeed } from './changeFeed.ts';
import type { MessageState } from './endpoints.ts';

/**
 * One committed change of an endpoint: its record as of `version`, or (`kind` edit or delete) the
 * data of an edit or delete of one of its logged messages, whose `json` is that data, not a record.
 */
export interface EndpointEvent {
  readonly version: number;
  readonly kind: ChangeKind;
  /** The pending message's number as of this version (`state.seq`), or null when the endpoint was idle. */
  readonly messageNumber: number | null;
  /** The record's JSON text exactly as committed, in UTF-8: what a stream sends, and counts against its budget. */
  readonly json: Uint8Array;
  /** The same text as a string (for a view that changes it: a bot's redaction). */
  readonly recordJson: string;
  /** Parsed on first use (a replay never parses). */
  readonly record: EndpointRecord;
}

/** The message number an event of this state carries: the pending message's, null when idle. */
export const messageNumberOf = (state: MessageState): number | null => (state.pendingSince === null ? null : state.seq);

/**
 * One entry of the service-wide change log: the `position`-th committed change of any endpoint, in
 * commit order (positions ascend in the order the writes committed, on every instance). `event` is
 * the endpoint's event of that version, or undefined when the endpoint's own log no longer keeps it
 * (it has had `maxEvents` newer changes since, or was deleted): the reader missed that change.
 */
export interface ChangeEntry {
  position: number;
  endpointId: string;
  version: number;
  event: EndpointEvent | undefined;
}

/** One read of the change log (changesSince). */
export interface ChangeRead {
  /** Entries after the position asked for, ascending. */
  entries: ChangeEntry[];
  /**
   * True when changes after the position asked for are no longer kept (past the change window), or
   * the position was never issued (above the newest): the reader missed changes and starts over
   * from `newest`.
   */
  missed: boolean;
  /** The newest committed position when read (0 before the first change). */
  newest: number;
}

/**
 * How far back the service-wide change log reaches: at least the newest `maxChanges` changes, none
 * older than `maxAgeMs`. The periodic sweep (prune) deletes what is past either; the newest entry is
 * always kept, so the newest position is never forgotten.
 */
export interface ChangeLogWindow {
  maxChanges: number;
  maxAgeMs: number;
}

export const DEFAULT_CHANGE_WINDOW: ChangeLogWindow = { maxChanges: 100_000, maxAgeMs: 10 * 60_000 };

/**
 * How much of each endpoint's event log is kept for replay: the newest `maxEvents` events, none
 * older than `maxAgeMs`. Older ones are never returned. Each write deletes the endpoint's events
 * beyond `maxEvents` (a key range, cheap); `prune`, run periodically, deletes those past `maxAgeMs`
 * (checking age on every write would read the endpoint's whole log).
 */
export interface EventLogWindow {
  maxEvents: number;
  maxAgeMs: number;
}

export const DEFAULT_EVENT_WINDOW: EventLogWindow = { maxEvents: 100, maxAgeMs: 10 * 60_000 };

export interface Changes {
  /**
   * Up to `limit` events of the endpoint's log with a version above `afterVersion`, ascending. Only
   * the replay window is kept, so the first may come later than `afterVersion + 1`: the versions in
   * between are gone. Versions of one endpoint are consecutive, so the events returned are too.
   *
   * With `maxBytes`, the events returned hold at most that many bytes of record JSON together, but
   * the first is returned whatever its size: a reader holds at most one read's worth of records
   * (`max(maxBytes, one record)`), and a record larger than `maxBytes` still gets through. The
   * adapters size the events before reading them, so a read never loads the records it leaves out.
   */
  eventsSince(id: string, afterVersion: number, limit: number, maxBytes?: number): Promise<EndpointEvent[]>;
  /**
   * Up to `limit` entries of the service-wide change log after `afterPosition`, ascending, with their
   * events; with `maxBytes`, as eventsSince (the first entry whatever its size, then only while the
   * records together fit). Entries past the change window are never returned.
   */
  changesSince(afterPosition: number, limit: number, maxBytes?: number): Promise<ChangeRead>;
  /**
   * Deletes events older than the window's age from every endpoint's log, and change-log entries past
   * the change window; returns how many rows.
   */
  prune(): Promise<number>;
  /**
   * Notifications of committed writes, token rotations and deletions, from every process this store
   * is shared with (PostgreSQL) or this process (SQLite). `onError` hears of connection trouble the
   * feed recovers from by itself.
   */
  openFeed(hooks?: { onError?: (err: Error) => void }): Promise<ChangeFeed>;
}

/**
 * Whether a reader at `after` missed changes (ChangeRead.missed): the position was never issued, or
 * the entries right after it are no longer kept. `firstKept` (the oldest entry within the window) is
 * asked only when the entries read do not start right after `after`. On PostgreSQL a position can be
 * skipped (a transaction that failed after taking it), so a hole right after `after` while everything
 * before it was pruned may be reported as missed: the reader then starts over, losing nothing.
 */
export function missedChanges(
  after: number,
  entries: readonly ChangeEntry[],
  newest: number,
  firstKept: () => number | undefined,
): boolean {
  if (after > newest) return true;
  if (after === newest || entries[0]?.position === after + 1) return false;
  const first = firstKept();
  return first === undefined || first > after + 1;
}

// Committed endpoint rows kept in memory by the SQLite adapter, so a read costs no SQLite call. The
// profile of getEndpoint put the SQLite read at a sixth of its time. The rows are kept as the port's
// StoredEndpoint (its record parsed at most once, and shared: callers never mutate it).
//
// Coherence: this process's writes evict the row as they write it and put the new row back once it
// has committed; reads inside a transaction are never cached. Other processes on the same file (the
// CLI: create, rotate, delete) are seen through the commit clock, a counter that triggers move with
// every change of an endpoint row, whoever makes it. The cache knows the clock value its rows
// reflect; when the clock shows a value this process did not account for, someone else committed,
// and the cache empties. It is read once per event-loop turn while no write batch of this process is
// in flight (then any movement is someone else's), and each commit of this process reports the clock
// right after its BEGIN and right before its COMMIT (a BEGIN value the cache did not expect means
// someone else committed in between). A read therefore reflects every commit made before the
// event-loop turn in which it runs, or, while a write batch is in flight, at the latest once that
// batch commits (a few milliseconds); updates never rely on this: their writes are conditional on
// the row they were decided on.
import type { StoredEndpoint } from './port.ts';

export class RowCache {
  private readonly rows = new Map<string, StoredEndpoint>();
  /** The commit clock value the cached rows reflect. */
  private known: number | undefined = undefined;
  private checkedThisTurn = false;
  /** Set while this process has a write batch in flight: the clock then moves with it. */
  paused = false;

  private readonly readClock: () => number;
  private readonly maxRows: number;

  /**
   * @param readClock the commit clock, read on the adapter's connection.
   * @param maxRows rows kept at most; the oldest cached go first.
   */
  constructor(readClock: () => number, maxRows: number) {
    this.readClock = readClock;
    this.maxRows = maxRows;
  }

  /**
   * The committed row, from memory when it can be; `load` reads it from SQLite otherwise. Inside a
   * write transaction (call `revalidate` right after BEGIN IMMEDIATE), a cached row is still the
   * committed one, since a row this transaction writes is evicted; what `load` reads there may be
   * uncommitted, so it is not kept.
   */
  get(id: string, inTransaction: boolean, load: () => StoredEndpoint | undefined): StoredEndpoint | undefined {
    if (!inTransaction) this.revalidateOncePerTurn();
    const cached = this.rows.get(id);
    if (cached) return cached;
    const row = load();
    if (row && !inTransaction) this.remember(id, row);
    return row;
  }

  /** This process is writing the row: forget it until the write commits. */
  evict(id: string): void {
    this.rows.delete(id);
  }

  /** This process has just committed the row: keep it (the next read needs no SQLite call). */
  remember(id: string, row: StoredEndpoint): void {
    if (this.maxRows === 0) return;
    // A read may have cached a newer commit before this one's answer arrived (the writer thread).
    // Versions only grow while a row is cached: a deletion evicts it.
    if ((this.rows.get(id)?.version ?? -1) > row.version) return;
    this.rows.delete(id); // re-inserted as the newest
    if (this.rows.size >= this.maxRows) this.rows.delete(this.rows.keys().next().value!);
    this.rows.set(id, row);
  }

  private revalidateOncePerTurn(): void {
    if (this.checkedThisTurn || this.paused) return;
    this.checkedThisTurn = true;
    setImmediate(() => (this.checkedThisTurn = false));
    this.revalidate();
  }

  /**
   * Empties the cache if someone else has committed since the last check. Only while no write of this
   * process is in flight (right after BEGIN IMMEDIATE, or with `paused` false).
   */
  revalidate(): void {
    this.reconcile(this.readClock(), undefined);
  }

  /** Forgets everything (after a write whose outcome is unknown). */
  clear(): void {
    this.rows.clear();
    this.known = undefined;
  }

  /**
   * A commit of this process: the clock was `before` right after its BEGIN and `after` right before
   * its COMMIT. If `before` is not the value the cache knows, someone else committed in between.
   */
  reconcile(before: number, after: number | undefined): void {
    if (before !== this.known) this.rows.clear();
    this.known = after ?? before;
  }
}

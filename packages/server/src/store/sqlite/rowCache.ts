// Committed endpoint rows kept in memory by the SQLite adapter, so a read costs no SQLite call: the
// profile of getEndpoint put the SQLite read at a sixth of its time. The rows are kept as the port's
// StoredEndpoint (its record parsed at most once, and shared: callers never mutate it).
//
// Coherence: this process's own writes evict the row as they write it (inside the transaction, so a
// rolled-back write leaves nothing behind) and put the new row back once it has committed; reads
// inside a transaction are never cached. Writes by other processes on the same file (the CLI: create,
// rotate, delete) are seen through SQLite's `PRAGMA data_version`, which changes when another
// connection commits: it is checked once per event-loop turn, and a change empties the cache. A read therefore reflects every commit made
// before the event-loop turn in which it runs.
import type { StatementSync } from 'node:sqlite';
import type { StoredEndpoint } from '../endpoints.ts';

export class RowCache {
  private readonly rows = new Map<string, StoredEndpoint>();
  private dataVersion: unknown = undefined;
  private checkedThisTurn = false;

  private readonly readDataVersion: StatementSync;
  private readonly maxRows: number;

  /**
   * @param readDataVersion `PRAGMA data_version` on the adapter's connection.
   * @param maxRows rows kept at most; the oldest cached go first.
   */
  constructor(readDataVersion: StatementSync, maxRows: number) {
    this.readDataVersion = readDataVersion;
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
    this.rows.delete(id); // re-inserted as the newest
    if (this.rows.size >= this.maxRows) this.rows.delete(this.rows.keys().next().value!);
    this.rows.set(id, row);
  }

  private revalidateOncePerTurn(): void {
    if (this.checkedThisTurn) return;
    this.checkedThisTurn = true;
    setImmediate(() => (this.checkedThisTurn = false));
    this.revalidate();
  }

  /** Empties the cache if another connection has committed since the last check. */
  revalidate(): void {
    const version = (this.readDataVersion.get() as { data_version: number }).data_version;
    if (version !== this.dataVersion) {
      this.rows.clear();
      this.dataVersion = version;
    }
  }
}

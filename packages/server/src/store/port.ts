import type { EndpointRecord } from '../domain/record.ts';

export interface StoredEndpoint {
  tokenHash: Uint8Array;
  record: EndpointRecord;
}

/** What an atomic update decided: the record to commit (if any) and a result for the caller. */
export interface Decision<T> {
  write?: EndpointRecord;
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
  /** false when there is no such endpoint. */
  delete(id: string): Promise<boolean>;
  /** IDs in ascending order, starting after `after`. */
  listIds(after: string | undefined, limit: number): Promise<string[]>;
  /** Rejects when the store cannot serve requests. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

// The row shapes both SQL adapters read (same column names in SQLite and PostgreSQL) and their
// mapping to the ports' types.
import { parseQueue } from '../../domain/messageQueue.ts';
import type { EndpointRecord, Platform } from '../../domain/record.ts';
import type { ChangeKind, CopyCall } from '../../domain/row.ts';
import type { EndpointEvent } from '../changes.ts';
import type { ClaimLimits, ClaimSkips, Delivery } from '../deliveries.ts';
import type { MessageState, StoredEndpoint } from '../endpoints.ts';

export interface EndpointRow {
  token_hash: Uint8Array;
  /** The record's JSON text, exactly as committed. */
  record: string;
  message_seq: number;
  pending_since: number | null;
  version: number;
  /** The queue summary's JSON text (see domain/messageQueue.ts). */
  queue: string;
  /** What the newest version's event is (domain/row.ts ChangeKind); 'record' when not read. */
  last_change?: string;
}

export interface OutboxRow {
  id: number;
  endpoint_id: string;
  message_seq: number;
  platform: string;
  url: string;
  payload: string;
  attempts: number;
  expires_at: number;
  kind: string;
}

/**
 * The stored endpoint of a row. The record is parsed on first use only: a read that just returns it
 * sends `recordJson` as it is, saving a JSON.parse and a JSON.stringify on every GET. A class
 * rather than an object literal with a getter (cheaper to build), and the SQLite row cache keeps
 * them, so a cached read allocates nothing. Shared by every reader of a cached row: read-only.
 */
export class StoredRow implements StoredEndpoint {
  readonly tokenHash: Uint8Array;
  readonly recordJson: string;
  readonly state: MessageState;
  readonly version: number;
  readonly lastChange: ChangeKind;
  private parsed: EndpointRecord | undefined = undefined;
  private bytes: number | undefined = undefined;

  constructor(row: EndpointRow) {
    this.tokenHash = row.token_hash;
    this.recordJson = row.record;
    this.state = {
      seq: Number(row.message_seq),
      pendingSince: row.pending_since === null ? null : Number(row.pending_since),
      queue: parseQueue(row.queue),
    };
    this.version = row.version;
    this.lastChange = (row.last_change as ChangeKind | undefined) ?? 'record';
  }

  get record(): EndpointRecord {
    return (this.parsed ??= JSON.parse(this.recordJson) as EndpointRecord);
  }

  /** The UTF-8 length of recordJson, counted once: a cached row answers many reads. */
  get recordJsonBytes(): number {
    return (this.bytes ??= Buffer.byteLength(this.recordJson));
  }
}

/** An event as the SQL adapters read it: its version, and the record's JSON as text or as UTF-8 bytes. */
export interface EventRow {
  version: number;
  record: string | Uint8Array;
  message_number: number | null;
  /** ChangeKind; absent: a record. */
  kind?: string;
}

/**
 * An event of the log, from the record as the adapter read it: text (PostgreSQL), or UTF-8 bytes
 * (SQLite reads records as BLOBs: a replay sends them as they are, and no string of a large record
 * enters the JS heap). The other forms are made on first use only.
 */
export class LoggedEvent implements EndpointEvent {
  readonly version: number;
  readonly messageNumber: number | null;
  readonly kind: ChangeKind;
  private text: string | undefined;
  private utf8: Uint8Array | undefined;
  private parsed: EndpointRecord | undefined = undefined;

  constructor(row: EventRow) {
    this.version = row.version;
    this.messageNumber = row.message_number;
    this.kind = (row.kind as ChangeKind | undefined) ?? 'record';
    if (typeof row.record === 'string') this.text = row.record;
    else this.utf8 = row.record;
  }

  get json(): Uint8Array {
    return (this.utf8 ??= Buffer.from(this.text!));
  }

  get recordJson(): string {
    return (this.text ??= Buffer.from(this.utf8!.buffer, this.utf8!.byteOffset, this.utf8!.byteLength).toString('utf8'));
  }

  get record(): EndpointRecord {
    return (this.parsed ??= JSON.parse(this.recordJson) as EndpointRecord);
  }
}

export function toStored(row: EndpointRow | undefined): StoredEndpoint | undefined {
  return row ? new StoredRow(row) : undefined;
}

/** One claim's (platform, or null for any; limit; endpoints to pass over) triples; lanes without room are left out. */
export function claimLanes(limits: ClaimLimits, skip: ClaimSkips = {}): [Platform | null, number, readonly string[]][] {
  if (typeof limits === 'number') return limits > 0 ? [[null, limits, []]] : [];
  return (Object.entries(limits) as [Platform, number][])
    .filter(([, limit]) => limit > 0)
    .map(([to, limit]) => [to, limit, skip[to] ?? []]);
}

export const toDelivery = (r: OutboxRow): Delivery => ({
  id: r.id,
  endpointId: r.endpoint_id,
  seq: r.message_seq,
  platform: r.platform as Platform,
  url: r.url,
  payload: r.payload,
  attempts: r.attempts,
  expiresAt: r.expires_at,
  kind: r.kind as CopyCall,
});

// The row shapes both SQL adapters read (same column names in SQLite and PostgreSQL) and their
// mapping to the port's types.
import type { EndpointRecord, Platform } from '../domain/record.ts';
import type { Delivery, StoredEndpoint } from './port.ts';

export interface EndpointRow {
  token_hash: Uint8Array;
  /** The record's JSON text, exactly as committed. */
  record: string;
  message_seq: number;
  pending_since: number | null;
  version: number;
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
}

/**
 * The stored endpoint of a row. The record is parsed on first use only: a read that just returns it
 * sends `recordJson` as it is (the profile showed JSON.parse and JSON.stringify on every GET).
 */
export function toStored(row: EndpointRow | undefined): StoredEndpoint | undefined {
  if (!row) return undefined;
  let record: EndpointRecord | undefined;
  return {
    tokenHash: row.token_hash,
    recordJson: row.record,
    get record() {
      return (record ??= JSON.parse(row.record) as EndpointRecord);
    },
    state: { seq: row.message_seq, pendingSince: row.pending_since },
    version: row.version,
  };
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
});

// The events shared by the streams of one endpoint: formatted once, kept within their bound, and never
// served to a stream of another endpoint's life under the same ID.
import { describe, expect, it } from 'vitest';
import { initialRecord } from '../../src/domain/record.ts';
import { EndpointReader, SHARED_EVENT_BYTES } from '../../src/events/endpointReader.ts';
import { formatEvent } from '../../src/events/eventFormat.ts';
import { TurnQueue } from '../../src/events/turns.ts';
import type { EndpointStore, StoredEndpoint } from '../../src/store/port.ts';
import { hashToken } from '../../src/tokens.ts';

/** A row as the store reads it: `filler` makes its record about that many bytes longer. */
function row(version: number, token: string, filler = ''): StoredEndpoint {
  const record = initialRecord();
  record.config.blacklist = [`v${version}`, filler];
  return { tokenHash: hashToken(token), record, recordJson: JSON.stringify(record), state: { seq: 0, pendingSince: null }, version };
}

const reader = () => new EndpointReader({} as EndpointStore, new TurnQueue(), { batchSize: 100, replayBatchBytes: 256 * 1024 });

describe('EndpointReader', () => {
  it('when streams send the same version, then it is formatted once and each gets the same bytes, as formatEvent writes them', () => {
    const shared = reader();
    const r = row(3, 't');
    const first = shared.current('ep-1', r);
    const second = shared.current('ep-1', row(3, 't'));
    expect(second.bytes).toBe(first.bytes);
    expect(shared.formatted).toBe(1);
    expect(first.bytes.equals(formatEvent(3, 'record', r.recordJson, null))).toBe(true);
  });

  it('when an endpoint is deleted and created again under the same ID, then its new versions are formatted from its new rows', () => {
    const shared = reader();
    shared.current('ep-1', row(0, 'old'));
    const again = row(0, 'new');
    const event = shared.current('ep-1', again);
    expect(event.bytes.equals(formatEvent(0, 'record', again.recordJson, null))).toBe(true);
    expect(shared.formatted).toBe(2);
  });

  it('when its last stream ends, then what was kept for the endpoint is dropped', () => {
    const shared = reader();
    shared.current('ep-1', row(1, 't'));
    expect(shared.heldBytes).toBeGreaterThan(0);
    shared.forget('ep-1');
    expect(shared.heldBytes).toBe(0);
    shared.current('ep-1', row(1, 't'));
    expect(shared.formatted).toBe(2);
  });

  it('when more events are formatted than the shared bound holds, then the endpoints kept longest ago are dropped first', () => {
    const shared = reader();
    const filler = 'x'.repeat(32 * 1024);
    const endpoints = Math.ceil((2 * SHARED_EVENT_BYTES) / filler.length);
    for (let i = 0; i < endpoints; i++) shared.current(`ep-${i}`, row(1, 't', filler));
    expect(shared.heldBytes).toBeLessThanOrEqual(SHARED_EVENT_BYTES);
    expect(shared.heldBytes).toBeGreaterThan(SHARED_EVENT_BYTES / 2);
    shared.current(`ep-${endpoints - 1}`, row(1, 't', filler)); // the newest is still kept
    expect(shared.formatted).toBe(endpoints);
    shared.current('ep-0', row(1, 't', filler)); // the oldest is not
    expect(shared.formatted).toBe(endpoints + 1);
  });
});

// The reads of the change log shared by the streams of all changes: one store read and one
// formatting per change, whatever the number of streams at that position.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { initialRecord } from '../../src/domain/record.ts';
import { ChangeReader } from '../../src/events/changeReader.ts';
import { TurnQueue } from '../../src/events/turns.ts';
import { SqliteEndpointStore } from '../../src/store/sqlite/store.ts';
import { hashToken } from '../../src/tokens.ts';
import { eventually } from '../http/receiver.ts';

describe('ChangeReader', () => {
  let store: SqliteEndpointStore;
  afterEach(() => store.close());

  let written = 0;
  /** Commits `count` changes of ep-1 (each adds a word to its blacklist); the store notifies its feed. */
  async function change(count: number) {
    for (let i = 0; i < count; i++) {
      await store.endpoints.update('ep-1', (cur) => {
        const record = structuredClone(cur!.record);
        record.config.blacklist.push(`w${written++}`);
        return { write: { record, state: cur!.state }, result: undefined };
      });
    }
  }

  async function withChanges(count: number) {
    store = new SqliteEndpointStore(join(mkdtempSync(join(tmpdir(), 'chatbridge-reader-')), 'store.sqlite'));
    written = 0;
    const feed = await store.changes.openFeed();
    await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
    await change(count);
    return new ChangeReader(store, feed, new TurnQueue(), { batchSize: 100, replayBatchBytes: 256 * 1024 });
  }

  /** What a stream reads from `after` until the reader says it has caught up, as a stream does. */
  async function follow(reader: ChangeReader, after: number): Promise<number[]> {
    const positions: number[] = [];
    let last = after;
    for (;;) {
      const batch = await reader.read(last);
      for (const c of batch.changes) positions.push((last = c.position));
      if (batch.current && last >= batch.newest) return positions;
    }
  }

  it('when four streams ask for the changes after the same position, then the store is read once and each gets the same bytes', async () => {
    const reader = await withChanges(3);
    const batches = await Promise.all([0, 0, 0, 0].map((after) => reader.read(after)));
    expect(reader.reads).toBe(1);
    for (const batch of batches) expect(batch.changes).toBe(batches[0]!.changes);
    expect(batches[0]!.changes.map((c) => c.position)).toHaveLength(3);
    const text = batches[0]!.changes[1]!.bytes.toString();
    expect(text).toMatch(/^id: \d+\nevent: change\ndata: \{"endpoint":"ep-1","version":2,"messageNumber":null,"record":\{/);
    expect(text.endsWith('}}\n\n')).toBe(true);
  });

  it('when a stream follows a little behind, then it is served from the reads kept, without reading the store', async () => {
    const reader = await withChanges(3);
    const [first, second] = (await reader.read(0)).changes;
    const behind = await reader.read(first!.position);
    expect(behind.changes.map((c) => c.position)).toEqual([second!.position, second!.position + 1]);
    expect(reader.reads).toBe(1);
    // At the newest position, changes may commit after any read: the store is asked again.
    await reader.read(second!.position + 1);
    expect(reader.reads).toBe(2);
  });

  it('when changes commit after a read that is kept, then a stream resuming where that read began gets them all, the kept ones first', async () => {
    const reader = await withChanges(0);
    const { newest: start } = await reader.read(Number.MAX_SAFE_INTEGER);
    await change(1);
    expect((await reader.read(start)).changes).toHaveLength(1); // kept: the next stream here is served from memory
    await change(2);
    const resumed = await follow(reader, start);
    expect(resumed).toHaveLength(3);
    expect(resumed).toEqual([...resumed].sort((a, b) => a - b));
  });

  it('when a change is notified while a read is under way, then a stream asking after the notice is not given that older read', async () => {
    await withChanges(1);
    const feed = await store.changes.openFeed();
    // The store's answers wait at a gate: the first read has read the store and not yet returned.
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const gated = {
      changes: {
        changesSince: async (...args: Parameters<SqliteEndpointStore['changes']['changesSince']>) => {
          const read = await store.changes.changesSince(...args);
          await gate;
          return read;
        },
      },
    } as unknown as SqliteEndpointStore;
    const reader = new ChangeReader(gated, feed, new TurnQueue(), { batchSize: 100, replayBatchBytes: 256 * 1024 });
    const newest = (await store.changes.changesSince(0, 100)).newest;
    const early = reader.read(newest);
    await eventually(() => reader.reads === 1);
    await change(1);
    const late = follow(reader, newest);
    open();
    expect((await early).changes).toHaveLength(0);
    expect(await late).toHaveLength(1);
  });
});

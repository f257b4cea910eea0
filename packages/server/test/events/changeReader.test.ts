// The reads of the change log shared by the streams of all changes: one store read and one
// formatting per change, whatever the number of streams at that position.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { initialRecord } from '../../src/domain/record.ts';
import { ChangeReader } from '../../src/events/changeReader.ts';
import { TurnQueue } from '../../src/events/turns.ts';
import { SqliteEndpointStore } from '../../src/store/sqlite.ts';
import { hashToken } from '../../src/tokens.ts';

describe('ChangeReader', () => {
  let store: SqliteEndpointStore;
  afterEach(() => store.close());

  async function withChanges(count: number) {
    store = new SqliteEndpointStore(join(mkdtempSync(join(tmpdir(), 'chatbridge-reader-')), 'store.sqlite'));
    await store.create('ep-1', hashToken('t'), initialRecord());
    for (let i = 0; i < count; i++) {
      await store.update('ep-1', (cur) => {
        const record = structuredClone(cur!.record);
        record.config.blacklist.push(`w${i}`);
        return { write: { record, state: cur!.state }, result: undefined };
      });
    }
    return new ChangeReader(store, new TurnQueue(), { batchSize: 100, replayBatchBytes: 256 * 1024 });
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

  it('when a change commits after a read was kept, then a stream replaying through that read is told to read on past its end', async () => {
    const reader = await withChanges(2);
    const first = await reader.read(0);
    expect(first.newest).toBe(2);
    // Quiet afterwards: the kept read still ends where the log ends.
    expect((await reader.read(0)).newest).toBe(2);
    await store.update('ep-1', (cur) => ({ write: { record: cur!.record, state: cur!.state }, result: undefined }));
    reader.noteChange(); // what the change feed tells it
    const replay = await reader.read(0);
    expect(replay.changes).toBe(first.changes);
    expect(replay.newest).toBeGreaterThan(2);
    const rest = await reader.read(2);
    expect(rest.changes.map((c) => c.position)).toEqual([3]);
  });
});

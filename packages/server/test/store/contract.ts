// The store contract: one suite every adapter of the EndpointStore port must pass.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { initialRecord } from '../../src/domain/record.ts';
import type { EndpointStore } from '../../src/store/port.ts';
import { hashToken } from '../../src/tokens.ts';

export function describeStoreContract(name: string, open: () => Promise<EndpointStore>): void {
  describe(`EndpointStore contract: ${name}`, () => {
    let store: EndpointStore;
    beforeEach(async () => {
      store = await open();
    });
    afterEach(async () => {
      await store.close();
    });

    it('when an endpoint is created, then it reads back with its token digest and initial record', async () => {
      expect(await store.create('ep-1', hashToken('t1'), initialRecord())).toBe(true);
      const found = await store.get('ep-1');
      expect(Buffer.from(found!.tokenHash)).toEqual(hashToken('t1'));
      expect(found!.record).toEqual(initialRecord());
    });

    it('when an ID is taken, then create returns false and keeps the first', async () => {
      await store.create('ep-1', hashToken('t1'), initialRecord());
      expect(await store.create('ep-1', hashToken('t2'), initialRecord())).toBe(false);
      expect(Buffer.from((await store.get('ep-1'))!.tokenHash)).toEqual(hashToken('t1'));
    });

    it('when an update decides to write, then the new record is committed', async () => {
      await store.create('ep-1', hashToken('t'), initialRecord());
      const result = await store.update('ep-1', (cur) => {
        const record = structuredClone(cur!.record);
        record.config.isbeta = true;
        return { write: record, result: 'done' };
      });
      expect(result).toBe('done');
      expect((await store.get('ep-1'))!.record.config.isbeta).toBe(true);
    });

    it('when an update decides not to write, then nothing changes', async () => {
      await store.create('ep-1', hashToken('t'), initialRecord());
      await store.update('ep-1', () => ({ result: null }));
      expect((await store.get('ep-1'))!.record).toEqual(initialRecord());
    });

    it('when decide throws, then nothing is written and the error propagates', async () => {
      await store.create('ep-1', hashToken('t'), initialRecord());
      await expect(
        store.update('ep-1', () => {
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect((await store.get('ep-1'))!.record).toEqual(initialRecord());
    });

    it('when the endpoint does not exist, then decide sees undefined', async () => {
      expect(await store.update('nope', (cur) => ({ result: cur }))).toBeUndefined();
    });

    it('when hundreds of updates run at once, then none is lost', async () => {
      await store.create('ep-1', hashToken('t'), initialRecord());
      await Promise.all(
        Array.from({ length: 300 }, (_, i) =>
          store.update('ep-1', (cur) => {
            const record = structuredClone(cur!.record);
            record.config.blacklist.push(`w${i}`);
            return { write: record, result: undefined };
          }),
        ),
      );
      expect((await store.get('ep-1'))!.record.config.blacklist).toHaveLength(300);
    });

    it('when the token is rotated, then only the new digest is stored', async () => {
      await store.create('ep-1', hashToken('old'), initialRecord());
      expect(await store.setTokenHash('ep-1', hashToken('new'))).toBe(true);
      expect(Buffer.from((await store.get('ep-1'))!.tokenHash)).toEqual(hashToken('new'));
      expect(await store.setTokenHash('missing', hashToken('x'))).toBe(false);
    });

    it('when an endpoint is deleted, then it is gone', async () => {
      await store.create('ep-1', hashToken('t'), initialRecord());
      expect(await store.delete('ep-1')).toBe(true);
      expect(await store.get('ep-1')).toBeUndefined();
      expect(await store.delete('ep-1')).toBe(false);
    });

    it('lists IDs in ascending order, a page at a time', async () => {
      for (const id of ['c', 'a', 'b', 'd']) await store.create(id, hashToken(id), initialRecord());
      expect(await store.listIds(undefined, 2)).toEqual(['a', 'b']);
      expect(await store.listIds('b', 10)).toEqual(['c', 'd']);
    });

    it('answers ping while open', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });
  });
}

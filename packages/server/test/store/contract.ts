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
      expect(found!.state).toEqual({ seq: 0, pendingSince: null });
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
        return { write: { record, state: cur!.state }, result: 'done' };
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
            return { write: { record, state: cur!.state }, result: undefined };
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

    describe('outbox', () => {
      const draft = (platform: 'chat_a' | 'chat_b', expiresAt = 10_000) => ({
        platform,
        url: `https://hooks.example.com/${platform}`,
        payload: '{"content":"hi"}',
        expiresAt,
      });
      /** Makes message `seq` pending (since t=1000) with the given deliveries. */
      const pend = (id: string, seq: number, deliveries = [draft('chat_a'), draft('chat_b')]) =>
        store.update(id, (cur) => ({
          write: { record: cur!.record, state: { seq, pendingSince: 1000 }, deliveries },
          result: undefined,
        }));

      beforeEach(async () => {
        await store.create('ep-o', hashToken('t'), initialRecord());
      });

      it('when a message becomes pending with deliveries, then they are queued with its state', async () => {
        await pend('ep-o', 1);
        expect((await store.get('ep-o'))!.state).toEqual({ seq: 1, pendingSince: 1000 });
        expect(await store.countDeliveries()).toBe(2);
      });

      it('when entries are claimed, then each is leased once, attempts count, and a lease hides it', async () => {
        await pend('ep-o', 1);
        const first = await store.claimDeliveries(2000, 500, 10);
        expect(first.map((d) => [d.platform, d.seq, d.attempts, d.endpointId]).sort()).toEqual([
          ['chat_a', 1, 1, 'ep-o'],
          ['chat_b', 1, 1, 'ep-o'],
        ]);
        expect(await store.claimDeliveries(2100, 500, 10)).toEqual([]);
        const again = await store.claimDeliveries(2600, 500, 10);
        expect(again.map((d) => d.attempts)).toEqual([2, 2]);
      });

      it('when claimed concurrently, then no entry goes to two claimers', async () => {
        for (let i = 0; i < 20; i++) {
          await store.create(`ep-c${i}`, hashToken('t'), initialRecord());
          await pend(`ep-c${i}`, 1);
        }
        const batches = await Promise.all(Array.from({ length: 8 }, () => store.claimDeliveries(2000, 60_000, 7)));
        const ids = batches.flat().map((d) => d.id);
        expect(new Set(ids).size).toBe(ids.length);
        expect(ids.length).toBe(40);
      });

      it('when retried, then the entry is due again only at its next attempt time', async () => {
        await pend('ep-o', 1, [draft('chat_a')]);
        const [d] = await store.claimDeliveries(2000, 60_000, 10);
        await store.retryDelivery(d!.id, 5000);
        expect(await store.claimDeliveries(4999, 100, 10)).toEqual([]);
        expect((await store.claimDeliveries(5000, 100, 10)).map((x) => x.id)).toEqual([d!.id]);
      });

      it('when an entry has expired, then it is never claimed', async () => {
        await pend('ep-o', 1, [draft('chat_a', 3000)]);
        expect(await store.claimDeliveries(3000, 100, 10)).toEqual([]);
      });

      it('when a delivery completes, then its entry is removed and decide runs in the same transaction', async () => {
        await pend('ep-o', 1, [draft('chat_a')]);
        const [d] = await store.claimDeliveries(2000, 60_000, 10);
        const seen = await store.completeDelivery(d!, (cur, stillQueued) => {
          const record = structuredClone(cur!.record);
          record.meta.read.chat_a = true;
          return { write: { record, state: cur!.state }, result: stillQueued };
        });
        expect(seen).toBe(true);
        expect((await store.get('ep-o'))!.record.meta.read.chat_a).toBe(true);
        expect(await store.countDeliveries()).toBe(0);
        expect(await store.completeDelivery(d!, (_cur, stillQueued) => ({ result: stillQueued }))).toBe(false);
      });

      it('when a new message replaces a pending one, then the old undelivered entries are dropped', async () => {
        await pend('ep-o', 1);
        await pend('ep-o', 2, [draft('chat_b')]);
        const claimed = await store.claimDeliveries(2000, 100, 10);
        expect(claimed.map((d) => [d.seq, d.platform])).toEqual([[2, 'chat_b']]);
      });

      it('when the endpoint returns to idle, then all its entries are dropped', async () => {
        await pend('ep-o', 1);
        await store.update('ep-o', (cur) => ({ write: { record: cur!.record, state: { seq: 1, pendingSince: null } }, result: undefined }));
        expect(await store.countDeliveries()).toBe(0);
      });

      it('when the endpoint is deleted, then its entries go with it', async () => {
        await pend('ep-o', 1);
        await store.delete('ep-o');
        expect(await store.countDeliveries()).toBe(0);
      });

      it('lists endpoints pending since before a time', async () => {
        await pend('ep-o', 1, []);
        expect(await store.listExpired(1000, 10)).toEqual([]);
        expect(await store.listExpired(1001, 10)).toEqual(['ep-o']);
      });

      it('when dropped, then an entry is gone', async () => {
        await pend('ep-o', 1, [draft('chat_a')]);
        const [d] = await store.claimDeliveries(2000, 100, 10);
        await store.dropDelivery(d!.id);
        expect(await store.countDeliveries()).toBe(0);
      });
    });

    it('answers ping while open', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });
  });
}

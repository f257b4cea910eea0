// The store contract: one suite every adapter of the EndpointStore port must pass.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type EndpointRecord, type Platform, initialRecord } from '../../src/domain/record.ts';
import type { ChangeFeed } from '../../src/store/changeFeed.ts';
import type { ChangeLogWindow, EndpointSnapshot, EndpointStore, EventLogWindow, MessageState } from '../../src/store/port.ts';
import { hashToken } from '../../src/tokens.ts';
import { CONVERSATION_LOG, CONVERSATION_OUTBOX, arrangeConversation } from './conversation.ts';

/** What the event-log cases need to control in a fresh store. */
export interface ContractStoreOptions {
  clock?: () => number;
  eventWindow?: Partial<EventLogWindow>;
  changeWindow?: Partial<ChangeLogWindow>;
}

/** Collects change notices of one endpoint and waits for them (PostgreSQL delivers them asynchronously). */
function noticesOf(feed: ChangeFeed, endpointId: string) {
  const versions: number[] = [];
  let waiter: (() => void) | undefined;
  const unsubscribe = feed.subscribe(endpointId, (version) => {
    if (version === undefined) return; // "look again" after a reconnection: not a change
    versions.push(version);
    waiter?.();
  });
  return {
    versions,
    unsubscribe,
    /** Resolves once `n` notices arrived; rejects after 5 s. */
    async count(n: number): Promise<number[]> {
      const deadline = Date.now() + 5000;
      while (versions.length < n) {
        if (Date.now() > deadline) throw new Error(`expected ${n} notices for ${endpointId}, got ${JSON.stringify(versions)}`);
        await new Promise<void>((resolve) => {
          waiter = resolve;
          setTimeout(resolve, 50);
        });
      }
      return versions;
    },
  };
}

/** Message 3 of the export tests, as its endpoint's log keeps it: unread by chat_a and chat_b. */
const LOGGED_3 = {
  number: 3,
  sender: 'chat_c' as const,
  senderChannel: 'c-channel-1',
  message: '{"content":"hi"}',
  unread: 3,
  createdAt: 60_000,
};
/** LOGGED_3 as the log reads it back: no copy's ID known, no native reply, never edited or deleted. */
const READ_3 = { ...LOGGED_3, expired: 0, ids: {}, replyTo: null, edits: 0, editedAt: null, deletedAt: null };

/** The state of an endpoint whose newest message `seq`, accepted at `at`, chat_a and chat_b have still to read. */
const pendingState = (seq: number, at: number): MessageState => ({ seq, pendingSince: at, queue: [{ n: seq, u: 3, at, b: 2 }] });

/** A record with one more blacklist word: every call is a distinct change. */
const withWord = (record: EndpointRecord, word: string): EndpointRecord => {
  const next = structuredClone(record);
  next.config.blacklist.push(word);
  return next;
};

export function describeStoreContract(name: string, open: (options?: ContractStoreOptions) => Promise<EndpointStore>): void {
  describe(`EndpointStore contract: ${name}`, () => {
    let store: EndpointStore;
    beforeEach(async () => {
      store = await open();
    });
    afterEach(async () => {
      await store.close();
    });

    it('when an endpoint is created, then it reads back with its token digest and initial record', async () => {
      expect(await store.endpoints.create('ep-1', hashToken('t1'), initialRecord())).toBe(true);
      const found = await store.endpoints.get('ep-1');
      expect(Buffer.from(found!.tokenHash)).toEqual(hashToken('t1'));
      expect(found!.record).toEqual(initialRecord());
      expect(found!.state).toEqual({ seq: 0, pendingSince: null, queue: [] });
    });

    it('when an ID is taken, then create returns false and keeps the first', async () => {
      await store.endpoints.create('ep-1', hashToken('t1'), initialRecord());
      expect(await store.endpoints.create('ep-1', hashToken('t2'), initialRecord())).toBe(false);
      expect(Buffer.from((await store.endpoints.get('ep-1'))!.tokenHash)).toEqual(hashToken('t1'));
    });

    it('when an update decides to write, then the new record is committed', async () => {
      await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
      const result = await store.endpoints.update('ep-1', (cur) => {
        const record = structuredClone(cur!.record);
        record.config.isbeta = true;
        return { write: { record, state: cur!.state }, result: 'done' };
      });
      expect(result).toBe('done');
      expect((await store.endpoints.get('ep-1'))!.record.config.isbeta).toBe(true);
    });

    it('when an update decides not to write, then nothing changes', async () => {
      await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
      await store.endpoints.update('ep-1', () => ({ result: null }));
      expect((await store.endpoints.get('ep-1'))!.record).toEqual(initialRecord());
    });

    it('when decide throws, then nothing is written and the error propagates', async () => {
      await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
      await expect(
        store.endpoints.update('ep-1', () => {
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect((await store.endpoints.get('ep-1'))!.record).toEqual(initialRecord());
    });

    it('when concurrent updates run and one of them throws, then only that one is undone and the others commit', async () => {
      await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
      const append = (word: string, fail = false) =>
        store.endpoints.update('ep-1', (cur) => {
          const record = structuredClone(cur!.record);
          record.config.blacklist.push(word);
          if (fail) throw new Error(`refused ${word}`);
          return { write: { record, state: cur!.state }, result: word };
        });
      const results = await Promise.allSettled([append('a'), append('b', true), append('c'), append('d', true), append('e')]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled']);
      expect((await store.endpoints.get('ep-1'))!.record.config.blacklist.sort()).toEqual(['a', 'c', 'e']);
    });

    it('when one update of a batch fails in the middle of its write, then all of its write is undone and the others commit', async () => {
      await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
      await store.endpoints.create('ep-2', hashToken('t'), initialRecord());
      const append = (id: string, word: string, expiresAt = 10_000) =>
        store.endpoints.update(id, (cur) => {
          const record = structuredClone(cur!.record);
          record.config.blacklist.push(word);
          // The outbox's integer column refuses a fractional expiry: the write fails on its last
          // statement, after the row and its event were written.
          const deliveries = [{ platform: 'chat_a' as const, url: 'https://h.example/a', payload: '{}', expiresAt }];
          return { write: { record, state: pendingState(1, 1000), deliveries }, result: word };
        });
      const results = await Promise.allSettled([append('ep-1', 'a'), append('ep-2', 'b', 1.5), append('ep-1', 'c'), append('ep-2', 'd')]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
      // The batch's others are retried one by one, at once: either may commit first.
      expect((await store.endpoints.get('ep-1'))!.record.config.blacklist.sort()).toEqual(['a', 'c']);
      const second = (await store.endpoints.get('ep-2'))!;
      expect([second.version, second.record.config.blacklist]).toEqual([1, ['d']]);
      expect((await store.changes.eventsSince('ep-2', 0, 10)).map((e) => [e.version, e.record.config.blacklist])).toEqual([[1, ['d']]]);
      expect(await store.deliveries.count()).toBe(2); // one each: ep-1's second write keeps its message's entry
    });

    it('when the endpoint does not exist, then decide sees undefined', async () => {
      expect(await store.endpoints.update('nope', (cur) => ({ result: cur }))).toBeUndefined();
    });

    it('when hundreds of updates run at once, then none is lost', async () => {
      await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
      await Promise.all(
        Array.from({ length: 300 }, (_, i) =>
          store.endpoints.update('ep-1', (cur) => {
            const record = structuredClone(cur!.record);
            record.config.blacklist.push(`w${i}`);
            return { write: { record, state: cur!.state }, result: undefined };
          }),
        ),
      );
      expect((await store.endpoints.get('ep-1'))!.record.config.blacklist).toHaveLength(300);
    });

    it('when the token is rotated, then only the new digest is stored', async () => {
      await store.endpoints.create('ep-1', hashToken('old'), initialRecord());
      expect(await store.endpoints.setTokenHash('ep-1', hashToken('new'))).toBe(true);
      expect(Buffer.from((await store.endpoints.get('ep-1'))!.tokenHash)).toEqual(hashToken('new'));
      expect(await store.endpoints.setTokenHash('missing', hashToken('x'))).toBe(false);
    });

    it('when an endpoint is deleted, then it is gone', async () => {
      await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
      expect(await store.endpoints.delete('ep-1')).toBe(true);
      expect(await store.endpoints.get('ep-1')).toBeUndefined();
      expect(await store.endpoints.delete('ep-1')).toBe(false);
    });

    it('lists IDs in ascending order, a page at a time', async () => {
      for (const id of ['c', 'a', 'b', 'd']) await store.endpoints.create(id, hashToken(id), initialRecord());
      expect(await store.endpoints.listIds(undefined, 2)).toEqual(['a', 'b']);
      expect(await store.endpoints.listIds('b', 10)).toEqual(['c', 'd']);
    });

    describe('bots', () => {
      const digestsOf = async () =>
        (await store.bots.list()).map((b) => ({ id: b.id, platform: b.platform, keyHash: Buffer.from(b.keyHash) }));

      it('when bots are created, then they are listed in ascending ID order with their platform and key digest', async () => {
        expect(await store.bots.create({ id: 'bot-b', platform: 'chat_b', keyHash: hashToken('kb') })).toBe(true);
        expect(await store.bots.create({ id: 'bot-a', platform: 'chat_a', keyHash: hashToken('ka') })).toBe(true);
        expect(await digestsOf()).toEqual([
          { id: 'bot-a', platform: 'chat_a', keyHash: hashToken('ka') },
          { id: 'bot-b', platform: 'chat_b', keyHash: hashToken('kb') },
        ]);
      });

      it('when a bot ID is taken, then createBot returns false and keeps the first', async () => {
        await store.bots.create({ id: 'bot-b', platform: 'chat_b', keyHash: hashToken('k1') });
        expect(await store.bots.create({ id: 'bot-b', platform: 'chat_c', keyHash: hashToken('k2') })).toBe(false);
        expect(await digestsOf()).toEqual([{ id: 'bot-b', platform: 'chat_b', keyHash: hashToken('k1') }]);
      });

      it('when a bot key is replaced, then only the new digest is kept; an unknown bot is reported', async () => {
        await store.bots.create({ id: 'bot-b', platform: 'chat_b', keyHash: hashToken('old') });
        expect(await store.bots.setKeyHash('bot-b', hashToken('new'))).toBe(true);
        expect(await digestsOf()).toEqual([{ id: 'bot-b', platform: 'chat_b', keyHash: hashToken('new') }]);
        expect(await store.bots.setKeyHash('no-bot', hashToken('x'))).toBe(false);
      });

      it('when a bot is deleted, then it is no longer listed, and deleting it again reports it absent', async () => {
        await store.bots.create({ id: 'bot-b', platform: 'chat_b', keyHash: hashToken('k') });
        expect(await store.bots.delete('bot-b')).toBe(true);
        expect(await store.bots.list()).toEqual([]);
        expect(await store.bots.delete('bot-b')).toBe(false);
      });
    });

    describe('outbox', () => {
      const draft = (platform: 'chat_a' | 'chat_b', expiresAt = 10_000) => ({
        platform,
        url: `https://hooks.example.com/${platform}`,
        payload: '{"content":"hi"}',
        expiresAt,
      });
      /** Appends message `seq` (accepted at t=1000) to the queue with the given deliveries; older ones stay queued. */
      const pend = (id: string, seq: number, deliveries = [draft('chat_a'), draft('chat_b')]) =>
        store.endpoints.update(id, (cur) => ({
          write: {
            record: cur!.record,
            state: { seq, pendingSince: cur!.state.pendingSince ?? 1000, queue: [...cur!.state.queue, { n: seq, u: 3, at: 1000, b: 2 }] },
            deliveries,
          },
          result: undefined,
        }));

      beforeEach(async () => {
        await store.endpoints.create('ep-o', hashToken('t'), initialRecord());
      });

      it('when a message becomes pending with deliveries, then they are queued with its state', async () => {
        await pend('ep-o', 1);
        expect((await store.endpoints.get('ep-o'))!.state).toEqual(pendingState(1, 1000));
        expect(await store.deliveries.count()).toBe(2);
      });

      it('when entries are claimed, then each is leased once, attempts count, and a lease hides it', async () => {
        await pend('ep-o', 1);
        const first = await store.deliveries.claim(2000, 500, 10);
        expect(first.map((d) => [d.platform, d.seq, d.attempts, d.endpointId]).sort()).toEqual([
          ['chat_a', 1, 1, 'ep-o'],
          ['chat_b', 1, 1, 'ep-o'],
        ]);
        expect(await store.deliveries.claim(2100, 500, 10)).toEqual([]);
        const again = await store.deliveries.claim(2600, 500, 10);
        expect(again.map((d) => d.attempts)).toEqual([2, 2]);
      });

      it('when limits are given per platform, then each platform gets at most its own, and a platform not named gets none', async () => {
        await store.endpoints.create('ep-p', hashToken('t'), initialRecord());
        await pend('ep-o', 1);
        await pend('ep-p', 1);
        expect((await store.deliveries.claim(2000, 60_000, { chat_b: 1 })).map((d) => d.platform)).toEqual(['chat_b']);
        const both = await store.deliveries.claim(2000, 60_000, { chat_a: 5, chat_b: 0 });
        expect(both.map((d) => [d.platform, d.endpointId]).sort()).toEqual([
          ['chat_a', 'ep-o'],
          ['chat_a', 'ep-p'],
        ]);
        expect((await store.deliveries.claim(2000, 60_000, { chat_a: 5, chat_b: 5 })).map((d) => d.platform)).toEqual(['chat_b']);
      });

      it('when endpoints are named to pass over for a platform, then their entries to it stay queued and their others are claimed', async () => {
        await store.endpoints.create('ep-p', hashToken('t'), initialRecord());
        await pend('ep-o', 1);
        await pend('ep-p', 1);
        const claimed = await store.deliveries.claim(2000, 60_000, { chat_a: 5, chat_b: 5 }, { chat_a: ['ep-o'] });
        expect(claimed.map((d) => [d.platform, d.endpointId]).sort()).toEqual([
          ['chat_a', 'ep-p'],
          ['chat_b', 'ep-o'],
          ['chat_b', 'ep-p'],
        ]);
        expect((await store.deliveries.claim(2000, 60_000, { chat_a: 5 })).map((d) => [d.platform, d.endpointId, d.attempts])).toEqual([
          ['chat_a', 'ep-o', 1],
        ]);
      });

      it('when claimed concurrently, then no entry goes to two claimers', async () => {
        for (let i = 0; i < 20; i++) {
          await store.endpoints.create(`ep-c${i}`, hashToken('t'), initialRecord());
          await pend(`ep-c${i}`, 1);
        }
        const batches = await Promise.all(Array.from({ length: 8 }, () => store.deliveries.claim(2000, 60_000, 7)));
        const ids = batches.flat().map((d) => d.id);
        expect(new Set(ids).size).toBe(ids.length);
        expect(ids.length).toBe(40);
      });

      it('when retried, then the entry is due again only at its next attempt time', async () => {
        await pend('ep-o', 1, [draft('chat_a')]);
        const [d] = await store.deliveries.claim(2000, 60_000, 10);
        await store.deliveries.retry(d!.id, 5000);
        expect(await store.deliveries.claim(4999, 100, 10)).toEqual([]);
        expect((await store.deliveries.claim(5000, 100, 10)).map((x) => x.id)).toEqual([d!.id]);
      });

      it('when an entry has expired, then it is never claimed', async () => {
        await pend('ep-o', 1, [draft('chat_a', 3000)]);
        expect(await store.deliveries.claim(3000, 100, 10)).toEqual([]);
      });

      it('when a delivery completes, then its entry is removed and decide runs in the same transaction', async () => {
        await pend('ep-o', 1, [draft('chat_a')]);
        const [d] = await store.deliveries.claim(2000, 60_000, 10);
        const seen = await store.deliveries.complete(d!, (cur, stillQueued) => {
          const record = structuredClone(cur!.record);
          record.meta.read.chat_a = true;
          return { write: { record, state: cur!.state }, result: stillQueued };
        });
        expect(seen).toBe(true);
        expect((await store.endpoints.get('ep-o'))!.record.meta.read.chat_a).toBe(true);
        expect(await store.deliveries.count()).toBe(0);
        expect(await store.deliveries.complete(d!, (_cur, stillQueued) => ({ result: stillQueued }))).toBe(false);
      });

      it('when a new message follows a pending one, then the old entries stay queued and each webhook is handed its oldest first', async () => {
        await pend('ep-o', 1);
        await pend('ep-o', 2, [draft('chat_b')]);
        expect(await store.deliveries.count()).toBe(3);
        const claimed = await store.deliveries.claim(2000, 60_000, 10);
        expect(claimed.map((d) => [d.seq, d.platform]).sort()).toEqual([
          [1, 'chat_a'],
          [1, 'chat_b'],
        ]);
        // chat_b's message 2 waits behind its message 1, even while that one is leased or retried.
        const first = claimed.find((d) => d.platform === 'chat_b')!;
        expect(await store.deliveries.claim(2200, 100, 10)).toEqual([]);
        await store.deliveries.retry(first.id, 2300);
        expect(await store.deliveries.claim(2250, 100, 10)).toEqual([]);
        await store.deliveries.complete(first, () => ({ result: undefined }));
        expect((await store.deliveries.claim(2250, 100, 10)).map((d) => [d.seq, d.platform])).toEqual([[2, 'chat_b']]);
      });

      it("when a webhook's oldest entry has expired, then nothing of that webhook is handed out until the message is settled for it; then the next one is", async () => {
        await pend('ep-o', 1, [draft('chat_a', 3000)]);
        await pend('ep-o', 2, [draft('chat_a', 9000)]);
        expect((await store.deliveries.claim(2000, 100, 10)).map((d) => d.seq)).toEqual([1]);
        expect(await store.deliveries.claim(3000, 100, 10)).toEqual([]);
        // The relay's expiry pass gives message 1 up for chat_a (bit 1), which removes its entry.
        await store.endpoints.update('ep-o', (cur) => ({
          write: {
            record: cur!.record,
            state: { ...cur!.state, queue: cur!.state.queue.slice(1) },
            messages: { settle: [{ number: 1, unread: 0, expired: 1 }] },
          },
          result: undefined,
        }));
        expect((await store.deliveries.claim(3000, 100, 10)).map((d) => d.seq)).toEqual([2]);
      });

      it("when a webhook's oldest entry is dropped, then its next one is handed out, in order, behind no other", async () => {
        for (let seq = 1; seq <= 5; seq++) await pend('ep-o', seq, [draft('chat_a')]);
        const [first] = await store.deliveries.claim(2000, 60_000, 10);
        expect(first!.seq).toBe(1);
        await store.deliveries.drop(first!.id);
        const handed: number[] = [];
        for (let round = 0; round < 5; round++) {
          const claimed = await store.deliveries.claim(2000, 60_000, 10);
          expect(claimed.length).toBeLessThanOrEqual(1);
          for (const d of claimed) {
            handed.push(d.seq);
            await store.deliveries.complete(d, () => ({ result: undefined }));
          }
        }
        expect(handed).toEqual([2, 3, 4, 5]);
      });

      it("when a delivery completes with a pause (the webhook's rate limit is used up), then none of that webhook's entries is due before the time given; other webhooks' are", async () => {
        await pend('ep-o', 1);
        await pend('ep-o', 2);
        await pend('ep-o', 3, [draft('chat_a')]);
        const first = await store.deliveries.claim(2000, 100, 10);
        expect(first.map((d) => [d.seq, d.platform])).toEqual([
          [1, 'chat_a'],
          [1, 'chat_b'],
        ]);
        await store.deliveries.complete(first[0]!, () => ({ result: undefined }), 5000);
        await store.deliveries.complete(first[1]!, () => ({ result: undefined }));
        expect((await store.deliveries.claim(2000, 60_000, 10)).map((d) => [d.seq, d.platform])).toEqual([[2, 'chat_b']]);
        expect((await store.deliveries.claim(4999, 60_000, 10)).map((d) => [d.seq, d.platform])).toEqual([]);
        expect((await store.deliveries.claim(5000, 60_000, 10)).map((d) => [d.seq, d.platform])).toEqual([[2, 'chat_a']]);
      });

      it("when a webhook's queue was empty as it paused, then what is queued to it during the pause is not due before the pause ends", async () => {
        await pend('ep-o', 1, [draft('chat_a')]);
        const [first] = await store.deliveries.claim(2000, 60_000, 10);
        await store.deliveries.complete(first!, () => ({ result: undefined }), 5000);
        await pend('ep-o', 2);
        expect((await store.deliveries.claim(2000, 60_000, 10)).map((d) => [d.seq, d.platform])).toEqual([[2, 'chat_b']]);
        expect((await store.deliveries.claim(4999, 60_000, 10)).map((d) => [d.seq, d.platform])).toEqual([]);
        expect((await store.deliveries.claim(5000, 60_000, 10)).map((d) => [d.seq, d.platform])).toEqual([[2, 'chat_a']]);
      });

      it('when the endpoint returns to idle, then all its entries are dropped', async () => {
        await pend('ep-o', 1);
        await pend('ep-o', 2);
        await store.endpoints.update('ep-o', (cur) => ({
          write: { record: cur!.record, state: { seq: 2, pendingSince: null, queue: [] } },
          result: undefined,
        }));
        expect(await store.deliveries.count()).toBe(0);
      });

      it('when the endpoint is deleted, then its entries go with it', async () => {
        await pend('ep-o', 1);
        await store.endpoints.delete('ep-o');
        expect(await store.deliveries.count()).toBe(0);
      });

      it("when a write settles a message for a platform, then that message's entries to the platform go with it; its other entries and later messages' stay", async () => {
        await pend('ep-o', 1);
        await pend('ep-o', 2);
        // chat_a (bit 1) has read message 1, chat_b (bit 2) has not.
        await store.endpoints.update('ep-o', (cur) => ({
          write: {
            record: cur!.record,
            state: { ...cur!.state, queue: [{ n: 1, u: 2, at: 1000, b: 2 }, cur!.state.queue[1]!] },
            messages: { settle: [{ number: 1, unread: 2, expired: 0 }] },
          },
          result: undefined,
        }));
        expect(await store.deliveries.count()).toBe(3);
        const claimed = await store.deliveries.claim(2000, 60_000, 10);
        expect(claimed.map((d) => [d.seq, d.platform]).sort()).toEqual([
          [1, 'chat_b'],
          [2, 'chat_a'],
        ]);
      });

      it('when the endpoint is deleted, then its message log goes with it, and its ID created anew starts with an empty log', async () => {
        const logged = {
          number: 1,
          sender: 'chat_c' as const,
          senderChannel: 'c-1',
          message: '{"content":"hi"}',
          unread: 3,
          createdAt: 1000,
        };
        await store.endpoints.update('ep-o', (cur) => ({
          write: { record: cur!.record, state: pendingState(1, 1000), messages: { append: logged } },
          result: undefined,
        }));
        expect(await store.messages.get('ep-o', 1)).toEqual({
          ...logged,
          expired: 0,
          ids: {},
          replyTo: null,
          edits: 0,
          editedAt: null,
          deletedAt: null,
        });
        await store.endpoints.delete('ep-o');
        await store.endpoints.create('ep-o', hashToken('t'), initialRecord());
        expect(await store.messages.list('ep-o', 0, 10)).toEqual([]);
        expect(await store.messages.get('ep-o', 1)).toBeUndefined();
      });

      it('lists endpoints pending since before a time', async () => {
        await pend('ep-o', 1, []);
        expect(await store.endpoints.listExpired(1000, 10)).toEqual([]);
        expect(await store.endpoints.listExpired(1001, 10)).toEqual(['ep-o']);
      });

      it('when dropped, then an entry is gone', async () => {
        await pend('ep-o', 1, [draft('chat_a')]);
        const [d] = await store.deliveries.claim(2000, 100, 10);
        await store.deliveries.drop(d!.id);
        expect(await store.deliveries.count()).toBe(0);
      });
    });

    describe('event log', () => {
      /** One committed change: appends `word` to the blacklist. */
      const change = (id: string, word: string) =>
        store.endpoints.update(id, (cur) => ({ write: { record: withWord(cur!.record, word), state: cur!.state }, result: undefined }));

      it('when an endpoint is created, then its version is 0 and its log is empty', async () => {
        await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
        expect((await store.endpoints.get('ep-1'))!.version).toBe(0);
        expect(await store.changes.eventsSince('ep-1', 0, 10)).toEqual([]);
        expect(await store.changes.eventsSince('missing', 0, 10)).toEqual([]);
      });

      it('when updates write, then each increments the version once and logs the committed record under it', async () => {
        await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
        await change('ep-1', 'a');
        await change('ep-1', 'b');
        const current = (await store.endpoints.get('ep-1'))!;
        expect(current.version).toBe(2);
        const events = await store.changes.eventsSince('ep-1', 0, 10);
        expect(events.map((e) => [e.version, e.record.config.blacklist])).toEqual([
          [1, ['a']],
          [2, ['a', 'b']],
        ]);
        expect(events[1]!.record).toEqual(current.record);
        expect((await store.changes.eventsSince('ep-1', 1, 10)).map((e) => e.version)).toEqual([2]);
        expect((await store.changes.eventsSince('ep-1', 0, 1)).map((e) => e.version)).toEqual([1]);
        expect(await store.changes.eventsSince('ep-1', 2, 10)).toEqual([]);
      });

      it('when decide writes nothing or throws, then neither the version nor the log changes', async () => {
        await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
        await change('ep-1', 'a');
        await store.endpoints.update('ep-1', () => ({ result: undefined }));
        await expect(
          store.endpoints.update('ep-1', () => {
            throw new Error('boom');
          }),
        ).rejects.toThrow('boom');
        expect((await store.endpoints.get('ep-1'))!.version).toBe(1);
        expect((await store.changes.eventsSince('ep-1', 0, 10)).map((e) => e.version)).toEqual([1]);
      });

      it('when a rotation changes the token, then it is no change of the record: no version, no event', async () => {
        await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
        await store.endpoints.setTokenHash('ep-1', hashToken('t2'));
        expect((await store.endpoints.get('ep-1'))!.version).toBe(0);
        expect(await store.changes.eventsSince('ep-1', 0, 10)).toEqual([]);
      });

      it('when a delivery completes with a write, then that is one more version; completed without one, none', async () => {
        await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
        const deliveries = (['chat_a', 'chat_b'] as const).map((platform) => ({
          platform,
          url: `https://h.example/${platform}`,
          payload: '{}',
          expiresAt: 10_000,
        }));
        await store.endpoints.update('ep-1', (cur) => ({
          write: { record: cur!.record, state: pendingState(1, 1000), deliveries },
          result: undefined,
        }));
        const [first, second] = await store.deliveries.claim(2000, 60_000, 10);
        await store.deliveries.complete(first!, (cur) => {
          const record = structuredClone(cur!.record);
          record.meta.read[first!.platform] = true;
          return { write: { record, state: cur!.state }, result: undefined };
        });
        await store.deliveries.complete(second!, () => ({ result: undefined }));
        expect((await store.endpoints.get('ep-1'))!.version).toBe(2);
        const events = await store.changes.eventsSince('ep-1', 0, 10);
        expect(events.map((e) => e.version)).toEqual([1, 2]);
        expect(events[1]!.record.meta.read[first!.platform]).toBe(true);
      });

      it('when more changes commit than the window holds, then only the newest are kept', async () => {
        await store.close();
        store = await open({ eventWindow: { maxEvents: 5 } });
        await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
        for (let i = 1; i <= 12; i++) await change('ep-1', `w${i}`);
        expect((await store.endpoints.get('ep-1'))!.version).toBe(12);
        expect((await store.changes.eventsSince('ep-1', 0, 100)).map((e) => e.version)).toEqual([8, 9, 10, 11, 12]);
        expect((await store.changes.eventsSince('ep-1', 9, 100)).map((e) => e.version)).toEqual([10, 11, 12]);
      });

      it('when events pass the age limit, then they are never returned, and the sweep deletes them', async () => {
        let now = 1_000_000;
        await store.close();
        store = await open({ clock: () => now, eventWindow: { maxAgeMs: 1000 } });
        await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
        await store.endpoints.create('ep-2', hashToken('t'), initialRecord());
        await change('ep-1', 'a'); // v1 at t
        await change('ep-2', 'a'); // v1 at t
        now += 600;
        await change('ep-1', 'b'); // v2 at t + 600
        now += 600; // ep-1 v1 and ep-2 v1 are now 1200 ms old
        expect((await store.changes.eventsSince('ep-1', 0, 10)).map((e) => e.version)).toEqual([2]);
        expect(await store.changes.eventsSince('ep-2', 0, 10)).toEqual([]);
        expect(await store.changes.prune()).toBe(2);
        expect(await store.changes.prune()).toBe(0);
        now += 2000;
        await change('ep-1', 'c'); // v3; v2 is past the limit: hidden at once, deleted by the sweep
        await change('ep-2', 'b');
        expect((await store.changes.eventsSince('ep-1', 0, 10)).map((e) => e.version)).toEqual([3]);
        expect(await store.changes.prune()).toBe(1);
        expect(await store.changes.prune()).toBe(0);
        expect((await store.changes.eventsSince('ep-1', 0, 10)).map((e) => e.version)).toEqual([3]);
        expect((await store.endpoints.get('ep-1'))!.version).toBe(3);
      });

      it('when an endpoint is deleted, then its events go with it', async () => {
        await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
        await change('ep-1', 'a');
        await change('ep-1', 'b');
        await store.endpoints.delete('ep-1');
        expect(await store.changes.eventsSince('ep-1', 0, 10)).toEqual([]);
        await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
        expect((await store.endpoints.get('ep-1'))!.version).toBe(0);
        expect(await store.changes.eventsSince('ep-1', 0, 10)).toEqual([]);
        expect(await store.changes.prune()).toBe(0);
      });

      it('when a read is bounded in bytes, then it returns the events that fit together, the first whatever its size', async () => {
        await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
        // Non-ASCII words: the bound counts UTF-8 bytes, not characters.
        for (const word of ['短い', '長い単語'.repeat(50), 'ß', '語'.repeat(400)]) await change('ep-1', word);
        const all = await store.changes.eventsSince('ep-1', 0, 10);
        expect(all.map((e) => e.version)).toEqual([1, 2, 3, 4]);
        for (const e of all) {
          expect(e.recordJson).toBe(JSON.stringify(e.record));
          expect(e.json.byteLength).toBe(Buffer.byteLength(e.recordJson));
        }
        const [b1, b2, b3, b4] = all.map((e) => e.json.byteLength) as [number, number, number, number];
        const versions = async (after: number, limit: number, maxBytes: number) =>
          (await store.changes.eventsSince('ep-1', after, limit, maxBytes)).map((e) => e.version);
        expect(await versions(0, 10, b1 + b2 + b3 + b4)).toEqual([1, 2, 3, 4]);
        expect(await versions(0, 10, b1 + b2)).toEqual([1, 2]);
        expect(await versions(0, 10, b1 + b2 - 1)).toEqual([1]);
        expect(await versions(0, 10, 1)).toEqual([1]); // larger than the bound, and still returned
        expect(await versions(1, 10, b2 + b3 + b4 - 1)).toEqual([2, 3]);
        expect(await versions(3, 10, 1)).toEqual([4]);
        expect(await versions(0, 2, b1 + b2 + b3 + b4)).toEqual([1, 2]); // the count bound still holds
        expect(await versions(4, 10, 1)).toEqual([]);
        expect((await store.changes.eventsSince('ep-1', 1, 1, 1))[0]!.recordJson).toBe(all[1]!.recordJson);
      });

      it('when hundreds of updates run at once, then the versions are consecutive and each event holds the record of its version', async () => {
        await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
        await Promise.all(Array.from({ length: 250 }, (_, i) => change('ep-1', `w${i}`)));
        expect((await store.endpoints.get('ep-1'))!.version).toBe(250);
        const events = await store.changes.eventsSince('ep-1', 0, 1000);
        expect(events.map((e) => e.version)).toEqual(Array.from({ length: 100 }, (_, i) => 151 + i));
        for (const [i, e] of events.entries()) {
          // Version v is the v-th committed append, and each record extends the one before it.
          expect(e.record.config.blacklist).toHaveLength(e.version);
          if (i > 0) expect(e.record.config.blacklist.slice(0, -1)).toEqual(events[i - 1]!.record.config.blacklist);
        }
      });

      it('when a write commits, then the change feed tells the subscribers of that endpoint its version, and only them', async () => {
        const feed = await store.changes.openFeed();
        try {
          await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
          await store.endpoints.create('ep-2', hashToken('t'), initialRecord());
          const one = noticesOf(feed, 'ep-1');
          const two = noticesOf(feed, 'ep-2');
          await store.endpoints.update('ep-1', () => ({ result: undefined })); // no write: no notice
          await change('ep-1', 'a');
          await change('ep-1', 'b');
          expect(await one.count(2)).toEqual([1, 2]);
          one.unsubscribe();
          await change('ep-1', 'c');
          await change('ep-2', 'a');
          expect(await two.count(1)).toEqual([1]);
          expect(one.versions).toEqual([1, 2]);
        } finally {
          await feed.close();
        }
      });

      it('when the token is rotated or the endpoint deleted, then its subscribers are told (their streams must end)', async () => {
        const feed = await store.changes.openFeed();
        try {
          await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
          const notices = noticesOf(feed, 'ep-1');
          await change('ep-1', 'a');
          await notices.count(1);
          await store.endpoints.setTokenHash('ep-1', hashToken('t2'));
          await store.endpoints.delete('ep-1');
          // Both tell the current version: nothing new to read, but the token must be checked again.
          expect(await notices.count(3)).toEqual([1, 1, 1]);
        } finally {
          await feed.close();
        }
      });
    });

    describe('change log (the stream of all changes)', () => {
      const change = (id: string, word: string, pendingSince: number | null = null) =>
        store.endpoints.update(id, (cur) => ({
          write: {
            record: withWord(cur!.record, word),
            state:
              pendingSince === null ? { ...cur!.state, pendingSince: null, queue: [] } : pendingState(cur!.state.seq + 1, pendingSince),
          },
          result: undefined,
        }));
      const seen = async (after: number, limit = 1000, maxBytes?: number) =>
        (await store.changes.changesSince(after, limit, maxBytes)).entries.map((e) => `${e.endpointId}@${e.version}`);

      it('when writes of several endpoints commit, then the change log lists each once, in commit order, with its event', async () => {
        expect(await store.changes.changesSince(0, 10)).toEqual({ entries: [], missed: false, newest: 0 });
        for (const id of ['ep-1', 'ep-2']) await store.endpoints.create(id, hashToken('t'), initialRecord());
        await change('ep-1', 'a');
        await change('ep-2', 'b', 5000);
        await change('ep-1', 'c');
        const read = await store.changes.changesSince(0, 10);
        expect(read.missed).toBe(false);
        expect(read.entries.map((e) => `${e.endpointId}@${e.version}`)).toEqual(['ep-1@1', 'ep-2@1', 'ep-1@2']);
        const positions = read.entries.map((e) => e.position);
        expect(positions).toEqual([...positions].sort((a, b) => a - b));
        expect(read.newest).toBe(positions[2]);
        expect(read.entries.map((e) => e.event?.record.config.blacklist)).toEqual([['a'], ['b'], ['a', 'c']]);
        // The pending message's number travels with its event; null while idle.
        expect(read.entries.map((e) => e.event?.messageNumber)).toEqual([null, 1, null]);
        expect((await store.changes.eventsSince('ep-2', 0, 10)).map((e) => e.messageNumber)).toEqual([1]);
        // Resuming after a position: what followed it, nothing before.
        expect(await seen(positions[0]!)).toEqual(['ep-2@1', 'ep-1@2']);
        expect(await seen(positions[0]!, 1)).toEqual(['ep-2@1']);
        expect(await store.changes.changesSince(positions[2]!, 10)).toEqual({ entries: [], missed: false, newest: positions[2] });
      });

      it('when a read is bounded in bytes, then it returns the entries whose records fit together, the first whatever its size', async () => {
        await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
        for (const word of ['a', 'b'.repeat(500), 'c']) await change('ep-1', word);
        const all = (await store.changes.changesSince(0, 10)).entries;
        const [b1, b2] = all.map((e) => e.event!.json.byteLength) as [number, number];
        expect(await seen(0, 10, b1 + b2)).toEqual(['ep-1@1', 'ep-1@2']);
        expect(await seen(0, 10, b1 + b2 - 1)).toEqual(['ep-1@1']);
        expect(await seen(0, 10, 1)).toEqual(['ep-1@1']);
        expect(Buffer.from(all[1]!.event!.json).toString()).toBe(all[1]!.event!.recordJson);
      });

      it("when an endpoint's own log no longer keeps an event, then its entry says so, without an event", async () => {
        await store.close();
        store = await open({ eventWindow: { maxEvents: 2 } });
        for (const id of ['ep-1', 'ep-2']) await store.endpoints.create(id, hashToken('t'), initialRecord());
        for (const word of ['a', 'b', 'c']) await change('ep-1', word);
        await change('ep-2', 'x');
        await store.endpoints.delete('ep-2');
        const entries = (await store.changes.changesSince(0, 10)).entries;
        expect(entries.map((e) => [`${e.endpointId}@${e.version}`, e.event?.version])).toEqual([
          ['ep-1@1', undefined], // beyond ep-1's window of 2 events
          ['ep-1@2', 2],
          ['ep-1@3', 3],
          ['ep-2@1', undefined], // ep-2 was deleted
        ]);
      });

      it('when entries pass the change window, then a reader behind it is told it missed changes, and the sweep deletes them', async () => {
        let now = 1_000_000;
        await store.close();
        store = await open({ clock: () => now, changeWindow: { maxChanges: 3, maxAgeMs: 1000 } });
        await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
        for (const word of ['a', 'b', 'c', 'd', 'e']) await change('ep-1', word);
        const positions = (await store.changes.changesSince(0, 10)).entries.map((e) => e.position);
        expect(positions).toHaveLength(5);
        expect(await store.changes.prune()).toBe(2); // beyond the newest 3
        expect(await seen(0)).toEqual(['ep-1@3', 'ep-1@4', 'ep-1@5']);
        expect((await store.changes.changesSince(0, 10)).missed).toBe(true);
        expect((await store.changes.changesSince(positions[1]!, 10)).missed).toBe(false); // the next one is still kept
        expect((await store.changes.changesSince(positions[4]! + 1, 10)).missed).toBe(true); // never issued
        now += 1500; // all past the age limit: hidden at once, and swept but for the newest
        expect(await store.changes.changesSince(positions[2]!, 10)).toEqual({ entries: [], missed: true, newest: positions[4] });
        expect(await store.changes.changesSince(positions[4]!, 10)).toEqual({ entries: [], missed: false, newest: positions[4] });
        expect(await store.changes.prune()).toBe(2);
        await change('ep-1', 'f');
        expect(await seen(positions[4]!)).toEqual(['ep-1@6']);
      });

      it('when hundreds of writes of several endpoints run at once, then positions ascend, each change is listed once, and each endpoint in version order', async () => {
        const ids = ['ep-1', 'ep-2', 'ep-3', 'ep-4'];
        for (const id of ids) await store.endpoints.create(id, hashToken('t'), initialRecord());
        // Read while writing: a reader must never see a position before a smaller one commits.
        const got: string[] = [];
        let after = 0;
        const readOnce = async () => {
          const { entries, missed } = await store.changes.changesSince(after, 1000);
          expect(missed).toBe(false);
          for (const e of entries) got.push(`${e.endpointId}@${e.version}`);
          after = entries.at(-1)?.position ?? after;
        };
        const writes = Promise.all(Array.from({ length: 200 }, (_, i) => change(ids[i % 4]!, `w${i}`)));
        while (got.length < 200) {
          await readOnce();
          await new Promise((resolve) => setTimeout(resolve, 1));
        }
        await writes;
        await readOnce();
        expect(new Set(got).size).toBe(200);
        for (const id of ids) {
          expect(got.filter((g) => g.startsWith(`${id}@`))).toEqual(Array.from({ length: 50 }, (_, i) => `${id}@${i + 1}`));
        }
      });

      it('when a write commits, then the feed tells the subscribers of every endpoint', async () => {
        const feed = await store.changes.openFeed();
        try {
          await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
          const heard: string[] = [];
          const off = feed.subscribeAll((id, version) => id !== undefined && heard.push(`${id}@${version}`));
          await change('ep-1', 'a');
          const deadline = Date.now() + 5000;
          while (heard.length < 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
          expect(heard).toEqual(['ep-1@1']);
          off();
        } finally {
          await feed.close();
        }
      });
    });

    describe('export and import', () => {
      const all = async () => {
        const rows: EndpointSnapshot[] = [];
        for await (const row of store.snapshot.exportRows()) rows.push(row);
        return rows;
      };
      /** What a faithful move must carry, in comparable form. */
      const comparable = (rows: EndpointSnapshot[]) => rows.map((r) => ({ ...r, tokenHash: Buffer.from(r.tokenHash).toString('hex') }));
      /** ep-p: a pending message (seq 3) with two deliveries, one attempted; ep-q: idle, a few versions on. */
      const arrange = async () => {
        await store.endpoints.create('ep-q', hashToken('tq'), initialRecord());
        await store.endpoints.create('ep-p', hashToken('tp'), initialRecord());
        for (const word of ['a', 'b']) {
          await store.endpoints.update('ep-q', (cur) => ({
            write: { record: withWord(cur!.record, word), state: cur!.state },
            result: undefined,
          }));
        }
        await store.endpoints.update('ep-p', (cur) => {
          const record = structuredClone(cur!.record);
          record.meta.trigger = true;
          record.meta.read.chat_c = true;
          const deliveries = (['chat_a', 'chat_b'] as const).map((platform) => ({
            platform,
            url: `https://hooks.example.com/${platform}`,
            payload: `{"content":"to ${platform}"}`,
            expiresAt: 90_000,
          }));
          return { write: { record, state: pendingState(3, 60_000), deliveries, messages: { append: LOGGED_3 } }, result: undefined };
        });
        const [claimed] = await store.deliveries.claim(61_000, 500, { chat_a: 1 });
        await store.deliveries.retry(claimed!.id, 62_000);
      };

      it('when the store is exported, then each endpoint comes once in ID order with its digest, record text, message state, version, deliveries and message log', async () => {
        await arrange();
        const rows = await all();
        expect(rows.map((r) => r.id)).toEqual(['ep-p', 'ep-q']);
        const [p, q] = rows;
        expect(Buffer.from(p!.tokenHash)).toEqual(hashToken('tp'));
        expect(p!.recordJson).toBe((await store.endpoints.get('ep-p'))!.recordJson);
        expect([p!.state, p!.version, p!.lastChange]).toEqual([pendingState(3, 60_000), 1, 'record']);
        expect(p!.messages).toEqual([READ_3]);
        expect(q!.messages).toEqual([]);
        expect(p!.deliveries).toEqual([
          {
            messageSeq: 3,
            kind: 'create',
            platform: 'chat_a',
            url: 'https://hooks.example.com/chat_a',
            payload: '{"content":"to chat_a"}',
            attempts: 1,
            nextAttemptAt: 62_000,
            expiresAt: 90_000,
          },
          {
            messageSeq: 3,
            kind: 'create',
            platform: 'chat_b',
            url: 'https://hooks.example.com/chat_b',
            payload: '{"content":"to chat_b"}',
            attempts: 0,
            nextAttemptAt: 0,
            expiresAt: 90_000,
          },
        ]);
        expect([q!.state, q!.version, q!.deliveries]).toEqual([{ seq: 0, pendingSince: null, queue: [] }, 2, []]);
      });

      it('when more endpoints than a page hold are exported, then every one comes exactly once, in ID order', async () => {
        const ids = Array.from({ length: 250 }, (_, i) => `ep-${String(i).padStart(3, '0')}`);
        await Promise.all(ids.map((id) => store.endpoints.create(id, hashToken(id), initialRecord())));
        expect((await all()).map((r) => r.id)).toEqual(ids);
      });

      it('when exported rows are imported into a store without them, then they read back as they were and their deliveries are due again', async () => {
        await arrange();
        const exported = await all();
        await store.endpoints.delete('ep-p');
        await store.endpoints.delete('ep-q');
        expect(await store.snapshot.importRows(exported)).toEqual({ imported: 2, unchanged: 0, conflicts: [] });
        // The message log and the queue come along: the imported message is still unread by chat_a and chat_b.
        expect(comparable(await all())).toEqual(comparable(exported));
        const found = await store.endpoints.get('ep-p');
        expect([found!.recordJson, found!.state, found!.version]).toEqual([exported[0]!.recordJson, pendingState(3, 60_000), 1]);
        expect(await store.messages.list('ep-p', 0, 10, 'chat_a')).toEqual([READ_3]);
        expect((await store.deliveries.claim(63_000, 500, 10)).map((d) => [d.endpointId, d.platform, d.seq, d.attempts])).toEqual([
          ['ep-p', 'chat_a', 3, 2],
          ['ep-p', 'chat_b', 3, 1],
        ]);
      });

      it('when the same rows are imported again, then nothing changes and they count as unchanged', async () => {
        await arrange();
        const exported = await all();
        expect(await store.snapshot.importRows(exported)).toEqual({ imported: 0, unchanged: 2, conflicts: [] });
        expect(comparable(await all())).toEqual(comparable(exported));
        expect(await store.deliveries.count()).toBe(2);
      });

      it('when an endpoint with message IDs, a native reply, an edit, a delete and queued edit and delete calls is exported and imported, then all of it reads back, each ID finds its message, and the calls go out in order', async () => {
        await store.endpoints.create('ep-c', hashToken('tc'), initialRecord());
        await arrangeConversation(store, 'ep-c');
        const exported = await all();
        const [c] = exported;
        expect(c!.messages).toEqual(CONVERSATION_LOG);
        expect(c!.deliveries).toEqual(CONVERSATION_OUTBOX);
        expect([c!.state, c!.version, c!.lastChange]).toEqual([{ seq: 2, pendingSince: null, queue: [] }, 5, 'delete']);

        await store.endpoints.delete('ep-c');
        expect(await store.messages.find('ep-c', 'chat_d', 'd-1')).toBeUndefined(); // the IDs went with their messages
        expect(await store.snapshot.importRows(exported)).toEqual({ imported: 1, unchanged: 0, conflicts: [] });
        expect(comparable(await all())).toEqual(comparable(exported));
        expect((await store.endpoints.get('ep-c'))!.lastChange).toBe('delete');
        for (const [platform, id] of Object.entries(CONVERSATION_LOG[0]!.ids)) {
          expect(await store.messages.find('ep-c', platform as Platform, id)).toEqual(CONVERSATION_LOG[0]);
        }
        expect(await store.messages.find('ep-c', 'chat_c', 'c-2')).toEqual(CONVERSATION_LOG[1]);

        // Again: nothing changes, and no call is queued twice.
        expect(await store.snapshot.importRows(exported)).toEqual({ imported: 0, unchanged: 1, conflicts: [] });
        expect(comparable(await all())).toEqual(comparable(exported));
        expect(await store.deliveries.count()).toBe(2);

        // The webhook's queue keeps its order: the edit, and only once it is done, the delete.
        const first = await store.deliveries.claim(80_000, 500, 10);
        expect(first.map((d) => [d.kind, d.seq, d.platform])).toEqual([['edit', 1, 'chat_a']]);
        await store.deliveries.complete(first[0]!, () => ({ result: undefined }));
        const second = await store.deliveries.claim(81_000, 500, 10);
        expect(second.map((d) => [d.kind, d.seq, d.platform, d.payload])).toEqual([['delete', 2, 'chat_a', '']]);
      });

      it('when some IDs exist with other content, then nothing is imported and those IDs are listed', async () => {
        await arrange();
        const exported = await all();
        const fresh = { ...exported[1]!, id: 'ep-new' };
        const otherToken = { ...exported[0]!, tokenHash: hashToken('another') };
        const otherRecord = { ...exported[1]!, recordJson: JSON.stringify(initialRecord()) };
        expect(await store.snapshot.importRows([fresh, otherToken, otherRecord])).toEqual({
          imported: 0,
          unchanged: 0,
          conflicts: ['ep-p', 'ep-q'],
        });
        expect(await store.endpoints.get('ep-new')).toBeUndefined();
        expect(await store.snapshot.importRows([{ ...exported[1]!, version: 7 }, exported[0]!])).toMatchObject({
          unchanged: 1,
          conflicts: ['ep-q'],
        });
      });

      it('when bots come with the rows, then they are added with them, a rerun leaves them unchanged, and a conflicting bot writes nothing at all', async () => {
        await arrange();
        const exported = await all();
        await store.endpoints.delete('ep-p');
        const bots = [
          { id: 'bot-a', platform: 'chat_a' as const, keyHash: hashToken('key-a') },
          { id: 'bot-b', platform: 'chat_b' as const, keyHash: hashToken('key-b') },
        ];
        expect(await store.snapshot.importRows(exported, bots)).toEqual({
          imported: 1,
          unchanged: 1,
          conflicts: [],
          bots: { imported: 2, unchanged: 0, conflicts: [] },
        });
        const listed = async () => (await store.bots.list()).map((b) => [b.id, b.platform, Buffer.from(b.keyHash).toString('hex')]);
        const hex = (token: string) => Buffer.from(hashToken(token)).toString('hex');
        expect(await listed()).toEqual([
          ['bot-a', 'chat_a', hex('key-a')],
          ['bot-b', 'chat_b', hex('key-b')],
        ]);
        expect(await store.snapshot.importRows(exported, bots)).toMatchObject({
          imported: 0,
          bots: { imported: 0, unchanged: 2, conflicts: [] },
        });

        // bot-a with another key, bot-c with bot-b's key: both conflict, and the fresh endpoint is not written either.
        await store.endpoints.delete('ep-q');
        const conflicting = [
          { ...bots[0]!, keyHash: hashToken('another') },
          { id: 'bot-c', platform: 'chat_c' as const, keyHash: hashToken('key-b') },
        ];
        expect(await store.snapshot.importRows(exported, conflicting)).toEqual({
          imported: 0,
          unchanged: 1,
          conflicts: [],
          bots: { imported: 0, unchanged: 0, conflicts: ['bot-a', 'bot-c'] },
        });
        expect(await store.endpoints.get('ep-q')).toBeUndefined();
        expect(await listed()).toEqual([
          ['bot-a', 'chat_a', hex('key-a')],
          ['bot-b', 'chat_b', hex('key-b')],
        ]);
      });

      it('when two rows of one import share an ID, then it fails and nothing is written', async () => {
        const row = (token: string): EndpointSnapshot => ({
          id: 'ep-twice',
          tokenHash: hashToken(token),
          recordJson: JSON.stringify(initialRecord()),
          state: { seq: 0, pendingSince: null, queue: [] },
          version: 0,
          lastChange: 'record',
          deliveries: [],
          messages: [],
        });
        await expect(store.snapshot.importRows([{ ...row('a'), id: 'ep-once' }, row('a'), row('b')])).rejects.toThrow();
        expect(await all()).toEqual([]);
        // The store is still usable, its staging left empty.
        expect(await store.snapshot.importRows([row('a')])).toEqual({ imported: 1, unchanged: 0, conflicts: [] });
      });

      it('when rows arrive from an async source, then they are imported in one piece', async () => {
        async function* source(): AsyncGenerator<EndpointSnapshot> {
          for (let i = 0; i < 230; i++) {
            await new Promise((resolve) => setImmediate(resolve));
            yield {
              id: `ep-${i}`,
              tokenHash: hashToken(`t${i}`),
              recordJson: JSON.stringify(initialRecord()),
              state: { seq: 0, pendingSince: null, queue: [] },
              version: 0,
              lastChange: 'record',
              deliveries: [],
              messages: [],
            };
          }
        }
        expect(await store.snapshot.importRows(source())).toEqual({ imported: 230, unchanged: 0, conflicts: [] });
        expect((await all()).length).toBe(230);
      });
    });

    describe('lookup index', () => {
      /** A record whose `platform` channels are `channels`. */
      const withChannels = (channels: Partial<Record<Platform, string[]>>, base: EndpointRecord = initialRecord()): EndpointRecord => {
        const next = structuredClone(base);
        Object.assign(next.config.channels, channels);
        return next;
      };
      const setChannels = (id: string, channels: Partial<Record<Platform, string[]>>) =>
        store.endpoints.update(id, (cur) => ({
          write: { record: withChannels(channels, cur!.record), state: cur!.state },
          result: undefined,
        }));

      it('when records are created and updated, then lookup names each endpoint and position holding the channel, in ID order', async () => {
        await store.endpoints.create('ep-b', hashToken('t'), withChannels({ chat_b: ['shared', 'b-only'] }));
        await store.endpoints.create('ep-a', hashToken('t'), initialRecord());
        await setChannels('ep-a', { chat_b: ['x', 'y', 'shared'], chat_c: ['shared'] });
        expect(await store.endpoints.lookupChannel('chat_b', 'shared', 10)).toEqual([
          { endpoint: 'ep-a', bridge: 2 },
          { endpoint: 'ep-b', bridge: 0 },
        ]);
        expect(await store.endpoints.lookupChannel('chat_c', 'shared', 10)).toEqual([{ endpoint: 'ep-a', bridge: 0 }]);
        expect(await store.endpoints.lookupChannel('chat_b', 'shared', 1)).toEqual([{ endpoint: 'ep-a', bridge: 2 }]);
        expect(await store.endpoints.lookupChannel('chat_a', 'shared', 10)).toEqual([]);
      });

      it('when channels move, are overwritten or removed, then lookup follows in the same write; other endpoints keep theirs', async () => {
        await store.endpoints.create('ep-1', hashToken('t'), withChannels({ chat_a: ['a0', 'a1', 'a2'] }));
        await store.endpoints.create('ep-2', hashToken('t'), withChannels({ chat_a: ['a1'] }));
        await setChannels('ep-1', { chat_a: ['a0', 'a2'] }); // bridge 1 removed: a2 moves down
        expect(await store.endpoints.lookupChannel('chat_a', 'a2', 10)).toEqual([{ endpoint: 'ep-1', bridge: 1 }]);
        expect(await store.endpoints.lookupChannel('chat_a', 'a1', 10)).toEqual([{ endpoint: 'ep-2', bridge: 0 }]);
        await setChannels('ep-1', { chat_a: ['a9', 'a2'] }); // overwritten at 0
        expect(await store.endpoints.lookupChannel('chat_a', 'a0', 10)).toEqual([]);
        expect(await store.endpoints.lookupChannel('chat_a', 'a9', 10)).toEqual([{ endpoint: 'ep-1', bridge: 0 }]);
        // A write that leaves the channels as they were (a message) keeps the rows as they are.
        await store.endpoints.update('ep-1', (cur) => {
          const record = structuredClone(cur!.record);
          record.meta.message.content = 'hello';
          return { write: { record, state: cur!.state }, result: undefined };
        });
        expect(await store.endpoints.lookupChannel('chat_a', 'a2', 10)).toEqual([{ endpoint: 'ep-1', bridge: 1 }]);
      });

      it('when channel IDs hold any character (NUL, quotes, backslashes, controls, non-ASCII), then lookup finds each exactly', async () => {
        const odd = ['a\u0000b', 'quote"d', 'back\\slash', 'tab\tnew\nline', 'é🎉', 'a'];
        await store.endpoints.create('ep-1', hashToken('t'), withChannels({ chat_b: odd.slice(0, 3) }));
        await store.endpoints.create('ep-2', hashToken('t'), initialRecord());
        await setChannels('ep-2', { chat_b: odd.slice(3) });
        for (const [i, channel] of odd.entries()) {
          expect(await store.endpoints.lookupChannel('chat_b', channel, 10)).toEqual([
            { endpoint: i < 3 ? 'ep-1' : 'ep-2', bridge: i % 3 },
          ]);
        }
        expect(await store.endpoints.lookupChannel('chat_b', 'a\u0000', 10)).toEqual([]);
        const snapshot = [];
        for await (const row of store.snapshot.exportRows()) snapshot.push(row);
        await store.endpoints.delete('ep-1');
        await store.endpoints.delete('ep-2');
        expect(await store.snapshot.importRows(snapshot)).toMatchObject({ imported: 2 });
        for (const [i, channel] of odd.entries()) {
          expect(await store.endpoints.lookupChannel('chat_b', channel, 10)).toEqual([
            { endpoint: i < 3 ? 'ep-1' : 'ep-2', bridge: i % 3 },
          ]);
        }
      });

      it('when a write is not committed (decide throws, or writes nothing), then the index is as before', async () => {
        await store.endpoints.create('ep-1', hashToken('t'), withChannels({ chat_d: ['d0'] }));
        await expect(
          store.endpoints.update('ep-1', () => {
            throw new Error('boom');
          }),
        ).rejects.toThrow('boom');
        await store.endpoints.update('ep-1', () => ({ result: undefined }));
        expect(await store.endpoints.lookupChannel('chat_d', 'd0', 10)).toEqual([{ endpoint: 'ep-1', bridge: 0 }]);
      });

      it('when an endpoint is deleted, then its channels leave the index', async () => {
        await store.endpoints.create('ep-1', hashToken('t'), withChannels({ chat_d: ['d0'] }));
        await store.endpoints.delete('ep-1');
        expect(await store.endpoints.lookupChannel('chat_d', 'd0', 10)).toEqual([]);
        // Its ID created anew starts with no channels.
        await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
        expect(await store.endpoints.lookupChannel('chat_d', 'd0', 10)).toEqual([]);
      });

      it('when rows are imported, then their channels are indexed; rows of a refused import are not', async () => {
        const row = (id: string, channels: Partial<Record<Platform, string[]>>): EndpointSnapshot => ({
          id,
          tokenHash: hashToken('t'),
          recordJson: JSON.stringify(withChannels(channels)),
          state: { seq: 0, pendingSince: null, queue: [] },
          version: 3,
          lastChange: 'record',
          deliveries: [],
          messages: [],
        });
        expect(await store.snapshot.importRows([row('ep-1', { chat_b: ['b0', 'b1'] }), row('ep-2', { chat_b: ['b1'] })])).toMatchObject({
          imported: 2,
        });
        expect(await store.endpoints.lookupChannel('chat_b', 'b1', 10)).toEqual([
          { endpoint: 'ep-1', bridge: 1 },
          { endpoint: 'ep-2', bridge: 0 },
        ]);
        expect(await store.snapshot.importRows([row('ep-3', { chat_c: ['c0'] }), row('ep-1', { chat_b: ['other'] })])).toMatchObject({
          imported: 0,
          conflicts: ['ep-1'],
        });
        expect(await store.endpoints.lookupChannel('chat_c', 'c0', 10)).toEqual([]);
        expect(await store.endpoints.lookupChannel('chat_b', 'other', 10)).toEqual([]);
      });

      it('when a removal drops deliveries to webhooks, then only the pending entries to those webhooks go, in the same write', async () => {
        const hook = (n: number) => `https://hooks.example.com/${n}`;
        await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
        const state = pendingState(1, 1000);
        await store.endpoints.update('ep-1', (cur) => ({
          write: {
            record: cur!.record,
            state,
            deliveries: [
              { platform: 'chat_a', url: hook(1), payload: '{}', expiresAt: 10_000 },
              { platform: 'chat_b', url: hook(2), payload: '{}', expiresAt: 10_000 },
            ],
          },
          result: undefined,
        }));
        await store.endpoints.update('ep-1', (cur) => ({
          write: {
            record: withChannels({ chat_c: ['c0'] }, cur!.record),
            state,
            dropDeliveriesTo: [
              { platform: 'chat_b', url: hook(2) },
              { platform: 'chat_a', url: hook(2) },
            ],
          },
          result: undefined,
        }));
        const claimed = await store.deliveries.claim(0, 1000, 10);
        expect(claimed.map((d) => [d.platform, d.url])).toEqual([['chat_a', hook(1)]]);
        expect(await store.endpoints.lookupChannel('chat_c', 'c0', 10)).toEqual([{ endpoint: 'ep-1', bridge: 0 }]);
      });

      it('when many endpoints change their channels at once, then the index ends equal to a scan of the records', async () => {
        const ids = Array.from({ length: 20 }, (_, i) => `ep-${String(i).padStart(2, '0')}`);
        for (const id of ids) await store.endpoints.create(id, hashToken('t'), initialRecord());
        await Promise.all(
          ids.flatMap((id, i) => [
            setChannels(id, { chat_a: [`c${i % 3}`] }),
            setChannels(id, { chat_a: [`c${i % 3}`, `c${(i + 1) % 3}`] }),
          ]),
        );
        for (const channel of ['c0', 'c1', 'c2']) {
          const scanned: { endpoint: string; bridge: number }[] = [];
          for (const id of ids) {
            const bridge = (await store.endpoints.get(id))!.record.config.channels.chat_a.indexOf(channel);
            if (bridge >= 0) scanned.push({ endpoint: id, bridge });
          }
          expect(await store.endpoints.lookupChannel('chat_a', channel, 100)).toEqual(scanned);
        }
      });
    });

    it('answers ping while open', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });
  });
}

import { describe, expect, it } from 'vitest';
import { BOT_KEYS_MAX_AGE_MS, BotKeyCache } from '../../src/bots/keyCache.ts';
import type { StoredBot } from '../../src/store/port.ts';
import { hashToken } from '../../src/tokens.ts';

/** A bots table that another instance changes, and a clock the test moves. */
function setup() {
  const table: StoredBot[] = [{ id: 'bot-b', platform: 'chat_b', keyHash: hashToken('old') }];
  let reads = 0;
  let now = 1_000_000;
  const cache = new BotKeyCache({ list: async () => (reads++, table.map((b) => ({ ...b }))) }, { clock: () => now });
  return { table, cache, reads: () => reads, advance: (ms: number) => (now += ms) };
}

describe('BotKeyCache', () => {
  it('when keys are checked within the maximum age, then the table is read once', async () => {
    const { cache, reads, advance } = setup();
    await cache.fresh();
    for (let i = 0; i < 10; i++) {
      advance(BOT_KEYS_MAX_AGE_MS / 20);
      expect(cache.fresh()).toBeUndefined();
      expect(cache.find(hashToken('old'))?.id).toBe('bot-b');
    }
    expect(reads()).toBe(1);
  });

  it('when another instance rotates a key, then the old key stops working once the copy reaches the maximum age', async () => {
    const { table, cache, advance } = setup();
    await cache.fresh();
    table[0]!.keyHash = hashToken('new');
    advance(BOT_KEYS_MAX_AGE_MS - 1);
    expect(cache.fresh()).toBeUndefined();
    expect(cache.find(hashToken('old'))).toBeDefined(); // within the documented bound
    advance(1);
    await cache.fresh();
    expect(cache.find(hashToken('old'))).toBeUndefined();
    expect(cache.find(hashToken('new'))?.platform).toBe('chat_b');
  });

  it('when this instance changes a bot, then the next check reads the table again at once', async () => {
    const { table, cache } = setup();
    await cache.fresh();
    table.pop();
    cache.invalidate();
    await cache.fresh();
    expect(cache.find(hashToken('old'))).toBeUndefined();
  });

  it('when a read finds a key rotated or a bot deleted elsewhere, then onRevoked names each such bot once, and an unchanged or new one never', async () => {
    const table: StoredBot[] = [
      { id: 'rotated', platform: 'chat_b', keyHash: hashToken('r1') },
      { id: 'deleted', platform: 'chat_c', keyHash: hashToken('d1') },
      { id: 'kept', platform: 'chat_a', keyHash: hashToken('k1') },
    ];
    let now = 0;
    const revoked: string[] = [];
    const cache = new BotKeyCache(
      { list: async () => table.map((b) => ({ ...b })) },
      { clock: () => now, onRevoked: (bot) => revoked.push(bot) },
    );
    await cache.fresh();
    table[0]!.keyHash = hashToken('r2');
    table.splice(1, 1);
    table.push({ id: 'added', platform: 'chat_d', keyHash: hashToken('a1') });
    now += BOT_KEYS_MAX_AGE_MS;
    await cache.fresh();
    expect(revoked.sort()).toEqual(['deleted', 'rotated']);
    now += BOT_KEYS_MAX_AGE_MS;
    await cache.fresh();
    expect(revoked).toHaveLength(2);
  });
});

import { describe, expect, it } from 'vitest';
import { MAX_BOTS, createBot } from '../../src/admin/bots.ts';
import type { EndpointStore, StoredBot } from '../../src/store/port.ts';
import { hashToken } from '../../src/tokens.ts';

/** Just the bots of a store, in memory. */
function botsOnly(count: number) {
  const bots: StoredBot[] = Array.from({ length: count }, (_, i) => ({ id: `bot-${i}`, platform: 'chat_b', keyHash: hashToken(`k${i}`) }));
  const store = {
    bots: {
      list: async () => bots,
      create: async (bot: StoredBot) => (bots.some((b) => b.id === bot.id) ? false : (bots.push(bot), true)),
    },
  } as unknown as EndpointStore;
  return { store, bots };
}

describe('createBot', () => {
  it('when the service has its maximum of bots, then another is refused and nothing is stored', async () => {
    const { store, bots } = botsOnly(MAX_BOTS);
    expect(await createBot(store, 'one-more', 'chat_c')).toEqual({ kind: 'full' });
    expect(bots).toHaveLength(MAX_BOTS);
  });

  it('when there is room, then the key is issued and only its digest is stored', async () => {
    const { store, bots } = botsOnly(MAX_BOTS - 1);
    const outcome = await createBot(store, 'last-one', 'chat_c');
    expect(outcome.kind).toBe('created');
    const { key } = (outcome as { issued: { key: string } }).issued;
    expect(bots.at(-1)).toEqual({ id: 'last-one', platform: 'chat_c', keyHash: hashToken(key) });
  });
});

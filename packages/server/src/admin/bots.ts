// Bot provisioning, shared by the admin API and the CLI: keys are issued here and only their digests
// reach the store.
import type { Platform } from '../domain/record.ts';
import type { EndpointStore } from '../store/port.ts';
import { hashToken, issueBotKey } from '../tokens.ts';

/**
 * At most this many bots: every instance holds all their key digests in memory (bots/keyCache.ts)
 * and reads them all again every few seconds while bots are active. A bot host needs one per
 * platform it serves; the bound leaves room for many hosts. Checked before each creation, so two
 * creations racing on separate instances may pass it by one each.
 */
export const MAX_BOTS = 1000;

export const BOT_ID = /^[A-Za-z0-9_-]{1,64}$/;

export interface IssuedBotKey {
  id: string;
  platform: Platform;
  key: string;
}

export type CreateBotOutcome = { kind: 'created'; issued: IssuedBotKey } | { kind: 'taken' } | { kind: 'full' };

export async function createBot(store: EndpointStore, id: string, platform: Platform): Promise<CreateBotOutcome> {
  if ((await store.bots.list()).length >= MAX_BOTS) return { kind: 'full' };
  const key = issueBotKey();
  return (await store.bots.create({ id, platform, keyHash: hashToken(key) }))
    ? { kind: 'created', issued: { id, platform, key } }
    : { kind: 'taken' };
}

/** undefined when there is no such bot. The old key stops working with this call (see bots/keyCache.ts for other instances). */
export async function rotateBotKey(store: EndpointStore, id: string): Promise<IssuedBotKey | undefined> {
  const bot = (await store.bots.list()).find((b) => b.id === id);
  if (!bot) return undefined;
  const key = issueBotKey();
  return (await store.bots.setKeyHash(id, hashToken(key))) ? { id, platform: bot.platform, key } : undefined;
}

export async function listBots(store: EndpointStore): Promise<{ bots: { id: string; platform: Platform }[] }> {
  return { bots: (await store.bots.list()).map(({ id, platform }) => ({ id, platform })) };
}

// authenticate(): one constant-time digest comparison on every path, the unknown ones included.
import type { Request } from 'express';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { BotKeyCache } from '../../src/bots/keyCache.ts';
import { authenticate, authenticateBot } from '../../src/http/authenticate.ts';
import * as tokens from '../../src/tokens.ts';

vi.mock('../../src/tokens.ts', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/tokens.ts')>();
  return { ...actual, digestsMatch: vi.fn(actual.digestsMatch) };
});

const RECORD_OPERATION = { schema: { operationId: 'getEndpoint', security: [{ endpointToken: [] }, { botKey: [] }] } };
const request = (headers: Record<string, string>, query: Record<string, string> = {}) =>
  ({ headers, query, openapi: RECORD_OPERATION }) as unknown as Request;

const KEY = 'cbk_known-key';
const TOKEN = 'cbt_endpoint-token';

async function botsWithOneKey() {
  const bots = new BotKeyCache({ listBots: async () => [{ id: 'bot-b', platform: 'chat_b', keyHash: tokens.hashToken(KEY) }] });
  await bots.fresh();
  return bots;
}

describe('authenticate', () => {
  const compare = vi.mocked(tokens.digestsMatch);
  beforeEach(() => compare.mockClear());

  it('when an unknown bot key is presented, then a digest comparison is made all the same, and nobody acts', async () => {
    const bots = await botsWithOneKey();
    const found = { tokenHash: tokens.hashToken(TOKEN) };
    expect(authenticate(request({ authorization: 'Bearer cbk_unknown' }), found, bots)).toBeUndefined();
    expect(authenticate(request({ authorization: 'Bearer cbk_unknown' }), undefined, bots)).toBeUndefined();
    expect(compare).toHaveBeenCalledTimes(2);
    expect(compare.mock.calls.every(([stored, presented]) => stored === undefined && presented !== undefined)).toBe(true);
  });

  it('when a known bot key is presented for a missing endpoint, then the key is compared and nobody acts', async () => {
    const bots = await botsWithOneKey();
    expect(authenticate(request({ authorization: `Bearer ${KEY}` }), undefined, bots)).toBeUndefined();
    expect(compare).toHaveBeenCalledTimes(1);
  });

  it('when a known bot key is presented for an endpoint, then its bot acts, as its platform', async () => {
    const bots = await botsWithOneKey();
    expect(authenticate(request({ authorization: `bearer ${KEY}` }), { tokenHash: tokens.hashToken(TOKEN) }, bots)).toEqual({
      kind: 'bot',
      bot: 'bot-b',
      platform: 'chat_b',
    });
  });

  it('when the endpoint token is presented, then the token holder acts; a missing endpoint is compared against a fixed digest', async () => {
    const bots = await botsWithOneKey();
    expect(authenticate(request({}, { token: TOKEN }), { tokenHash: tokens.hashToken(TOKEN) }, bots)).toEqual({ kind: 'token' });
    expect(authenticate(request({}, { token: TOKEN }), undefined, bots)).toBeUndefined();
    expect(compare).toHaveBeenCalledTimes(2);
  });

  it('when an operation addresses no endpoint, then a known key names its bot and an unknown one is compared all the same', async () => {
    const bots = await botsWithOneKey();
    expect(authenticateBot(request({ authorization: `Bearer ${KEY}` }), bots)).toEqual({ kind: 'bot', bot: 'bot-b', platform: 'chat_b' });
    expect(authenticateBot(request({ authorization: 'Bearer cbk_unknown' }), bots)).toBeUndefined();
    expect(compare).toHaveBeenCalledTimes(2);
  });

  it('when the bot key is presented as the token, then it opens nothing', async () => {
    const bots = await botsWithOneKey();
    expect(authenticate(request({}, { token: KEY }), { tokenHash: tokens.hashToken(TOKEN) }, bots)).toBeUndefined();
  });
});

// authenticate(): the same constant-time digest comparisons on every path, the unknown ones included
// (a bearer credential is compared against the bot keys and the admin token alike).
import type { Request } from 'express';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { BotKeyCache } from '../../src/bots/keyCache.ts';
import { authenticate, authenticateBot } from '../../src/http/auth/authenticate.ts';
import { initialRecord } from '../../src/domain/record.ts';
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

const ADMIN = 'admin-token-of-the-operator';

async function botsWithOneKey() {
  const bots = new BotKeyCache({ list: async () => [{ id: 'bot-b', platform: 'chat_b', keyHash: tokens.hashToken(KEY) }] });
  await bots.fresh();
  return { bots, adminTokenHash: tokens.hashToken(ADMIN) };
}

/** An endpoint where chat_b takes part (or not). */
const endpoint = (chatB = true) => {
  const record = initialRecord();
  if (chatB) record.config.channels.chat_b.push('22222');
  return { tokenHash: tokens.hashToken(TOKEN), record };
};

describe('authenticate', () => {
  const compare = vi.mocked(tokens.digestsMatch);
  beforeEach(() => compare.mockClear());

  it('when an unknown bot key is presented, then a digest comparison is made all the same, and nobody acts', async () => {
    const bots = await botsWithOneKey();
    const found = endpoint();
    expect(authenticate(request({ authorization: 'Bearer cbk_unknown' }), found, bots)).toBeUndefined();
    expect(authenticate(request({ authorization: 'Bearer cbk_unknown' }), undefined, bots)).toBeUndefined();
    // Per request: the bot keys (no such digest: a fixed one) and the admin token.
    expect(compare).toHaveBeenCalledTimes(4);
    expect(compare.mock.calls.filter(([stored]) => stored === undefined)).toHaveLength(2);
  });

  it('when a known bot key is presented for a missing endpoint, then the key is compared and nobody acts', async () => {
    const bots = await botsWithOneKey();
    expect(authenticate(request({ authorization: `Bearer ${KEY}` }), undefined, bots)).toBeUndefined();
    expect(compare).toHaveBeenCalledTimes(2);
  });

  it('when a known bot key is presented for an endpoint, then its bot acts, as its platform', async () => {
    const bots = await botsWithOneKey();
    expect(authenticate(request({ authorization: `bearer ${KEY}` }), endpoint(), bots)).toEqual({
      kind: 'bot',
      bot: 'bot-b',
      platform: 'chat_b',
    });
  });

  it('when a known bot key is presented for an endpoint where its platform has no channel, then nobody acts (as for a wrong token)', async () => {
    const bots = await botsWithOneKey();
    expect(authenticate(request({ authorization: `Bearer ${KEY}` }), endpoint(false), bots)).toBeUndefined();
  });

  it('when the admin token is presented as a bearer for an endpoint, then the operator acts, whoever takes part', async () => {
    const bots = await botsWithOneKey();
    expect(authenticate(request({ authorization: `Bearer ${ADMIN}` }), endpoint(false), bots)).toEqual({ kind: 'admin' });
    expect(authenticate(request({ authorization: `Bearer ${ADMIN}` }), undefined, bots)).toBeUndefined();
  });

  it('when the endpoint token is presented, then the token holder acts; a missing endpoint is compared against a fixed digest', async () => {
    const bots = await botsWithOneKey();
    expect(authenticate(request({}, { token: TOKEN }), endpoint(false), bots)).toEqual({ kind: 'token' });
    expect(authenticate(request({}, { token: TOKEN }), undefined, bots)).toBeUndefined();
    expect(compare).toHaveBeenCalledTimes(2);
  });

  it('when an operation addresses no endpoint, then a known key names its bot and an unknown one is compared all the same', async () => {
    const bots = await botsWithOneKey();
    const { bots: keys } = bots;
    expect(authenticateBot(request({ authorization: `Bearer ${KEY}` }), keys)).toEqual({ kind: 'bot', bot: 'bot-b', platform: 'chat_b' });
    expect(authenticateBot(request({ authorization: 'Bearer cbk_unknown' }), keys)).toBeUndefined();
    expect(compare).toHaveBeenCalledTimes(2);
  });

  it('when the bot key is presented as the token, then it opens nothing', async () => {
    const bots = await botsWithOneKey();
    expect(authenticate(request({}, { token: KEY }), endpoint(), bots)).toBeUndefined();
  });
});

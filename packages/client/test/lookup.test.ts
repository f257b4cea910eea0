import { describe, expect, expectTypeOf, test } from 'vitest';
import { ChatbridgeError, ChatbridgeUsageError, type LookupResult } from '../src/index.ts';
import { ADMIN_TOKEN, BASE_URL, ENDPOINT, PROBLEMS, problemResponse, setup } from './helpers.ts';

const FOUND: LookupResult = { matches: [{ endpoint: ENDPOINT, bridge: 0 }], truncated: false };

describe('lookup', () => {
  test('sends GET /lookup?platform=&channel= with the admin bearer token and resolves the matches', async () => {
    const { client, only } = setup(() => Response.json(FOUND));

    const found = await client.lookup('chat_b', 'channel b/1 & more');

    const request = only();
    expect(request.method).toBe('GET');
    expect(request.url).toBe(`${BASE_URL}/lookup?platform=chat_b&channel=channel%20b%2F1%20%26%20more`);
    expect(request.headers.get('authorization')).toBe(`Bearer ${ADMIN_TOKEN}`);
    expect(request.body).toBeNull();
    expect(found).toEqual(FOUND);
    expectTypeOf(found).toEqualTypeOf<LookupResult>();
  });

  test('without an admin token, refuses before sending anything', async () => {
    const { client, requests } = setup(() => Response.json(FOUND), { adminToken: undefined });
    await expect(client.lookup('chat_a', '912345678901234500')).rejects.toBeInstanceOf(ChatbridgeUsageError);
    expect(requests).toEqual([]);
  });

  test('rejects with the problem on 401', async () => {
    const { client } = setup(() => problemResponse(PROBLEMS.unauthorized));
    const error = await client.lookup('chat_a', '912345678901234500').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChatbridgeError);
    expect((error as ChatbridgeError).operationId).toBe('lookupEndpoints');
    expect((error as ChatbridgeError).status).toBe(401);
  });

  test('types: platform must be a platform key, channel a string', () => {
    const { client } = setup(() => Response.json(FOUND));
    // @ts-expect-error -- 'chat_z' is not a Platform
    void client.lookup('chat_z', 'channel-b-1').catch(() => undefined);
    // @ts-expect-error -- the channel is a string
    void client.lookup('chat_b', 12345).catch(() => undefined);
  });
});

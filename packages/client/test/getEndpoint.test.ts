import { describe, expect, expectTypeOf, test } from 'vitest';
import { ChatbridgeUsageError, type EndpointRecord } from '../src/index.ts';
import { BASE_URL, ENDPOINT, RECORD, TOKEN, setup } from './helpers.ts';

describe('getEndpoint', () => {
  test('sends GET /{endpoint}?token= with no body and no Authorization, and resolves the record', async () => {
    const { client, only } = setup(() => Response.json(RECORD));

    const record = await client.getEndpoint(ENDPOINT, TOKEN);

    const request = only();
    expect(request.method).toBe('GET');
    expect(request.url).toBe(`${BASE_URL}/${ENDPOINT}?token=${TOKEN}`);
    // The endpoint token travels in the query only; the admin token is never sent here.
    expect(request.headers.get('authorization')).toBeNull();
    expect(request.headers.get('content-type')).toBeNull();
    expect(request.body).toBeNull();
    expect(record).toEqual(RECORD);
    expectTypeOf(record).toEqualTypeOf<EndpointRecord>();
  });

  test('keeps a path prefix of baseUrl and ignores its trailing slash', async () => {
    const { client, only } = setup(() => Response.json(RECORD), { baseUrl: 'http://127.0.0.1:4010/bridge/' });

    await client.getEndpoint(ENDPOINT, TOKEN);

    expect(only().url).toBe(`http://127.0.0.1:4010/bridge/${ENDPOINT}?token=${TOKEN}`);
  });

  test('percent-encodes the endpoint ID so it stays one path segment', async () => {
    const { client, only } = setup(() => Response.json(RECORD));

    await client.getEndpoint('a/b?c#d', TOKEN);

    expect(new URL(only().url).pathname).toBe('/a%2Fb%3Fc%23d');
  });

  test.each(['', '.', '..'])('refuses endpoint ID %j, which the URL parser would rewrite, before sending', async (id) => {
    const { client, requests } = setup(() => Response.json(RECORD));

    await expect(client.getEndpoint(id, TOKEN)).rejects.toThrow(ChatbridgeUsageError);
    expect(requests).toHaveLength(0);
  });

  test('sends headers given at creation with every request', async () => {
    const { client, only } = setup(() => Response.json(RECORD), { headers: { 'user-agent': 'relay-bot/2.0' } });

    await client.getEndpoint(ENDPOINT, TOKEN);

    expect(only().headers.get('user-agent')).toBe('relay-bot/2.0');
  });

  test('passes the abort signal on to fetch', async () => {
    const controller = new AbortController();
    const { client, only } = setup(() => Response.json(RECORD));

    controller.abort();
    await client.getEndpoint(ENDPOINT, TOKEN, { signal: controller.signal });

    expect(only().signal.aborted).toBe(true);
  });

  test('wrong calls do not compile', async () => {
    const { client, requests } = setup(() => Response.json(RECORD));

    // @ts-expect-error the token is required
    await client.getEndpoint(ENDPOINT);
    // @ts-expect-error the endpoint ID is a string
    // biome-ignore lint/correctness/noPrecisionLoss: a chat_a server ID as a number loses digits, which is why the ID is a string
    await client.getEndpoint(912345678901234567, TOKEN);

    // At run time the client invents nothing: no token parameter at all (the server answers 401), and the
    // number as JavaScript holds it, already rounded, which is why endpoint IDs are typed as strings.
    expect(requests.map((r) => r.url)).toEqual([`${BASE_URL}/${ENDPOINT}`, `${BASE_URL}/912345678901234600?token=${TOKEN}`]);
  });
});

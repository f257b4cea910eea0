import { describe, expect, test } from 'vitest';
import { ChatbridgeError, createChatbridgeClient, type FetchLike, isRedactedWebhook, REDACTED_WEBHOOK } from '../src/index.ts';
import { ADMIN_TOKEN, BASE_URL, ENDPOINT, RECORD, TOKEN, fakeFetch, problemResponse } from './helpers.ts';

const KEY = `cbk_${'K3y_-'.repeat(14)}xx`;

/** A bot client wired to a fake fetch; `requests` lists what it sent. */
function botSetup(respond: (request: Request) => Response | Promise<Response>) {
  const { fetch, requests } = fakeFetch(respond);
  const client = createChatbridgeClient({ baseUrl: BASE_URL, fetch: fetch as FetchLike, botKey: KEY, adminToken: ADMIN_TOKEN });
  return { client, requests };
}

describe('a client with a bot key', () => {
  test('when it reads, updates and marks read, then each request carries the key as a bearer header and no token', async () => {
    const { client, requests } = botSetup(() => Response.json(RECORD));

    await client.getEndpoint(ENDPOINT);
    await client.updateEndpoint(ENDPOINT, { sender: 'chat_b', message_content: 'hi' });
    await client.markRead(ENDPOINT);
    await client.markRead(ENDPOINT, { platform: 'chat_b', messageNumber: 3 });

    expect(requests.map((r) => r.headers.get('authorization'))).toEqual(Array(4).fill(`Bearer ${KEY}`));
    expect(requests.map((r) => r.url)).toEqual([
      `${BASE_URL}/${ENDPOINT}`,
      `${BASE_URL}/update/${ENDPOINT}?sender=chat_b&message_content=hi`,
      `${BASE_URL}/read/${ENDPOINT}`,
      `${BASE_URL}/read/${ENDPOINT}?platform=chat_b&message_number=3`,
    ]);
  });

  test('when an untyped caller slips a token into the parameters, then it is not sent beside the key', async () => {
    const { client, requests } = botSetup(() => Response.json(RECORD));
    await client.updateEndpoint(ENDPOINT, { blacklist: 'w', token: TOKEN } as never);
    expect(new URL(requests[0]!.url).searchParams.has('token')).toBe(false);
  });

  test('when it streams events, then the stream request carries the key and no token', async () => {
    const { client, requests } = botSetup(() => new Response('retry: 1000\n\n', { headers: { 'content-type': 'text/event-stream' } }));
    for await (const event of client.streamEndpointEvents(ENDPOINT, { reconnect: false })) void event;
    expect(requests[0]!.headers.get('authorization')).toBe(`Bearer ${KEY}`);
    expect(requests[0]!.url).toBe(`${BASE_URL}/events/${ENDPOINT}`);
  });

  test('when it calls an admin operation, then the admin token is sent, not the key', async () => {
    const { client, requests } = botSetup(() => Response.json({ bots: [] }));
    await client.listBots();
    expect(requests[0]!.headers.get('authorization')).toBe(`Bearer ${ADMIN_TOKEN}`);
  });

  test('types: the record methods of a bot client take no token, and a token client still needs one', async () => {
    const { client } = botSetup(() => Response.json(RECORD));
    // @ts-expect-error -- a bot client takes no token: the second argument is the parameters
    await client.updateEndpoint(ENDPOINT, TOKEN, { beta: true }).catch(() => undefined);
    // @ts-expect-error -- markRead's platform is an option, not an argument
    await client.markRead(ENDPOINT, 'chat_b').catch(() => undefined);
    // @ts-expect-error -- 'chat_z' is not a Platform
    await client.markRead(ENDPOINT, { platform: 'chat_z' }).catch(() => undefined);
    const tokenClient = createChatbridgeClient({ baseUrl: BASE_URL, fetch: fakeFetch(() => Response.json(RECORD)).fetch });
    // @ts-expect-error -- without a bot key the token is required
    await tokenClient.getEndpoint(ENDPOINT).catch(() => undefined);
  });
});

describe('what a bot key is shown', () => {
  test("when a record read with a bot key holds another platform's hidden webhook, then isRedactedWebhook tells it from a real URL", () => {
    expect(isRedactedWebhook(REDACTED_WEBHOOK)).toBe(true);
    expect(isRedactedWebhook('https://chat-b.example.com/api/webhooks/1/secret')).toBe(false);
  });

  test('when the server refuses a parameter the key may not send, then the error names it', async () => {
    const problem = {
      type: 'https://chatbridge.dev/problems#forbidden',
      title: 'Forbidden',
      status: 403,
      detail: 'A chat_b bot key may not change blacklist here. Nothing was applied.',
      message: 'A chat_b bot key may not change blacklist here. Nothing was applied.',
      errors: [{ parameter: 'blacklist', in: 'query' as const, message: 'is a setting of the whole community' }],
    };
    const { client } = botSetup(() => problemResponse(problem));
    const error = await client.updateEndpoint(ENDPOINT, { blacklist: 'w' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChatbridgeError);
    expect((error as ChatbridgeError).status).toBe(403);
    expect((error as ChatbridgeError).problem?.errors?.map((e) => e.parameter)).toEqual(['blacklist']);
  });
});

import { describe, expect, expectTypeOf, test } from 'vitest';
import { ChatbridgeError, createChatbridgeClient, type MessagePage } from '../src/index.ts';
import { BASE_URL, ENDPOINT, fakeFetch, PROBLEMS, problemResponse, setup, TOKEN } from './helpers.ts';

const PAGE: MessagePage = {
  messages: [
    {
      number: 7,
      sender: 'chat_c',
      sender_channel: 'channel-c-1234',
      message: {
        attachments: [],
        author: { avatar: null, id: null, name: 'Ada' },
        content: 'Hello',
        embed: { description: 'None', fields: [], footer: 'None', image: 'None', thumbnail: 'None', title: 'None' },
        isReply: false,
        reply: { author: null, message: null },
      },
      read: { chat_a: true, chat_b: true, chat_c: true, chat_d: false },
      state: 'pending',
      created_at: '2026-11-28T20:00:00.000Z',
      ids: { chat_c: 'c-7' },
      edits: 0,
      edited_at: null,
      deleted: false,
    },
  ],
  more: false,
  newest: 7,
};

describe('listMessages', () => {
  test('sends GET /messages/{endpoint} with the token, after, limit and platform, and resolves the page', async () => {
    const { client, only } = setup(() => Response.json(PAGE));
    const page = await client.listMessages(ENDPOINT, TOKEN, { after: 6, limit: 50, platform: 'chat_d' });
    const request = only();
    expect(request.method).toBe('GET');
    expect(request.url).toBe(`${BASE_URL}/messages/${ENDPOINT}?token=${TOKEN}&after=6&limit=50&platform=chat_d`);
    expect(page).toEqual(PAGE);
    expectTypeOf(page).toEqualTypeOf<MessagePage>();
  });

  test('with a bot key, sends the key as a bearer header and no token', async () => {
    const { fetch, requests } = fakeFetch(() => Response.json(PAGE));
    const bot = createChatbridgeClient({ baseUrl: BASE_URL, fetch, botKey: 'cbk_key' });
    await bot.listMessages(ENDPOINT);
    expect(requests[0]!.url).toBe(`${BASE_URL}/messages/${ENDPOINT}`);
    expect(requests[0]!.headers.get('authorization')).toBe('Bearer cbk_key');
  });

  test('getEndpoint with platform asks for that platform’s view', async () => {
    const { client, only } = setup(() => Response.json({}));
    await client.getEndpoint(ENDPOINT, TOKEN, { platform: 'chat_c' }).catch(() => undefined);
    expect(only().url).toBe(`${BASE_URL}/${ENDPOINT}?token=${TOKEN}&platform=chat_c`);
  });

  test('rejects with the problem on 401', async () => {
    const { client } = setup(() => problemResponse(PROBLEMS.unauthorized));
    const error = await client.listMessages(ENDPOINT, TOKEN).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChatbridgeError);
    expect((error as ChatbridgeError).operationId).toBe('listMessages');
  });

  test('types: platform must be a platform key', () => {
    const { client } = setup(() => Response.json(PAGE));
    // @ts-expect-error -- 'chat_z' is not a Platform
    void client.listMessages(ENDPOINT, TOKEN, { platform: 'chat_z' }).catch(() => undefined);
  });
});

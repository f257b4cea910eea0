import { describe, expect, expectTypeOf, test } from 'vitest';
import { ChatbridgeError, createChatbridgeClient, type LoggedMessage, type Problem } from '../src/index.ts';
import { BASE_URL, ENDPOINT, fakeFetch, problemResponse, RECORD, rawQuery, setup, TOKEN } from './helpers.ts';

/** The spec's `found` example of getMessage: a chat_c message with its ID on three platforms. */
const FOUND: LoggedMessage = {
  number: 7,
  sender: 'chat_c',
  sender_channel: 'channel-c-1234',
  message: {
    attachments: [],
    author: { avatar: null, id: 'user-123456', name: 'Ada' },
    content: 'Hello from chat_c',
    embed: { description: 'None', fields: [], footer: 'None', image: 'None', thumbnail: 'None', title: 'None' },
    isReply: false,
    reply: { author: null, message: null },
  },
  read: { chat_a: true, chat_b: true, chat_c: true, chat_d: true },
  state: 'read',
  created_at: '2026-11-28T20:00:00.000Z',
  ids: { chat_a: 'a-1', chat_c: 'c-1', chat_d: 'd-1' },
  edits: 0,
  edited_at: null,
  deleted: false,
};

const NO_SUCH_MESSAGE: Problem = {
  type: 'https://chatbridge.dev/problems#no-such-message',
  title: 'No such message',
  status: 404,
  detail: 'The log keeps no message with ID c-1 on chat_c.',
  message: 'The log keeps no message with ID c-1 on chat_c.',
};

describe('getMessage', () => {
  test('by platform and ID: sends GET /messages/{endpoint}/find with platform, message_id and the token, and resolves the message', async () => {
    const { client, only } = setup(() => Response.json(FOUND));

    const message = await client.getMessage(ENDPOINT, TOKEN, { platform: 'chat_a', messageId: 'a-1' });

    const request = only();
    expect(request.method).toBe('GET');
    expect(request.url).toBe(`${BASE_URL}/messages/${ENDPOINT}/find?platform=chat_a&message_id=a-1&token=${TOKEN}`);
    expect(message).toEqual(FOUND);
    expectTypeOf(message).toEqualTypeOf<LoggedMessage>();
  });

  test('by number: sends number alone', async () => {
    const { client, only } = setup(() => Response.json(FOUND));
    await client.getMessage(ENDPOINT, TOKEN, { number: 7 });
    expect(rawQuery(only())).toBe(`number=7&token=${TOKEN}`);
  });

  test('an ID with characters a query must encode is sent percent-encoded and arrives as given', async () => {
    const { client, only } = setup(() => Response.json(FOUND));
    await client.getMessage(ENDPOINT, TOKEN, { platform: 'chat_c', messageId: 'a&b=c#d%e+f' });
    expect(new URL(only().url).searchParams.get('message_id')).toBe('a&b=c#d%e+f');
  });

  test('with a bot key: the key as a bearer header, no token', async () => {
    const { fetch, requests } = fakeFetch(() => Response.json(FOUND));
    const bot = createChatbridgeClient({ baseUrl: BASE_URL, fetch, botKey: 'cbk_key' });
    await bot.getMessage(ENDPOINT, { number: 7 });
    expect(requests[0]!.url).toBe(`${BASE_URL}/messages/${ENDPOINT}/find?number=7`);
    expect(requests[0]!.headers.get('authorization')).toBe('Bearer cbk_key');
  });

  test('a message the log does not keep rejects with the 404 problem', async () => {
    const { client } = setup(() => problemResponse(NO_SUCH_MESSAGE));
    const error = await client.getMessage(ENDPOINT, TOKEN, { platform: 'chat_c', messageId: 'c-1' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChatbridgeError);
    expect((error as ChatbridgeError).operationId).toBe('getMessage');
    expect((error as ChatbridgeError).status).toBe(404);
    expect((error as ChatbridgeError).problem.type).toBe('https://chatbridge.dev/problems#no-such-message');
  });

  test('an untyped caller mixing both ways gets them all sent, for the server to refuse', async () => {
    const { client, only } = setup(() => Response.json(FOUND));
    const mixed = { number: 7, platform: 'chat_c', messageId: 'c-1' } as unknown as { number: number };
    await client.getMessage(ENDPOINT, TOKEN, mixed);
    expect(rawQuery(only())).toBe(`number=7&platform=chat_c&message_id=c-1&token=${TOKEN}`);
  });

  test('types: a message is named one way, never both or half', () => {
    const { client } = setup(() => Response.json(FOUND));
    // @ts-expect-error -- number and platform/messageId together
    void client.getMessage(ENDPOINT, TOKEN, { number: 7, platform: 'chat_c', messageId: 'c-1' }).catch(() => undefined);
    // @ts-expect-error -- platform without messageId
    void client.getMessage(ENDPOINT, TOKEN, { platform: 'chat_c' }).catch(() => undefined);
    // @ts-expect-error -- messageId without platform
    void client.getMessage(ENDPOINT, TOKEN, { messageId: 'c-1' }).catch(() => undefined);
    // @ts-expect-error -- 'chat_z' is not a Platform
    void client.getMessage(ENDPOINT, TOKEN, { platform: 'chat_z', messageId: 'c-1' }).catch(() => undefined);
  });

  test('an endpoint ID that would change the path is refused before sending', async () => {
    const { client, requests } = setup(() => Response.json(FOUND));
    await expect(client.getMessage('..', TOKEN, { number: 1 })).rejects.toThrow(/not an endpoint ID/);
    expect(requests).toEqual([]);
  });
});

describe('editMessage', () => {
  const EDITED: LoggedMessage = {
    ...FOUND,
    message: { ...FOUND.message, content: 'Hello from chat_c (edited)' },
    edits: 1,
    edited_at: '2026-11-28T20:01:00.000Z',
  };

  test('sends POST /messages/{endpoint}/edit with the message named and the new content, no body, and resolves the edited message', async () => {
    const { client, only } = setup(() => Response.json(EDITED));

    const edited = await client.editMessage(
      ENDPOINT,
      TOKEN,
      { platform: 'chat_c', messageId: 'c-1' },
      { message_content: 'Hello from chat_c (edited)' },
    );

    const request = only();
    expect(request.method).toBe('POST');
    expect(request.body).toBeNull();
    expect(request.url).toBe(
      `${BASE_URL}/messages/${ENDPOINT}/edit?platform=chat_c&message_id=c-1&message_content=Hello%20from%20chat_c%20(edited)&token=${TOKEN}`,
    );
    expect(edited).toEqual(EDITED);
  });

  test('attachments and embed are sent when given, left out when undefined; an empty content is sent empty', async () => {
    const { client, only } = setup(() => Response.json(EDITED));
    await client.editMessage(
      ENDPOINT,
      TOKEN,
      { number: 7 },
      { message_content: '', message_attachments: 'https://cdn.chat-c.example.com/files/photo.png', message_embed: undefined },
    );
    const query = new URL(only().url).searchParams;
    expect([...query.keys()]).toEqual(['number', 'message_content', 'message_attachments', 'token']);
    expect(query.get('message_content')).toBe('');
  });

  test('a stray token among the params of an untyped caller never replaces the credential', async () => {
    const { client, only } = setup(() => Response.json(EDITED));
    const params = { message_content: 'x', token: 'stolen' } as unknown as { message_content: string };
    await client.editMessage(ENDPOINT, TOKEN, { number: 7 }, params);
    expect(new URL(only().url).searchParams.getAll('token')).toEqual([TOKEN]);
  });

  test("a bot key editing another platform's message rejects with the 403 problem naming the parameter", async () => {
    const forbidden: Problem = {
      type: 'https://chatbridge.dev/problems#forbidden',
      title: 'Forbidden',
      status: 403,
      detail: 'A chat_d bot key may edit only chat_d messages.',
      message: 'A chat_d bot key may edit only chat_d messages.',
      errors: [{ parameter: 'platform', in: 'query', message: 'message 7 was sent from chat_c' }],
    };
    const { fetch } = fakeFetch(() => problemResponse(forbidden));
    const bot = createChatbridgeClient({ baseUrl: BASE_URL, fetch, botKey: 'cbk_key' });
    const error = await bot
      .editMessage(ENDPOINT, { platform: 'chat_c', messageId: 'c-1' }, { message_content: 'mine now' })
      .catch((e: unknown) => e);
    expect((error as ChatbridgeError).status).toBe(403);
    expect((error as ChatbridgeError).problem.errors?.[0]?.parameter).toBe('platform');
  });

  test('a deleted message rejects with the 409 message-deleted problem', async () => {
    const deleted: Problem = {
      type: 'https://chatbridge.dev/problems#message-deleted',
      title: 'Message deleted',
      status: 409,
      detail: 'Message 7 was deleted.',
      message: 'Message 7 was deleted.',
    };
    const { client } = setup(() => problemResponse(deleted));
    const error = await client.editMessage(ENDPOINT, TOKEN, { number: 7 }, { message_content: 'x' }).catch((e: unknown) => e);
    expect((error as ChatbridgeError).operationId).toBe('editMessage');
    expect((error as ChatbridgeError).problem.type).toBe('https://chatbridge.dev/problems#message-deleted');
  });

  test('types: only the three message parameters are edited', () => {
    const { client } = setup(() => Response.json(EDITED));
    // @ts-expect-error -- the author is not edited
    void client.editMessage(ENDPOINT, TOKEN, { number: 7 }, { message_author_name: 'Eve' }).catch(() => undefined);
  });
});

describe('deleteMessage', () => {
  const DELETED: LoggedMessage = {
    ...FOUND,
    message: RECORD.meta.message,
    deleted: true,
  };

  test('sends POST /messages/{endpoint}/delete with the message named, and resolves the deleted message', async () => {
    const { client, only } = setup(() => Response.json(DELETED));

    const deleted = await client.deleteMessage(ENDPOINT, TOKEN, { platform: 'chat_d', messageId: 'd-1' });

    const request = only();
    expect(request.method).toBe('POST');
    expect(request.body).toBeNull();
    expect(request.url).toBe(`${BASE_URL}/messages/${ENDPOINT}/delete?platform=chat_d&message_id=d-1&token=${TOKEN}`);
    expect(deleted.deleted).toBe(true);
    expect(deleted.ids).toEqual(FOUND.ids);
  });

  test('with a bot key: the key as a bearer header, no token', async () => {
    const { fetch, requests } = fakeFetch(() => Response.json(DELETED));
    const bot = createChatbridgeClient({ baseUrl: BASE_URL, fetch, botKey: 'cbk_key' });
    await bot.deleteMessage(ENDPOINT, { number: 7 });
    expect(requests[0]!.url).toBe(`${BASE_URL}/messages/${ENDPOINT}/delete?number=7`);
    expect(requests[0]!.headers.get('authorization')).toBe('Bearer cbk_key');
  });
});

describe('message IDs on updateEndpoint and markRead', () => {
  test("updateEndpoint passes message_id and message_reply_to through as the sender's IDs", async () => {
    const { client, only } = setup(() => Response.json(RECORD));
    await client.updateEndpoint(ENDPOINT, TOKEN, {
      sender: 'chat_d',
      message_content: 'a reply',
      message_id: 'd-2',
      message_reply: true,
      message_reply_to: 'd-1',
      trigger: true,
    });
    const query = new URL(only().url).searchParams;
    expect(query.get('message_id')).toBe('d-2');
    expect(query.get('message_reply_to')).toBe('d-1');
  });

  test("markRead sends messageId as message_id beside message_number, the copy's ID", async () => {
    const { client, only } = setup(() => Response.json(RECORD));
    await client.markRead(ENDPOINT, TOKEN, 'chat_d', { messageNumber: 7, messageId: 'd-1' });
    expect(only().url).toBe(`${BASE_URL}/read/${ENDPOINT}?token=${TOKEN}&platform=chat_d&message_number=7&message_id=d-1`);
  });

  test("a bot's markRead sends messageId too, and no platform unless given", async () => {
    const { fetch, requests } = fakeFetch(() => Response.json(RECORD));
    const bot = createChatbridgeClient({ baseUrl: BASE_URL, fetch, botKey: 'cbk_key' });
    await bot.markRead(ENDPOINT, { messageNumber: 7, messageId: 'd-1' });
    expect(requests[0]!.url).toBe(`${BASE_URL}/read/${ENDPOINT}?message_number=7&message_id=d-1`);
  });

  test('a duplicate ID rejects with the 409 duplicate-message-id problem', async () => {
    const duplicate: Problem = {
      type: 'https://chatbridge.dev/problems#duplicate-message-id',
      title: 'Duplicate message ID',
      status: 409,
      detail: 'Message 6 already has ID d-1 on chat_d; nothing was marked.',
      message: 'Message 6 already has ID d-1 on chat_d; nothing was marked.',
    };
    const { client } = setup(() => problemResponse(duplicate));
    const error = await client.markRead(ENDPOINT, TOKEN, 'chat_d', { messageNumber: 7, messageId: 'd-1' }).catch((e: unknown) => e);
    expect((error as ChatbridgeError).status).toBe(409);
    expect((error as ChatbridgeError).problem.type).toBe('https://chatbridge.dev/problems#duplicate-message-id');
  });
});

import { describe, expect, expectTypeOf, test } from 'vitest';
import { ChatbridgeUsageError, type EndpointRecord, type UpdateEndpointParams } from '../src/index.ts';
import { BASE_URL, ENDPOINT, RECORD, TOKEN, rawQuery, setup } from './helpers.ts';

const TRICKY = `a&b?c#d%e+f "q" 'q' ü 🎉`;

describe('updateEndpoint', () => {
  test('when text holds half of an emoji (cut by slice), then ChatbridgeUsageError names the parameter and nothing is sent', async () => {
    const { client, requests } = setup(() => Response.json(RECORD));
    const cut = 'hello 😀'.slice(0, 7); // ends in a lone high surrogate

    await expect(client.updateEndpoint(ENDPOINT, TOKEN, { message_content: cut })).rejects.toThrow(ChatbridgeUsageError);
    await expect(client.updateEndpoint(ENDPOINT, TOKEN, { message_content: cut })).rejects.toThrow(
      /message_content holds half of a character/,
    );
    expect(requests).toHaveLength(0);
    // Whole emoji are fine.
    await client.updateEndpoint(ENDPOINT, TOKEN, { message_content: 'hello 😀' });
    expect(requests).toHaveLength(1);
  });

  test('sends POST /update/{endpoint} with every parameter in the query and no body', async () => {
    const { client, only } = setup(() => Response.json(RECORD));

    const record = await client.updateEndpoint(ENDPOINT, TOKEN, { blacklist: 'spam,scam', selfuse: true });

    const request = only();
    expect(request.method).toBe('POST');
    expect(`${new URL(request.url).origin}${new URL(request.url).pathname}`).toBe(`${BASE_URL}/update/${ENDPOINT}`);
    expect(rawQuery(request)).toBe(`blacklist=spam%2Cscam&selfuse=true&token=${TOKEN}`);
    expect(request.body).toBeNull();
    expect(request.headers.get('content-type')).toBeNull();
    expect(request.headers.get('authorization')).toBeNull();
    expect(record).toEqual(RECORD);
    expectTypeOf(record).toEqualTypeOf<EndpointRecord>();
  });

  test('sends only the token when no parameters are given', async () => {
    const { client, only } = setup(() => Response.json(RECORD));

    await client.updateEndpoint(ENDPOINT, TOKEN);

    expect(rawQuery(only())).toBe(`token=${TOKEN}`);
  });

  test('overwrites at an index: channel and webhook travel together with index', async () => {
    const { client, only } = setup(() => Response.json(RECORD));
    const webhook = 'https://chat-a.example.com/api/webhooks/123456789012345678/abcdefghijklmnopqrstuvwxyz';

    await client.updateEndpoint(ENDPOINT, TOKEN, { index: 0, channel_chat_a: '912345678901234500', webhook_chat_a: webhook });

    const query = new URL(only().url).searchParams;
    expect(query.get('index')).toBe('0');
    expect(query.get('channel_chat_a')).toBe('912345678901234500');
    expect(query.get('webhook_chat_a')).toBe(webhook);
    expect(rawQuery(only())).toContain(`webhook_chat_a=${encodeURIComponent(webhook)}`);
  });

  test('sends false flags (they are values, not absence) and omits undefined ones', async () => {
    const { client, only } = setup(() => Response.json(RECORD));

    await client.updateEndpoint(ENDPOINT, TOKEN, { trigger: false, only_check: false, beta: undefined });

    expect(rawQuery(only())).toBe(`trigger=false&only_check=false&token=${TOKEN}`);
  });

  test('percent-encodes a tricky value exactly, with + and space encoded rather than sent raw', async () => {
    const { client, only } = setup(() => Response.json(RECORD));

    await client.updateEndpoint(ENDPOINT, TOKEN, { message_content: TRICKY });

    const query = rawQuery(only());
    expect(query).toBe(`message_content=a%26b%3Fc%23d%25e%2Bf%20%22q%22%20%27q%27%20%C3%BC%20%F0%9F%8E%89&token=${TOKEN}`);
    // URLSearchParams decodes like the server does (a raw `+` would become a space): the value survives.
    expect(new URL(only().url).searchParams.get('message_content')).toBe(TRICKY);
  });

  const messageFields = [
    'message_content',
    'message_author_name',
    'message_reply_message',
    'message_embed',
    'blacklist',
    'sender_channel',
  ] as const satisfies readonly (keyof UpdateEndpointParams)[];

  test.each(messageFields)('round-trips the tricky value in %s', async (name) => {
    const { client, only } = setup(() => Response.json(RECORD));

    await client.updateEndpoint(ENDPOINT, TOKEN, { [name]: TRICKY });

    const query = new URL(only().url).searchParams;
    expect([...query.keys()]).toEqual([name, 'token']);
    expect(query.get(name)).toBe(TRICKY);
    expect(query.get('token')).toBe(TOKEN);
  });

  test('sends a full message: author, content, embed JSON, attachments, sender and trigger', async () => {
    const { client, only } = setup(() => Response.json(RECORD));
    const params: UpdateEndpointParams = {
      message_author_name: 'Ada',
      message_author_id: 'user-123456',
      message_content: 'Hello from chat_c & friends?',
      message_embed: JSON.stringify({ title: 'Release', fields: [{ name: 'Version', value: '1.0' }] }),
      message_attachments: 'https://cdn.chat-c.example.com/files/a.png,https://cdn.chat-c.example.com/files/b.png',
      sender: 'chat_c',
      sender_channel: 'channel-c-1234',
      trigger: true,
    };

    await client.updateEndpoint(ENDPOINT, TOKEN, params);

    const query = new URL(only().url).searchParams;
    expect(Object.fromEntries(query)).toEqual({ ...params, trigger: 'true', token: TOKEN });
  });

  test('members given as undefined are left out of the query', async () => {
    const { client, only } = setup(() => Response.json(RECORD));
    await client.updateEndpoint(ENDPOINT, TOKEN, { message_content: 'hi', beta: undefined, index: undefined }, { signal: undefined });
    expect(rawQuery(only())).toBe(`message_content=hi&token=${TOKEN}`);
  });

  test('the positional token wins over a stray token in params', async () => {
    const { client, only } = setup(() => Response.json(RECORD));

    // @ts-expect-error token is not an update parameter; it is the second argument
    await client.updateEndpoint(ENDPOINT, TOKEN, { token: 'other', beta: true });

    expect(new URL(only().url).searchParams.getAll('token')).toEqual([TOKEN]);
  });

  test('wrong calls do not compile, and are sent as given for the server to reject by name', async () => {
    const { client, requests } = setup(() => Response.json(RECORD));

    // @ts-expect-error unknown update parameter
    await client.updateEndpoint(ENDPOINT, TOKEN, { colour: 'red' });
    // @ts-expect-error trigger is a boolean
    await client.updateEndpoint(ENDPOINT, TOKEN, { trigger: 'yes' });
    // @ts-expect-error sender must be a Platform
    await client.updateEndpoint(ENDPOINT, TOKEN, { sender: 'chat_z' });
    // @ts-expect-error index is a number
    await client.updateEndpoint(ENDPOINT, TOKEN, { index: '0' });
    // @ts-expect-error the token is required
    await client.updateEndpoint(ENDPOINT, { beta: true });

    // The client neither drops nor coerces them: the server sees each and answers 400 (or 401) naming it.
    expect(requests.map(rawQuery)).toEqual([
      `colour=red&token=${TOKEN}`,
      `trigger=yes&token=${TOKEN}`,
      `sender=chat_z&token=${TOKEN}`,
      `index=0&token=${TOKEN}`,
      `token[beta]=true`,
    ]);
  });
});

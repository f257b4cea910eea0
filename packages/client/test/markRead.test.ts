import { describe, expect, test } from 'vitest';
import { ChatbridgeError, messageNumberOf } from '../src/index.ts';
import { BASE_URL, ENDPOINT, RECORD, TOKEN, setup } from './helpers.ts';

describe('markRead', () => {
  test('sends POST /read/{endpoint}?token=&platform= with no body and resolves the record', async () => {
    const { client, only } = setup(() => Response.json(RECORD));

    const record = await client.markRead(ENDPOINT, TOKEN, 'chat_c');

    const request = only();
    expect(request.method).toBe('POST');
    expect(request.url).toBe(`${BASE_URL}/read/${ENDPOINT}?token=${TOKEN}&platform=chat_c`);
    expect(request.body).toBeNull();
    expect(record).toEqual(RECORD);
  });

  test('the message number of the answer a record came in is remembered, and markRead sends it as message_number', async () => {
    const { client, requests } = setup((request) =>
      Response.json(RECORD, request.url.includes('/read/') ? {} : { headers: { 'Chatbridge-Message-Number': '7' } }),
    );
    const record = await client.getEndpoint(ENDPOINT, TOKEN);
    expect(messageNumberOf(record)).toBe(7);
    const marked = await client.markRead(ENDPOINT, TOKEN, 'chat_c', { messageNumber: messageNumberOf(record) });
    expect(requests[1]!.url).toBe(`${BASE_URL}/read/${ENDPOINT}?token=${TOKEN}&platform=chat_c&message_number=7`);
    expect(messageNumberOf(marked)).toBeUndefined(); // that answer had no header: the endpoint is idle
    expect(messageNumberOf(structuredClone(record))).toBeUndefined(); // only records the client returned
  });

  test('rejects with the problem on 400', async () => {
    const problem = {
      type: 'https://chatbridge.dev/problems#validation',
      title: 'Invalid request',
      status: 400,
      detail: 'platform: bad',
      message: 'platform: bad',
    };
    const { client } = setup(() => Response.json(problem, { status: 400, headers: { 'content-type': 'application/problem+json' } }));
    const error = await client.markRead(ENDPOINT, TOKEN, 'chat_a').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChatbridgeError);
    expect((error as ChatbridgeError).problem.detail).toBe('platform: bad');
  });

  test('types: platform must be a platform key', () => {
    const { client } = setup(() => Response.json(RECORD));
    // @ts-expect-error -- 'chat_z' is not a Platform
    void client.markRead(ENDPOINT, TOKEN, 'chat_z').catch(() => undefined);
  });
});

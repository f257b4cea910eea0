import { describe, expect, test } from 'vitest';
import { ChatbridgeError } from '../src/index.ts';
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

  test('rejects with the problem on 400', async () => {
    const problem = { type: 'https://chatbridge.dev/problems#validation', title: 'Invalid request', status: 400, detail: 'platform: bad', message: 'platform: bad' };
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

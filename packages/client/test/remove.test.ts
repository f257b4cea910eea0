import { describe, expect, test } from 'vitest';
import { ChatbridgeError, messageNumberOf } from '../src/index.ts';
import { BASE_URL, ENDPOINT, PROBLEMS, RECORD, TOKEN, problemResponse, rawQuery, setup } from './helpers.ts';

describe('remove', () => {
  test('sends POST /remove/{endpoint} with the parameters and the token in the query, no body, and resolves the record', async () => {
    const { client, only } = setup(() => Response.json(RECORD));

    const record = await client.remove(ENDPOINT, TOKEN, { blacklist: 'spam,scam', bridge: 1, log_chat_a: true, allowed_ids: undefined });

    const request = only();
    expect(request.method).toBe('POST');
    expect(`${new URL(request.url).origin}${new URL(request.url).pathname}`).toBe(`${BASE_URL}/remove/${ENDPOINT}`);
    expect(rawQuery(request)).toBe(`blacklist=spam%2Cscam&bridge=1&log_chat_a=true&token=${TOKEN}`);
    expect(request.body).toBeNull();
    expect(record).toEqual(RECORD);
  });

  test('the message number of the answer is remembered, as for updateEndpoint', async () => {
    const { client } = setup(() => Response.json(RECORD, { headers: { 'Chatbridge-Message-Number': '3' } }));
    expect(messageNumberOf(await client.remove(ENDPOINT, TOKEN, { log_chat_b: true }))).toBe(3);
  });

  test('a stray token in the parameters (an untyped caller) does not replace the token argument', async () => {
    const { client, only } = setup(() => Response.json(RECORD));
    await client.remove(ENDPOINT, TOKEN, { token: 'stolen' } as never);
    expect(new URL(only().url).searchParams.getAll('token')).toEqual([TOKEN]);
  });

  test('rejects with the problem on 400, naming the parameter', async () => {
    const problem = {
      ...PROBLEMS.validation,
      detail: 'bridge: no bridge at position 4',
      message: 'bridge: no bridge at position 4',
      errors: [{ parameter: 'bridge', in: 'query' as const, message: 'no bridge at position 4' }],
    };
    const { client } = setup(() => problemResponse(problem));
    const error = await client.remove(ENDPOINT, TOKEN, { bridge: 4 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChatbridgeError);
    expect((error as ChatbridgeError).operationId).toBe('removeFromEndpoint');
    expect((error as ChatbridgeError).problem.errors).toEqual(problem.errors);
  });

  test('types: only the removal parameters, with their types', () => {
    const { client } = setup(() => Response.json(RECORD));
    // @ts-expect-error -- channel_chat_a is an update parameter; a bridge is removed by position
    void client.remove(ENDPOINT, TOKEN, { channel_chat_a: '912345678901234500' }).catch(() => undefined);
    // @ts-expect-error -- bridge is a number
    void client.remove(ENDPOINT, TOKEN, { bridge: '1' }).catch(() => undefined);
    // @ts-expect-error -- a log channel is cleared with true, not named
    void client.remove(ENDPOINT, TOKEN, { log_chat_a: '912345678901234599' }).catch(() => undefined);
  });
});

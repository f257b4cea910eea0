import { describe, expect, expectTypeOf, test } from 'vitest';
import { ChatbridgeError, type Health, type Readiness } from '../src/index.ts';
import { BASE_URL, setup } from './helpers.ts';

describe('health probes', () => {
  test('getLiveness: GET /-/live without credentials, resolves the Health body', async () => {
    const { client, only } = setup(() => Response.json({ status: 'ok' }));

    const health = await client.getLiveness();

    expect(only().method).toBe('GET');
    expect(only().url).toBe(`${BASE_URL}/-/live`);
    expect(only().headers.get('authorization')).toBeNull();
    expect(health).toEqual({ status: 'ok' });
    expectTypeOf(health).toEqualTypeOf<Health>();
  });

  test('getReadiness: 200 resolves ready: true', async () => {
    const body: Health = { status: 'ready', checks: { store: 'ok' } };
    const { client, only } = setup(() => Response.json(body));

    const readiness = await client.getReadiness();

    expect(only().url).toBe(`${BASE_URL}/-/ready`);
    expect(readiness).toEqual({ ready: true, health: body });
    expectTypeOf(readiness).toEqualTypeOf<Readiness>();
  });

  test('getReadiness: 503 with a Health body resolves ready: false instead of rejecting', async () => {
    const body: Health = { status: 'not_ready', checks: { store: 'unavailable' } };
    const { client } = setup(() => Response.json(body, { status: 503 }));

    await expect(client.getReadiness()).resolves.toEqual({ ready: false, health: body });
  });

  test('getReadiness: a 503 problem document (not a Health body) rejects', async () => {
    const problem = {
      type: 'https://chatbridge.dev/problems#unavailable',
      title: 'Service unavailable',
      status: 503,
      detail: 'The store does not answer.',
      message: 'The store does not answer.',
    };
    const { client } = setup(
      () => new Response(JSON.stringify(problem), { status: 503, headers: { 'content-type': 'application/problem+json' } }),
    );

    const error = await client.getReadiness().catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ChatbridgeError);
    expect((error as ChatbridgeError).status).toBe(503);
    expect((error as ChatbridgeError).problem).toEqual(problem);
  });

  test('getReadiness: only a 503 counts as "not ready"; another status with a Health body rejects', async () => {
    const { client } = setup(() => Response.json({ status: 'not_ready' }, { status: 500 }));

    await expect(client.getReadiness()).rejects.toMatchObject({ name: 'ChatbridgeError', status: 500 });
  });

  test('getReadiness: a 500 rejects', async () => {
    const { client } = setup(() => new Response('boom', { status: 500 }));

    await expect(client.getReadiness()).rejects.toMatchObject({ name: 'ChatbridgeError', status: 500 });
  });
});

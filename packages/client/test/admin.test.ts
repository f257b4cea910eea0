import { describe, expect, expectTypeOf, test } from 'vitest';
import { ChatbridgeUsageError, type ChatbridgeClient, type EndpointPage, type IssuedToken } from '../src/index.ts';
import { ADMIN_TOKEN, BASE_URL, ENDPOINT, TOKEN, setup } from './helpers.ts';

const ISSUED: IssuedToken = { id: ENDPOINT, token: TOKEN };

describe('admin operations', () => {
  test('createEndpoint: POST /admin/endpoints with a JSON body and the admin bearer token, resolves the 201 body', async () => {
    const { client, only } = setup(() => Response.json(ISSUED, { status: 201 }));

    const issued = await client.createEndpoint(ENDPOINT);

    const request = only();
    expect(request.method).toBe('POST');
    expect(request.url).toBe(`${BASE_URL}/admin/endpoints`);
    expect(request.headers.get('authorization')).toBe(`Bearer ${ADMIN_TOKEN}`);
    expect(request.headers.get('content-type')).toBe('application/json');
    expect(await request.json()).toEqual({ id: ENDPOINT });
    expect(issued).toEqual(ISSUED);
    expectTypeOf(issued).toEqualTypeOf<IssuedToken>();
  });

  test('createEndpoint with an existing token (a migration): the token goes in the JSON body', async () => {
    const { client, only } = setup(() => Response.json(ISSUED, { status: 201 }));
    await client.createEndpoint(ENDPOINT, { token: TOKEN });
    expect(await only().json()).toEqual({ id: ENDPOINT, token: TOKEN });
  });

  test('listEndpoints: GET /admin/endpoints with limit and cursor', async () => {
    const page: EndpointPage = { ids: ['community-b', 'community-c'], next_cursor: 'community-c' };
    const { client, only } = setup(() => Response.json(page));

    const result = await client.listEndpoints({ limit: 2, cursor: 'community-a' });

    const request = only();
    expect(request.method).toBe('GET');
    expect(request.url).toBe(`${BASE_URL}/admin/endpoints?limit=2&cursor=community-a`);
    expect(request.headers.get('authorization')).toBe(`Bearer ${ADMIN_TOKEN}`);
    expect(request.body).toBeNull();
    expect(result).toEqual(page);
    expectTypeOf(result).toEqualTypeOf<EndpointPage>();
  });

  test('listEndpoints: no query string without parameters', async () => {
    const { client, only } = setup(() => Response.json({ ids: [], next_cursor: null }));

    await client.listEndpoints();

    expect(only().url).toBe(`${BASE_URL}/admin/endpoints`);
  });

  test('rotateEndpointToken: POST /admin/endpoints/{endpoint}/token without a body, resolves the new token', async () => {
    const { client, only } = setup(() => Response.json(ISSUED));

    const issued = await client.rotateEndpointToken(ENDPOINT);

    const request = only();
    expect(request.method).toBe('POST');
    expect(request.url).toBe(`${BASE_URL}/admin/endpoints/${ENDPOINT}/token`);
    expect(request.headers.get('authorization')).toBe(`Bearer ${ADMIN_TOKEN}`);
    expect(request.body).toBeNull();
    expect(issued).toEqual(ISSUED);
  });

  test('deleteEndpoint: DELETE /admin/endpoints/{endpoint}, resolves undefined on 204', async () => {
    const { client, only } = setup(() => new Response(null, { status: 204 }));

    const result = await client.deleteEndpoint(ENDPOINT);

    const request = only();
    expect(request.method).toBe('DELETE');
    expect(request.url).toBe(`${BASE_URL}/admin/endpoints/${ENDPOINT}`);
    expect(request.headers.get('authorization')).toBe(`Bearer ${ADMIN_TOKEN}`);
    expect(result).toBeUndefined();
    expectTypeOf(result).toEqualTypeOf<void>();
  });

  test('the per-request bearer token replaces an Authorization header given at creation', async () => {
    const { client, only } = setup(() => Response.json(ISSUED), { headers: { Authorization: 'Basic nope' } });

    await client.rotateEndpointToken(ENDPOINT);

    expect(only().headers.get('authorization')).toBe(`Bearer ${ADMIN_TOKEN}`);
  });

  const adminCalls: [string, (client: ChatbridgeClient) => Promise<unknown>][] = [
    ['createEndpoint', (c) => c.createEndpoint(ENDPOINT)],
    ['listEndpoints', (c) => c.listEndpoints()],
    ['rotateEndpointToken', (c) => c.rotateEndpointToken(ENDPOINT)],
    ['deleteEndpoint', (c) => c.deleteEndpoint(ENDPOINT)],
  ];

  test.each(adminCalls)('%s without an adminToken rejects before any request', async (name, call) => {
    const { client, requests } = setup(() => Response.json(ISSUED), { adminToken: undefined });

    const error = await call(client).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ChatbridgeUsageError);
    expect((error as Error).message).toBe(`${name} is an admin operation: pass adminToken to createChatbridgeClient() to call it`);
    expect(requests).toHaveLength(0);
  });

  test('an empty adminToken counts as missing', async () => {
    const { client, requests } = setup(() => Response.json(ISSUED), { adminToken: '' });

    await expect(client.createEndpoint(ENDPOINT)).rejects.toThrow(ChatbridgeUsageError);
    expect(requests).toHaveLength(0);
  });

  test.each(['.', '..'])('deleteEndpoint(%j) is refused instead of being resolved to another path', async (id) => {
    const { client, requests } = setup(() => new Response(null, { status: 204 }));

    await expect(client.deleteEndpoint(id)).rejects.toThrow(ChatbridgeUsageError);
    await expect(client.rotateEndpointToken(id)).rejects.toThrow(ChatbridgeUsageError);
    expect(requests).toHaveLength(0);
  });

  test('wrong calls do not compile', async () => {
    const { client, requests } = setup(() => Response.json(ISSUED, { status: 201 }));

    // @ts-expect-error createEndpoint takes the ID, not the request body
    await client.createEndpoint({ id: ENDPOINT });
    // @ts-expect-error limit is a number
    await client.listEndpoints({ limit: '10' });

    // Sent as given, for the server to reject: the client does not reshape wrong input.
    expect(await requests[0]!.json()).toEqual({ id: { id: ENDPOINT } });
    expect(requests[1]!.url).toBe(`${BASE_URL}/admin/endpoints?limit=10`);
  });
});

// Contract tests: the same requests against the real server and the Prism mock of the bundled spec. For
// every case both must answer the same status, with the media type the spec declares for that operation
// and status, and a body that validates against the declared schema. Behaviour the two are known to
// differ on is pinned down separately, per side, at the end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createChatbridgeClient } from '@chatbridge/client';
import { capture, type CapturedResponse, headerViolations, mediaTypeOf, violations } from './spec.ts';
import { ENDPOINT_ID, MOCK_TOKEN, startMockTarget, startServerTarget, type Target } from './targets.ts';

type TargetName = 'server' | 'mock';
const targets = {} as Record<TargetName, Target>;

// The server runs with its abuse limits on (high enough never to refuse this suite), so the answers
// carry the RateLimit-* headers they carry in production and the header check below sees them.
const RATE_LIMITS = {
  authFailuresPerMinute: 1_000,
  authFailuresPerAddressPerMinute: 10_000,
  perEndpointPerSecond: 1_000,
};

/** Every answer the server gave in this file, by operation, for the header check at the end. */
const serverAnswers: { operationId: string; status: number; headers: Headers }[] = [];

beforeAll(async () => {
  const started = await Promise.allSettled([startServerTarget({ rateLimits: RATE_LIMITS }), startMockTarget()]);
  for (const result of started) if (result.status === 'fulfilled') targets[result.value.name as TargetName] = result.value;
  const failed = started.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason; // afterAll still closes whatever did start
});

afterAll(async () => {
  await Promise.allSettled(Object.values(targets).map((target) => target.close()));
});

interface Call {
  method?: 'GET' | 'POST' | 'DELETE';
  path: string;
  /** Percent-encoded into the query string; pairs allow a name twice. */
  query?: Record<string, string> | [string, string][];
  /** Sends `Authorization: Bearer <value>`. */
  bearer?: string;
  headers?: Record<string, string>;
  json?: unknown;
}

async function send(target: Target, call: Call): Promise<CapturedResponse & { fromServer?: boolean }> {
  const pairs = Array.isArray(call.query) ? call.query : Object.entries(call.query ?? {});
  const query = pairs.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`).join('&');
  const headers: Record<string, string> = { ...call.headers };
  if (call.bearer !== undefined) headers.authorization = `Bearer ${call.bearer}`;
  if (call.json !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${target.url}${call.path}${query ? `?${query}` : ''}`, {
    method: call.method ?? 'GET',
    headers,
    body: call.json === undefined ? undefined : JSON.stringify(call.json),
  });
  return { ...(await capture(response)), fromServer: target === targets.server };
}

/** Asserts the status, then that media type and body are what the spec declares for it. */
function expectCompliant(operationId: string, response: CapturedResponse & { fromServer?: boolean }, status: number): void {
  if (response.fromServer) serverAnswers.push({ operationId, status: response.status, headers: response.headers });
  expect({ status: response.status, body: response.body }).toMatchObject({ status });
  expect(violations(operationId, response), JSON.stringify(response.body)).toEqual([]);
}

const WEBHOOK_A = 'https://chat-a.example.com/api/webhooks/123456789012345678/abcdefghijklmnopqrstuvwxyz';
const WEBHOOK_C = 'https://chat-c.example.com/api/webhooks/123456789012345678/abcdefghijklmnopqrstuvwxyz';
const ADMIN_ID = 'contract-admin';
const ADMIN_BOT = 'contract-bot';

interface Case {
  name: string;
  operationId: string;
  status: number;
  call(target: Target): Call;
}

// Run in order against each target: the admin cases create, rotate and delete ADMIN_ID on the server.
const cases: Case[] = [
  {
    name: 'when an endpoint is read with a valid token, then 200 with the record',
    operationId: 'getEndpoint',
    status: 200,
    call: (t) => ({ path: `/${ENDPOINT_ID}`, query: { token: t.token } }),
  },
  {
    name: 'when an endpoint is updated with valid parameters, then 200 with the record',
    operationId: 'updateEndpoint',
    status: 200,
    call: (t) => ({
      method: 'POST',
      path: `/update/${ENDPOINT_ID}`,
      query: {
        token: t.token,
        channel_chat_a: '912345678901234500',
        webhook_chat_a: WEBHOOK_A,
        blacklist: 'spam,scam',
        selfuse: 'true',
        sender: 'chat_a',
        trigger: 'true',
      },
    }),
  },
  {
    name: 'when an endpoint is read without a token, then 401',
    operationId: 'getEndpoint',
    status: 401,
    call: () => ({ path: `/${ENDPOINT_ID}` }),
  },
  {
    name: 'when an endpoint is updated without a token, then 401',
    operationId: 'updateEndpoint',
    status: 401,
    call: () => ({ method: 'POST', path: `/update/${ENDPOINT_ID}`, query: { selfuse: 'true' } }),
  },
  {
    name: 'when the token is empty, then 401 as if it were missing',
    operationId: 'getEndpoint',
    status: 401,
    call: () => ({ path: `/${ENDPOINT_ID}`, query: { token: '' } }),
  },
  {
    name: 'when the endpoint ID has a character outside the alphabet, then 400',
    operationId: 'getEndpoint',
    status: 400,
    call: (t) => ({ path: '/bad!id', query: { token: t.token } }),
  },
  {
    name: 'when the endpoint ID is longer than 64 characters, then 400',
    operationId: 'updateEndpoint',
    status: 400,
    call: (t) => ({ method: 'POST', path: `/update/${'e'.repeat(65)}`, query: { token: t.token } }),
  },
  {
    name: 'when the token is shorter than 71 characters, then 400',
    operationId: 'getEndpoint',
    status: 400,
    call: () => ({ path: `/${ENDPOINT_ID}`, query: { token: 'cbt_short' } }),
  },
  {
    name: 'when index is above its maximum, then 400',
    operationId: 'updateEndpoint',
    status: 400,
    call: (t) => ({ method: 'POST', path: `/update/${ENDPOINT_ID}`, query: { token: t.token, index: '1000', channel_chat_a: '1' } }),
  },
  {
    name: 'when a text parameter is shorter than its minimum, then 400',
    operationId: 'updateEndpoint',
    status: 400,
    call: (t) => ({ method: 'POST', path: `/update/${ENDPOINT_ID}`, query: { token: t.token, channel_chat_b: 'abc' } }),
  },
  {
    name: 'when sender is not a platform, then 400',
    operationId: 'updateEndpoint',
    status: 400,
    call: (t) => ({ method: 'POST', path: `/update/${ENDPOINT_ID}`, query: { token: t.token, sender: 'chat_x' } }),
  },
  {
    name: 'when a boolean is neither true nor false, then 400',
    operationId: 'updateEndpoint',
    status: 400,
    call: (t) => ({ method: 'POST', path: `/update/${ENDPOINT_ID}`, query: { token: t.token, trigger: 'yes' } }),
  },
  {
    name: 'when a parameter is given twice, then 400',
    operationId: 'getEndpoint',
    status: 400,
    call: (t) => ({
      path: `/${ENDPOINT_ID}`,
      query: [
        ['token', t.token],
        ['token', t.token],
      ],
    }),
  },
  {
    name: 'when an admin creates an endpoint, then 201 with its token',
    operationId: 'createEndpoint',
    status: 201,
    call: (t) => ({ method: 'POST', path: '/admin/endpoints', bearer: t.adminToken, json: { id: ADMIN_ID } }),
  },
  {
    name: 'when an admin creates an endpoint with an invalid ID, then 400',
    operationId: 'createEndpoint',
    status: 400,
    call: (t) => ({ method: 'POST', path: '/admin/endpoints', bearer: t.adminToken, json: { id: 'no spaces!' } }),
  },
  {
    name: 'when an admin lists endpoints, then 200 with a page',
    operationId: 'listEndpoints',
    status: 200,
    call: (t) => ({ path: '/admin/endpoints', bearer: t.adminToken, query: { limit: '10' } }),
  },
  {
    name: 'when an admin lists endpoints with limit 0, then 400',
    operationId: 'listEndpoints',
    status: 400,
    call: (t) => ({ path: '/admin/endpoints', bearer: t.adminToken, query: { limit: '0' } }),
  },
  {
    name: "when an admin rotates an endpoint's token, then 200 with the new token",
    operationId: 'rotateEndpointToken',
    status: 200,
    call: (t) => ({ method: 'POST', path: `/admin/endpoints/${ADMIN_ID}/token`, bearer: t.adminToken }),
  },
  {
    name: 'when an admin deletes an endpoint, then 204 without a body',
    operationId: 'deleteEndpoint',
    status: 204,
    call: (t) => ({ method: 'DELETE', path: `/admin/endpoints/${ADMIN_ID}`, bearer: t.adminToken }),
  },
  {
    name: 'when an admin deletes an endpoint with an invalid ID, then 400',
    operationId: 'deleteEndpoint',
    status: 400,
    call: (t) => ({ method: 'DELETE', path: '/admin/endpoints/bad!id', bearer: t.adminToken }),
  },
  {
    name: 'when an admin creates a bot, then 201 with its platform and key',
    operationId: 'createBot',
    status: 201,
    call: (t) => ({ method: 'POST', path: '/admin/bots', bearer: t.adminToken, json: { id: ADMIN_BOT, platform: 'chat_b' } }),
  },
  {
    name: 'when an admin creates a bot for an unknown platform, then 400',
    operationId: 'createBot',
    status: 400,
    call: (t) => ({ method: 'POST', path: '/admin/bots', bearer: t.adminToken, json: { id: ADMIN_BOT, platform: 'chat_z' } }),
  },
  {
    name: 'when an admin lists bots, then 200 with the bots and no keys',
    operationId: 'listBots',
    status: 200,
    call: (t) => ({ path: '/admin/bots', bearer: t.adminToken }),
  },
  {
    name: "when an admin rotates a bot's key, then 200 with the new key",
    operationId: 'rotateBotKey',
    status: 200,
    call: (t) => ({ method: 'POST', path: `/admin/bots/${ADMIN_BOT}/key`, bearer: t.adminToken }),
  },
  {
    name: 'when an admin deletes a bot, then 204 without a body',
    operationId: 'deleteBot',
    status: 204,
    call: (t) => ({ method: 'DELETE', path: `/admin/bots/${ADMIN_BOT}`, bearer: t.adminToken }),
  },
  {
    name: 'when an admin deletes a bot with an invalid ID, then 400',
    operationId: 'deleteBot',
    status: 400,
    call: (t) => ({ method: 'DELETE', path: '/admin/bots/bad!id', bearer: t.adminToken }),
  },
  ...(
    [
      ['createBot', 'POST', '/admin/bots'],
      ['listBots', 'GET', '/admin/bots'],
      ['rotateBotKey', 'POST', `/admin/bots/${ADMIN_BOT}/key`],
      ['deleteBot', 'DELETE', `/admin/bots/${ADMIN_BOT}`],
    ] as const
  ).map(
    ([operationId, method, path]): Case => ({
      name: `when ${operationId} is called without a bearer token, then 401`,
      operationId,
      status: 401,
      call: () => ({ method, path, json: operationId === 'createBot' ? { id: ADMIN_BOT, platform: 'chat_b' } : undefined }),
    }),
  ),
  ...(
    [
      ['createEndpoint', 'POST', '/admin/endpoints'],
      ['listEndpoints', 'GET', '/admin/endpoints'],
      ['rotateEndpointToken', 'POST', `/admin/endpoints/${ENDPOINT_ID}/token`],
      ['deleteEndpoint', 'DELETE', `/admin/endpoints/${ENDPOINT_ID}`],
    ] as const
  ).map(
    ([operationId, method, path]): Case => ({
      name: `when ${operationId} is called without a bearer token, then 401`,
      operationId,
      status: 401,
      call: () => ({ method, path, json: operationId === 'createEndpoint' ? { id: ADMIN_ID } : undefined }),
    }),
  ),
  // The stream's 200 never ends on the server, so only its error answers are compared case by case;
  // the 200 is checked by its first event below.
  {
    name: 'when events are streamed without a token, then 401',
    operationId: 'streamEndpointEvents',
    status: 401,
    call: () => ({ path: `/events/${ENDPOINT_ID}` }),
  },
  {
    name: 'when events are streamed with a last_event_id that is no integer, then 400',
    operationId: 'streamEndpointEvents',
    status: 400,
    call: (t) => ({ path: `/events/${ENDPOINT_ID}`, query: { token: t.token, last_event_id: 'abc' } }),
  },
  {
    name: 'when Last-Event-ID is longer than 64 characters, then 400',
    operationId: 'streamEndpointEvents',
    status: 400,
    call: (t) => ({ path: `/events/${ENDPOINT_ID}`, query: { token: t.token }, headers: { 'last-event-id': '1'.repeat(65) } }),
  },
  {
    name: 'when all events are streamed without a bearer token, then 401',
    operationId: 'streamAllEvents',
    status: 401,
    call: () => ({ path: '/events' }),
  },
  {
    name: 'when all events are streamed with a last_event_id that is no integer, then 400',
    operationId: 'streamAllEvents',
    status: 400,
    call: (t) => ({ path: '/events', bearer: t.adminToken, query: { last_event_id: 'abc' } }),
  },
  {
    name: 'when a platform marks the message read with a valid token, then 200 with the record',
    operationId: 'markRead',
    status: 200,
    call: (t) => ({ method: 'POST', path: `/read/${ENDPOINT_ID}`, query: { token: t.token, platform: 'chat_b' } }),
  },
  {
    name: 'when a platform marks read without a token, then 401',
    operationId: 'markRead',
    status: 401,
    call: () => ({ method: 'POST', path: `/read/${ENDPOINT_ID}`, query: { platform: 'chat_b' } }),
  },
  {
    name: 'when markRead names an unknown platform, then 400',
    operationId: 'markRead',
    status: 400,
    call: (t) => ({ method: 'POST', path: `/read/${ENDPOINT_ID}`, query: { token: t.token, platform: 'chat_z' } }),
  },
  {
    name: 'when the message log is listed with a valid token, then 200 with a page',
    operationId: 'listMessages',
    status: 200,
    call: (t) => ({ path: `/messages/${ENDPOINT_ID}`, query: { token: t.token, after: '0', platform: 'chat_d' } }),
  },
  {
    name: 'when the message log is listed without a token, then 401',
    operationId: 'listMessages',
    status: 401,
    call: () => ({ path: `/messages/${ENDPOINT_ID}` }),
  },
  {
    name: 'when the message log is listed with a limit past its bound, then 400',
    operationId: 'listMessages',
    status: 400,
    call: (t) => ({ path: `/messages/${ENDPOINT_ID}`, query: { token: t.token, limit: '501' } }),
  },
  {
    name: 'when a message is looked for without a token, then 401',
    operationId: 'getMessage',
    status: 401,
    call: () => ({ path: `/messages/${ENDPOINT_ID}/find`, query: { number: '1' } }),
  },
  {
    name: 'when a message is looked for by number 0, then 400',
    operationId: 'getMessage',
    status: 400,
    call: (t) => ({ path: `/messages/${ENDPOINT_ID}/find`, query: { token: t.token, number: '0' } }),
  },
  {
    name: 'when a message is edited without a token, then 401',
    operationId: 'editMessage',
    status: 401,
    call: () => ({ method: 'POST', path: `/messages/${ENDPOINT_ID}/edit`, query: { number: '1', message_content: 'x' } }),
  },
  {
    name: 'when a message is edited by an ID with a space in it, then 400',
    operationId: 'editMessage',
    status: 400,
    call: (t) => ({
      method: 'POST',
      path: `/messages/${ENDPOINT_ID}/edit`,
      query: { token: t.token, platform: 'chat_c', message_id: 'c 1', message_content: 'x' },
    }),
  },
  {
    name: 'when a message is deleted without a token, then 401',
    operationId: 'deleteMessage',
    status: 401,
    call: () => ({ method: 'POST', path: `/messages/${ENDPOINT_ID}/delete`, query: { number: '1' } }),
  },
  {
    name: 'when a message is deleted on an unknown platform, then 400',
    operationId: 'deleteMessage',
    status: 400,
    call: (t) => ({
      method: 'POST',
      path: `/messages/${ENDPOINT_ID}/delete`,
      query: { token: t.token, platform: 'chat_z', message_id: 'c-1' },
    }),
  },
  {
    name: 'when an update has a message_id longer than 100 characters, then 400',
    operationId: 'updateEndpoint',
    status: 400,
    call: (t) => ({
      method: 'POST',
      path: `/update/${ENDPOINT_ID}`,
      query: { token: t.token, sender: 'chat_c', trigger: 'true', message_id: 'x'.repeat(101) },
    }),
  },
  {
    name: 'when an admin looks up a channel, then 200 with the endpoints that bridge it',
    operationId: 'lookupEndpoints',
    status: 200,
    call: (t) => ({ path: '/lookup', bearer: t.adminToken, query: { platform: 'chat_a', channel: '912345678901234500' } }),
  },
  {
    name: 'when a lookup names an unknown platform, then 400',
    operationId: 'lookupEndpoints',
    status: 400,
    call: (t) => ({ path: '/lookup', bearer: t.adminToken, query: { platform: 'chat_z', channel: '912345678901234500' } }),
  },
  {
    name: 'when a lookup is sent without a bearer token, then 401',
    operationId: 'lookupEndpoints',
    status: 401,
    call: () => ({ path: '/lookup', query: { platform: 'chat_a', channel: '912345678901234500' } }),
  },
  {
    name: 'when values are removed from an endpoint with a valid token, then 200 with the record',
    operationId: 'removeFromEndpoint',
    status: 200,
    call: (t) => ({ method: 'POST', path: `/remove/${ENDPOINT_ID}`, query: { token: t.token, blacklist: 'scam', log_chat_c: 'true' } }),
  },
  {
    name: 'when a removal names a bridge above its maximum, then 400',
    operationId: 'removeFromEndpoint',
    status: 400,
    call: (t) => ({ method: 'POST', path: `/remove/${ENDPOINT_ID}`, query: { token: t.token, bridge: '50' } }),
  },
  {
    name: 'when values are removed without a token, then 401',
    operationId: 'removeFromEndpoint',
    status: 401,
    call: () => ({ method: 'POST', path: `/remove/${ENDPOINT_ID}`, query: { blacklist: 'scam' } }),
  },
  {
    name: 'when metrics are scraped, then 200 text/plain',
    operationId: 'getMetrics',
    status: 200,
    call: () => ({ path: '/-/metrics' }),
  },
  {
    name: 'when the liveness probe is called, then 200',
    operationId: 'getLiveness',
    status: 200,
    call: () => ({ path: '/-/live' }),
  },
  {
    name: 'when the home page is opened, then 200 text/html',
    operationId: 'getHomePage',
    status: 200,
    call: () => ({ path: '/' }),
  },
  {
    name: 'when the readiness probe is called on a healthy target, then 200',
    operationId: 'getReadiness',
    status: 200,
    call: () => ({ path: '/-/ready' }),
  },
];

describe.each(['server', 'mock'] as const)('contract: the %s', (name) => {
  it.each(cases)('$name', async ({ operationId, status, call }) => {
    const target = targets[name];
    expectCompliant(operationId, await send(target, call(target)), status);
  });

  it('when events are streamed with a valid token, then 200 text/event-stream: retry, then a record event holding a schema-valid record', async () => {
    const target = targets[name];
    const controller = new AbortController();
    const response = await fetch(`${target.url}/events/${ENDPOINT_ID}?token=${target.token}`, { signal: controller.signal });
    // The server's stream stays open: read up to the end of the first event, then hang up.
    let text = '';
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    while (text.split('\n\n').length < 3) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    controller.abort();
    if (name === 'server') serverAnswers.push({ operationId: 'streamEndpointEvents', status: response.status, headers: response.headers });
    const [retry, event] = text.split('\n\n');
    expect(
      violations('streamEndpointEvents', {
        status: response.status,
        mediaType: mediaTypeOf(response.headers.get('content-type')),
        body: text,
        headers: response.headers,
      }),
    ).toEqual([]);
    expect(retry).toBe('retry: 2000');
    const [id, type, data] = event!.split('\n');
    expect(id).toMatch(/^id: \d+(-\d+)?$/); // the version, and the pending message's number if any
    expect(type).toBe('event: record');
    const record: unknown = JSON.parse(data!.replace(/^data: /, ''));
    expect(violations('getEndpoint', { status: 200, mediaType: 'application/json', body: record, headers: new Headers() })).toEqual([]);
  });

  it('when all events are streamed with the admin token, then 200 text/event-stream: retry, then an event with an id and JSON data', async () => {
    const target = targets[name];
    const controller = new AbortController();
    const response = await fetch(`${target.url}/events`, {
      headers: { authorization: `Bearer ${target.adminToken}` },
      signal: controller.signal,
    });
    let text = '';
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    while (text.split('\n\n').length < 3) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
    }
    controller.abort();
    const [retry, event] = text.split('\n\n');
    expect(
      violations('streamAllEvents', {
        status: response.status,
        mediaType: mediaTypeOf(response.headers.get('content-type')),
        body: text,
        headers: response.headers,
      }),
    ).toEqual([]);
    expect(retry).toBe('retry: 2000');
    const [id, type, data] = event!.split('\n');
    expect(id).toMatch(/^id: \d+$/);
    expect(type).toMatch(/^event: (reset|change)$/);
    expect(JSON.parse(data!.replace(/^data: /, ''))).toHaveProperty('endpoint');
  });

  // The server sends CORS headers only when the operator lists origins; the mock (as `pnpm mock` runs
  // it) must not promise a browser integration more than the default server gives.
  it('when a bot key reads, updates and marks read an endpoint in place of its token, then 200 with schema-valid records', async () => {
    const target = targets[name];
    const created = await send(target, {
      method: 'POST',
      path: '/admin/bots',
      bearer: target.adminToken,
      json: { id: 'contract-reader', platform: 'chat_b' },
    });
    expectCompliant('createBot', created, 201);
    const key = (created.body as { key: string }).key;
    // A key acts only where its platform has a channel: the token bridges one of chat_b's first.
    const query = { token: target.token, channel_chat_b: 'channel-b-contract' };
    expectCompliant('updateEndpoint', await send(target, { method: 'POST', path: `/update/${ENDPOINT_ID}`, query }), 200);
    expectCompliant('getEndpoint', await send(target, { path: `/${ENDPOINT_ID}`, bearer: key }), 200);
    expectCompliant(
      'updateEndpoint',
      await send(target, { method: 'POST', path: `/update/${ENDPOINT_ID}`, bearer: key, query: { sender: 'chat_b' } }),
      200,
    );
    expectCompliant('markRead', await send(target, { method: 'POST', path: `/read/${ENDPOINT_ID}`, bearer: key }), 200);
    await send(target, { method: 'DELETE', path: '/admin/bots/contract-reader', bearer: target.adminToken });
  });

  it('when a page of another origin reads the record, then no CORS header is sent', async () => {
    const target = targets[name];
    const response = await fetch(`${target.url}/${ENDPOINT_ID}?token=${target.token}`, { headers: { origin: 'https://dash.example.com' } });
    expect(response.status).toBe(200);
    expect([...response.headers.keys()].filter((h) => h.startsWith('access-control-'))).toEqual([]);
  });

  it('when the typed client reads and only-checks the endpoint, then both resolve to schema-valid records', async () => {
    const target = targets[name];
    const client = createChatbridgeClient({ baseUrl: target.url });
    const read = await client.getEndpoint(ENDPOINT_ID, target.token);
    const checked = await client.updateEndpoint(ENDPOINT_ID, target.token, { only_check: true, beta: true });
    for (const body of [read, checked]) {
      expect(violations('getEndpoint', { status: 200, mediaType: 'application/json', body, headers: new Headers() })).toEqual([]);
    }
  });
});

// Known, intended differences: the mock only knows the schema, the server also applies rules and
// checks tokens. Each side's behaviour is asserted, so a change on either side is noticed.
describe('contract: known differences between the server and the mock', () => {
  async function both(call: (t: Target) => Call) {
    return { server: await send(targets.server, call(targets.server)), mock: await send(targets.mock, call(targets.mock)) };
  }

  it('when an unknown query parameter is sent, then the server answers 400 naming it and the mock ignores it (200)', async () => {
    const { server, mock } = await both((t) => ({ path: `/${ENDPOINT_ID}`, query: { token: t.token, colour: 'blue' } }));
    expectCompliant('getEndpoint', server, 400);
    expect(server.body).toMatchObject({ errors: [{ parameter: 'colour', in: 'query' }] });
    expectCompliant('getEndpoint', mock, 200);
  });

  it('when webhook_chat_c is sent, then both accept it (200), and the server keeps chat_c without webhooks', async () => {
    const { server, mock } = await both((t) => ({
      method: 'POST',
      path: `/update/${ENDPOINT_ID}`,
      query: { token: t.token, webhook_chat_c: WEBHOOK_C },
    }));
    expectCompliant('updateEndpoint', server, 200);
    expect(server.body).toMatchObject({ config: { webhooks: { chat_c: [] } } });
    expectCompliant('updateEndpoint', mock, 200);
  });

  // Only message_content, message_reply_message and message_embed declare allowEmptyValue (an
  // attachment-only message has empty text, a message without an embed an empty one); the server
  // refuses an empty value anywhere else, while Prism lets `name=` through.
  it('when message_content is empty, then both accept it; when another parameter is empty, only the server refuses it', async () => {
    const empty = await both((t) => ({ method: 'POST', path: `/update/${ENDPOINT_ID}`, query: { token: t.token, message_content: '' } }));
    expectCompliant('updateEndpoint', empty.server, 200);
    expect(empty.server.body).toMatchObject({ meta: { message: { content: '' } } });
    expectCompliant('updateEndpoint', empty.mock, 200);

    const { server, mock } = await both((t) => ({
      method: 'POST',
      path: `/update/${ENDPOINT_ID}`,
      query: { token: t.token, log_chat_a: '' },
    }));
    expectCompliant('updateEndpoint', server, 400);
    expect(server.body).toMatchObject({ errors: [{ parameter: 'log_chat_a', in: 'query' }] });
    expectCompliant('updateEndpoint', mock, 200);
  });

  it('when a boolean is written True (as Python bots send it), then the server accepts it and the mock refuses it', async () => {
    const { server, mock } = await both((t) => ({
      method: 'POST',
      path: `/update/${ENDPOINT_ID}`,
      query: { token: t.token, beta: 'True' },
    }));
    expectCompliant('updateEndpoint', server, 200);
    expect(server.body).toMatchObject({ config: { isbeta: true } });
    expectCompliant('updateEndpoint', mock, 400);
  });

  it("when the mock is asked for a 503, then it answers the server's store-unavailable problem with Retry-After", async () => {
    const response = await fetch(`${targets.mock.url}/${ENDPOINT_ID}?token=${targets.mock.token}`, { headers: { prefer: 'code=503' } });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(await response.json()).toMatchObject({ type: 'https://chatbridge.dev/problems#unavailable', status: 503 });
  });

  it('when a well-formed but wrong token is sent, then the server answers 401 and the mock accepts it (200)', async () => {
    // MOCK_TOKEN is the spec's example token: right length and alphabet, never issued by the server.
    const { server, mock } = await both(() => ({ path: `/${ENDPOINT_ID}`, query: { token: MOCK_TOKEN } }));
    expectCompliant('getEndpoint', server, 401);
    expectCompliant('getEndpoint', mock, 200);
  });
});

// Runs last (the file's tests run in order): every answer the server gave above, compared with the
// headers the spec declares for that operation and status.
describe('contract: response headers', () => {
  it('when the server has answered every case of this file, then each answer sends only the headers the spec declares for it, and every required one', () => {
    expect(serverAnswers.length).toBeGreaterThan(30);
    expect([...new Set(serverAnswers.map((a) => a.status))]).toEqual(expect.arrayContaining([200, 201, 204, 400, 401]));
    const seenRateLimit = serverAnswers.some((a) => a.headers.has('ratelimit-limit'));
    expect(seenRateLimit).toBe(true);
    expect([...new Set(serverAnswers.flatMap((answer) => headerViolations(answer.operationId, answer)))]).toEqual([]);
  });
});

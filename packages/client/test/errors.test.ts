import { describe, expect, expectTypeOf, test } from 'vitest';
import { ChatbridgeError, type ChatbridgeClient, type Problem } from '../src/index.ts';
import { ENDPOINT, PROBLEMS, TOKEN, problemResponse, setup } from './helpers.ts';

/** Runs `call` and returns what it rejected with; fails if it resolved. */
async function rejection(call: Promise<unknown>): Promise<ChatbridgeError> {
  const outcome = await call.then(
    (value) => ({ resolved: value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`expected a rejection, got ${JSON.stringify(outcome.resolved)}`);
  expect(outcome.error).toBeInstanceOf(ChatbridgeError);
  return outcome.error as ChatbridgeError;
}

describe('errors', () => {
  const cases: [string, Problem, (client: ChatbridgeClient) => Promise<unknown>][] = [
    ['400 from updateEndpoint', PROBLEMS.validation, (c) => c.updateEndpoint(ENDPOINT, TOKEN, { message_embed: 'x' })],
    ['401 from getEndpoint', PROBLEMS.unauthorized, (c) => c.getEndpoint(ENDPOINT, TOKEN)],
    ['401 from listEndpoints', PROBLEMS.unauthorized, (c) => c.listEndpoints()],
    ['404 from deleteEndpoint', PROBLEMS.notFound, (c) => c.deleteEndpoint(ENDPOINT)],
    ['404 from rotateEndpointToken', PROBLEMS.notFound, (c) => c.rotateEndpointToken(ENDPOINT)],
    ['409 from createEndpoint', PROBLEMS.conflict, (c) => c.createEndpoint(ENDPOINT)],
  ];

  test.each(cases)('%s rejects with ChatbridgeError carrying the problem body', async (_, problem, call) => {
    const { client } = setup(() => problemResponse(problem));

    const error = await rejection(call(client));

    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('ChatbridgeError');
    expect(error.status).toBe(problem.status);
    expect(error.problem).toEqual(problem);
    expect(error.message).toContain(`failed with ${problem.status}: ${problem.title}: ${problem.detail}`);
    expectTypeOf(error.problem).toEqualTypeOf<Problem>();
  });

  test('validation errors list every offending parameter', async () => {
    const { client } = setup(() => problemResponse(PROBLEMS.validation));

    const error = await rejection(client.updateEndpoint(ENDPOINT, TOKEN, { message_embed: 'not json' }));

    expect(error.operationId).toBe('updateEndpoint');
    expect(error.problem.errors).toEqual([{ parameter: 'message_embed', in: 'query', message: 'must be a JSON object' }]);
  });

  test('the message never contains the token (it is in the URL, which is left out)', async () => {
    const { client } = setup(() => problemResponse(PROBLEMS.unauthorized));

    const error = await rejection(client.getEndpoint(ENDPOINT, TOKEN));

    expect(error.message).toBe('getEndpoint failed with 401: Unauthorized: The token is missing or not valid for this endpoint.');
    expect(error.message).not.toContain(TOKEN);
  });

  test('accepts a problem+json content type with parameters and keeps extension members', async () => {
    const body = { ...PROBLEMS.notFound, retryable: false };
    const { client } = setup(() => problemResponse(body, { headers: { 'content-type': 'Application/Problem+JSON; charset=utf-8' } }));

    const error = await rejection(client.deleteEndpoint(ENDPOINT));

    expect(error.problem).toEqual(body);
  });

  test('fills required members a problem document left out', async () => {
    const { client } = setup(
      () =>
        new Response(JSON.stringify({ title: 'Conflict', detail: 'Exists.' }), {
          status: 409,
          statusText: 'Conflict',
          headers: { 'content-type': 'application/problem+json' },
        }),
    );

    const error = await rejection(client.createEndpoint(ENDPOINT));

    expect(error.problem).toEqual({ type: 'about:blank', title: 'Conflict', status: 409, detail: 'Exists.', message: 'Exists.' });
  });

  test('synthesises a problem from the status for a non-JSON body', async () => {
    const html = '<html><body><h1>502 Bad Gateway</h1></body></html>';
    const { client } = setup(
      () => new Response(html, { status: 502, statusText: 'Bad Gateway', headers: { 'content-type': 'text/html' } }),
    );

    const error = await rejection(client.getEndpoint(ENDPOINT, TOKEN));

    expect(error.status).toBe(502);
    expect(error.problem).toEqual({ type: 'about:blank', title: 'Bad Gateway', status: 502, detail: html, message: html });
    expect(error.response.headers.get('content-type')).toBe('text/html');
  });

  test('synthesises a problem for an empty error body', async () => {
    const { client } = setup(() => new Response(null, { status: 500, headers: { 'content-length': '0' } }));

    const error = await rejection(client.getLiveness());

    expect(error.problem).toEqual({ type: 'about:blank', title: 'HTTP 500', status: 500, detail: 'HTTP 500', message: 'HTTP 500' });
  });

  test('does not take a plain application/json body for a problem document', async () => {
    const { client } = setup(() => Response.json({ error: 'nope' }, { status: 400 }));

    const error = await rejection(client.getEndpoint(ENDPOINT, TOKEN));

    expect(error.problem).toMatchObject({ type: 'about:blank', status: 400, detail: '{"error":"nope"}' });
  });

  test('shortens a long text body to 200 characters in detail', async () => {
    const { client } = setup(() => new Response('x'.repeat(1000), { status: 503 }));

    const error = await rejection(client.getEndpoint(ENDPOINT, TOKEN));

    expect(error.problem.detail).toBe(`${'x'.repeat(200)}…`);
  });

  test('when the cut falls inside an emoji, then the shortened detail keeps no half of it', async () => {
    const { client } = setup(() => new Response(`${'x'.repeat(199)}${'😀'.repeat(10)}`, { status: 503 }));

    const error = await rejection(client.getEndpoint(ENDPOINT, TOKEN));

    expect(error.problem.detail).toBe(`${'x'.repeat(199)}…`);
    expect(error.problem.detail).not.toMatch(/[\uD800-\uDFFF]/);
  });

  test('a network failure is passed through unchanged, not wrapped', async () => {
    const failure = new TypeError('fetch failed');
    const { client } = setup(() => Promise.reject(failure));

    await expect(client.getEndpoint(ENDPOINT, TOKEN)).rejects.toBe(failure);
  });
});

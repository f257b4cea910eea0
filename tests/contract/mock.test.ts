// The Prism mock as `pnpm mock` runs it (docs/mock.md): every error response the spec documents can be
// asked for with `Prefer: code=NNN` (and each of its named examples with `example=name`), and comes
// back as the documented problem with the documented headers; and the claims docs/mock.md makes about
// what the mock checks and what it does not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleRequest, operationIds, sendExample } from './examples.ts';
import { capture, deref, headerViolations, operation, violations } from './spec.ts';
import { MOCK_TOKEN, startMockTarget, type Target } from './targets.ts';

type Json = Record<string, any>;

let mock: Target;
beforeAll(async () => {
  mock = await startMockTarget();
});
afterAll(() => mock?.close());

interface Asked {
  operationId: string;
  /** The declared response key: a status, or `default`. */
  declared: string;
  example: string;
  status: number;
}

/** Every named example of every error response of every operation, with the status it stands for. */
function errorExamples(): Asked[] {
  return operationIds().flatMap((operationId) =>
    Object.entries<Json>(operation(operationId).op.responses).flatMap(([declared, ref]) => {
      if (declared !== 'default' && Number(declared) < 400) return [];
      const content = Object.values<Json>(deref(ref).content ?? {})[0];
      return Object.entries<Json>(content?.examples ?? {}).map(([example, value]) => ({
        operationId,
        declared,
        example,
        // A `default` answer's status is the one its example stands for.
        status: declared === 'default' ? (deref(value).value as { status: number }).status : Number(declared),
      }));
    }),
  );
}

describe('the mock: documented error responses', () => {
  const asked = errorExamples();

  it('when the error responses are listed, then every operation documents some, and each example has its own status', () => {
    expect(new Set(asked.map((a) => a.operationId))).toEqual(new Set(operationIds()));
    expect(asked.filter((a) => !(a.status >= 400 && a.status <= 599))).toEqual([]);
  });

  // Any path can be answered 405 (another method), 413, 415 or 500 (a bug), so every operation must
  // let the mock give them.
  it.each(operationIds())('when %s is listed, then it has an example for 405, 413, 415 and 500', (operationId) => {
    const statuses = asked.filter((a) => a.operationId === operationId).map((a) => a.status);
    expect([405, 413, 415, 500].filter((status) => !statuses.includes(status))).toEqual([]);
  });

  it.each(asked)(
    'when $operationId is asked for $status ($declared) with example $example, then the mock answers it as documented',
    async ({ operationId, example, status }) => {
      const request = exampleRequest(operationId, { token: MOCK_TOKEN, adminToken: 'any-bearer-will-do' });
      const response = await capture(await sendExample(mock.url, request, { prefer: `code=${status}, example=${example}` }));
      expect(response.status).toBe(status);
      expect(violations(operationId, response)).toEqual([]);
      if (response.mediaType === 'application/problem+json') expect(response.body).toMatchObject({ status });
      expect(headerViolations(operationId, response)).toEqual([]);
    },
  );

  it.each(operationIds())(
    'when %s is asked for each documented error status by code alone, then the mock answers that status',
    async (operationId) => {
      const statuses = Object.keys(operation(operationId).op.responses).filter((key) => Number(key) >= 400);
      const request = exampleRequest(operationId, { token: MOCK_TOKEN, adminToken: 'any-bearer-will-do' });
      for (const status of statuses) {
        const response = await capture(await sendExample(mock.url, request, { prefer: `code=${status}` }));
        expect({ status: response.status, violations: violations(operationId, response) }).toEqual({
          status: Number(status),
          violations: [],
        });
      }
    },
  );
});

// Each claim of docs/mock.md's two lists that a request can show.
describe('the mock: what it checks and what it does not (docs/mock.md)', () => {
  const get = (query: string, headers: Record<string, string> = {}) => fetch(`${mock.url}/912345678901234567${query}`, { headers });
  const update = (query: string) => fetch(`${mock.url}/update/912345678901234567?token=${MOCK_TOKEN}&${query}`, { method: 'POST' });

  it('when the token is missing, then 401 with the WWW-Authenticate challenge', async () => {
    const response = await get('');
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBeTruthy();
  });

  it('when a parameter breaks its schema, then 400, but the body is the example, naming another parameter', async () => {
    const response = await update('index=1000');
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ errors: [{ parameter: 'message_embed' }] });
  });

  it("when a path is called with a method it does not have, then 405 with Prism's own problem and no Allow", async () => {
    const response = await fetch(`${mock.url}/-/live`, { method: 'DELETE' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBeNull();
    expect(await response.json()).toMatchObject({ type: expect.stringMatching(/^https:\/\/stoplight\.io\/prism\/errors#/) });
  });

  it('when an admin body is not JSON or breaks its schema, then 400', async () => {
    const create = (body: string, type: string) =>
      fetch(`${mock.url}/admin/endpoints`, { method: 'POST', headers: { authorization: 'Bearer x', 'content-type': type }, body });
    expect((await create('x', 'text/plain')).status).toBe(400);
    expect((await create('{"id":"bad id!"}', 'application/json')).status).toBe(400);
  });

  it('when the token is well-formed but wrong, then 200: tokens are not checked', async () => {
    expect((await get(`?token=${'A'.repeat(71)}`)).status).toBe(200);
  });

  it("when a request breaks one of the server's own rules (an index with no element, an embed that is not an object, a message number never issued), then 200", async () => {
    expect((await update('index=5&channel_chat_a=912345678901234509')).status).toBe(200);
    expect((await update('message_embed=%5B1%5D')).status).toBe(200);
    const read = await fetch(`${mock.url}/read/912345678901234567?token=${MOCK_TOKEN}&platform=chat_a&message_number=999`, {
      method: 'POST',
    });
    expect(read.status).toBe(200);
  });

  it('when the same update is sent twice, then the answers are the same example: the mock keeps no state', async () => {
    const first = await (await update('blacklist=eggs')).json();
    const second = await (await update('blacklist=eggs')).json();
    expect(second).toEqual(first);
    expect(first).not.toMatchObject({ config: { blacklist: ['eggs'] } });
  });
});

import { describe, expect, it } from 'vitest';
import { createChatbridgeClient } from '@chatbridge/client';
import { startTestServer } from '../../src/testing.ts';
import { hashToken } from '../../src/tokens.ts';
import { failure, raw, useServer } from './harness.ts';

const h = useServer();

describe('admin operations', () => {
  it('createEndpoint: when a new ID is created, then a 71-85 char URL-safe token is shown once and works', async () => {
    const issued = await h.client.createEndpoint('community-new');
    expect(issued.id).toBe('community-new');
    expect(issued.token).toMatch(/^[A-Za-z0-9_-]{71,85}$/);
    await expect(h.client.getEndpoint('community-new', issued.token)).resolves.toBeDefined();
  });

  it('createEndpoint: when an existing token is given (a migration), then the endpoint answers that token and only its digest is stored', async () => {
    const existing = `legacy_${'Zz0_-'.repeat(15)}`;
    const issued = await h.client.createEndpoint('community-migrated', { token: existing });
    expect(issued).toEqual({ id: 'community-migrated', token: existing });
    await expect(h.client.getEndpoint('community-migrated', existing)).resolves.toMatchObject({ meta: { trigger: false } });
    expect(Buffer.from((await h.server.store.endpoints.get('community-migrated'))!.tokenHash)).toEqual(hashToken(existing));
  });

  it('createEndpoint: when the existing token is one the service issued to another endpoint, then 400 naming token, and nothing is created', async () => {
    const { token: issued } = await h.client.createEndpoint('community-original');
    const e = await failure(h.client.createEndpoint('community-copy', { token: issued }));
    expect(e.status).toBe(400);
    expect(e.problem.errors).toEqual([
      expect.objectContaining({ parameter: 'token', in: 'body', message: expect.stringContaining('chatbridge issued') }),
    ]);
    expect(await h.server.store.endpoints.get('community-copy')).toBeUndefined();
  });

  it.each([
    ['too short', 'a'.repeat(70)],
    ['too long', 'a'.repeat(86)],
    ['outside the URL-safe alphabet', `${'a'.repeat(75)}.`],
  ])('createEndpoint: when an existing token is %s, then 400 naming token, and nothing is created', async (_, token) => {
    const e = await failure(h.client.createEndpoint('community-bad-token', { token }));
    expect(e.status).toBe(400);
    expect(e.problem.errors?.map((i) => i.parameter)).toEqual(['token']);
    expect(await h.server.store.endpoints.get('community-bad-token')).toBeUndefined();
  });

  it('createEndpoint: when the ID exists, then 409', async () => {
    await h.client.createEndpoint('community-dup');
    const e = await failure(h.client.createEndpoint('community-dup'));
    expect(e.status).toBe(409);
    expect(e.problem.type).toBe('https://chatbridge.dev/problems#conflict');
  });

  it('createEndpoint: when the ID is invalid, then 400 naming id', async () => {
    const e = await failure(h.client.createEndpoint('bad id!'));
    expect(e.status).toBe(400);
    expect(e.problem.errors?.[0]?.parameter).toContain('id');
  });

  it('createEndpoint: when the body lacks id and holds unknown members (named "", or holding "/"), then 400 names each as sent', async () => {
    const post = (body: string) =>
      raw(`${h.server.url}/admin/endpoints`, {
        method: 'POST',
        headers: { authorization: `Bearer ${h.server.adminToken}`, 'content-type': 'application/json' },
        body,
      });
    const r = await post('{"":"","extra":1,"a/b.c":2}');
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([
      { parameter: 'id', in: 'body', message: "must have required property 'id'" },
      { parameter: '', in: 'body', message: 'must NOT have additional properties' },
      { parameter: 'extra', in: 'body', message: 'must NOT have additional properties' },
      { parameter: 'a/b.c', in: 'body', message: 'must NOT have additional properties' },
    ]);
    expect((await post('{"id":"community-empty-key","":1}')).body.errors).toEqual([
      { parameter: '', in: 'body', message: 'must NOT have additional properties' },
    ]);
    expect((await h.client.listEndpoints()).ids).not.toContain('community-empty-key');
  });

  it('when the admin token comes with the scheme name in another letter case, then it is accepted (RFC 9110)', async () => {
    for (const scheme of ['bearer', 'BEARER', 'BeArEr']) {
      const r = await raw(`${h.server.url}/admin/endpoints?limit=1`, { headers: { authorization: `${scheme} ${h.server.adminToken}` } });
      expect(r.status).toBe(200);
    }
    const wrong = await raw(`${h.server.url}/admin/endpoints?limit=1`, { headers: { authorization: `Basic ${h.server.adminToken}` } });
    expect(wrong.status).toBe(401);
  });

  it('createEndpoint: when the body is not JSON, then 400', async () => {
    const r = await raw(`${h.server.url}/admin/endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.server.adminToken}`, 'content-type': 'application/json' },
      body: '{nope',
    });
    expect(r.status).toBe(400);
    expect(r.type).toContain('application/problem+json');
  });

  it('rotateEndpointToken: when rotated, then the old token dies at once and the new one works', async () => {
    const { id, token } = await h.endpoint();
    const rotated = await h.client.rotateEndpointToken(id);
    expect(rotated.token).not.toBe(token);
    expect((await failure(h.client.getEndpoint(id, token))).status).toBe(401);
    await expect(h.client.getEndpoint(id, rotated.token)).resolves.toBeDefined();
    expect((await failure(h.client.rotateEndpointToken('never-existed'))).status).toBe(404);
  });

  it('deleteEndpoint: when deleted, then the token stops working and a second delete is 404', async () => {
    const { id, token } = await h.endpoint();
    await h.client.deleteEndpoint(id);
    expect((await failure(h.client.getEndpoint(id, token))).status).toBe(401);
    expect((await failure(h.client.deleteEndpoint(id))).status).toBe(404);
  });

  it('listEndpoints: pages through every ID in order', async () => {
    for (const id of ['list-a', 'list-b', 'list-c']) await h.client.createEndpoint(id);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await h.client.listEndpoints({ limit: 2, ...(cursor && { cursor }) });
      expect(page.ids.length).toBeLessThanOrEqual(2);
      seen.push(...page.ids);
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual([...seen].sort());
    expect(seen).toEqual(expect.arrayContaining(['list-a', 'list-b', 'list-c']));
  });

  it('when the admin token is wrong or missing, then 401', async () => {
    const wrong = createChatbridgeClient({ baseUrl: h.server.url, adminToken: 'not-the-admin-token-at-all' });
    expect((await failure(wrong.createEndpoint('x-1'))).status).toBe(401);
    const r = await raw(`${h.server.url}/admin/endpoints`);
    expect(r.status).toBe(401);
    expect(r.type).toContain('application/problem+json');
    expect(r.headers.get('www-authenticate')).toBe('Bearer realm="chatbridge-admin"');
    const wrongBearer = await raw(`${h.server.url}/admin/endpoints`, { headers: { authorization: 'Bearer wrong' } });
    const basic = await raw(`${h.server.url}/admin/endpoints`, { headers: { authorization: 'Basic abc' } });
    expect(wrongBearer.body.detail).toBe(r.body.detail);
    expect(basic.body.detail).toBe(r.body.detail);
  });

  it('when the server has no admin token configured, then every admin request is 401', async () => {
    const server = await startTestServer({ adminToken: null });
    try {
      const client = createChatbridgeClient({ baseUrl: server.url, adminToken: 'anything-at-all-123456' });
      expect((await failure(client.listEndpoints())).status).toBe(401);
      expect((await failure(client.createEndpoint('x-2'))).status).toBe(401);
    } finally {
      await server.close();
    }
  });
});

describe('health', () => {
  it('getLiveness and getReadiness answer 200 while serving', async () => {
    expect(await h.client.getLiveness()).toEqual({ status: 'ok', version: '1.0.0' });
    expect(await h.client.getReadiness()).toEqual({ ready: true, health: { status: 'ready', checks: { store: 'ok' } } });
  });

  it('getReadiness: when the server is draining, then 503 not_ready while liveness stays 200', async () => {
    h.server.readiness.draining = true;
    try {
      expect(await h.client.getReadiness()).toEqual({ ready: false, health: { status: 'not_ready', checks: { server: 'draining' } } });
      expect(await h.client.getLiveness()).toEqual({ status: 'ok', version: '1.0.0' });
    } finally {
      h.server.readiness.draining = false;
    }
  });
});

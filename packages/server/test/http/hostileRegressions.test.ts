// Regressions found by the property suite (test/property): each request once answered wrongly.
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { raw, useServer } from './harness.ts';

const h = useServer();

/** Sends a raw request line (for targets fetch() would normalise). */
function rawRequest(port: number, target: string, headers = ''): Promise<{ status: number; type: string; head: string; body: string }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () =>
      socket.write(`GET ${target} HTTP/1.1\r\nHost: x\r\n${headers}Connection: close\r\n\r\n`),
    );
    let data = '';
    socket.on('data', (c) => (data += c));
    socket.on('end', () => {
      const [head = '', body = ''] = data.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), type: /content-type: ([^\r]*)/i.exec(head)?.[1] ?? '', head, body });
    });
  });
}

describe('hostile input regressions', () => {
  it('when the path is not valid percent-encoded UTF-8, then 400 naming endpoint in the path', async () => {
    const { token } = await h.endpoint();
    for (const path of ['/%C3%28', '/update/%FF', '/admin/endpoints/%C3%28A']) {
      const r = await raw(`${h.server.url}${path}?token=${token}`, { method: path.startsWith('/update') ? 'POST' : 'GET' });
      expect(r.status).toBe(400);
      expect(r.body.errors).toEqual([expect.objectContaining({ parameter: 'endpoint', in: 'path' })]);
    }
  });

  it('when an unknown parameter name holds "." or "/" or is empty, then 400 names it exactly', async () => {
    const { id, token } = await h.endpoint();
    for (const [query, name] of [
      ['a/b=1', 'a/b'],
      ['.=1', '.'],
      ['=x', ''],
    ] as const) {
      const r = await raw(`${h.server.url}/${id}?token=${token}&${query}`);
      expect(r.status).toBe(400);
      expect(r.body.errors).toEqual([expect.objectContaining({ parameter: name, in: 'query' })]);
    }
  });

  it('when a parameter uses bracket notation, then 400 instead of being silently dropped', async () => {
    const { id, token } = await h.endpoint();
    const r = await raw(`${h.server.url}/update/${id}?token=${token}&message_content[__proto__]=x`, { method: 'POST' });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([expect.objectContaining({ parameter: 'message_content[__proto__]' })]);
  });

  it('when more than 1000 pairs are sent, then nothing after them is silently dropped', async () => {
    const { id, token } = await h.endpoint();
    const r = await raw(`${h.server.url}/update/${id}?${'&'.repeat(1000)}token=${token}&selfuse=maybe`, { method: 'POST' });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([expect.objectContaining({ parameter: 'selfuse' })]);
  });

  // A 128 KiB head holds ~20,000 keys; parsing, checking and logging them held the event loop for a
  // quarter of a second per unauthenticated request (and a quadratic check for 1.6 s).
  it('when a query holds more than 100 parameters, then 400 naming the query, before any of them is parsed; 100 are looked at one by one', async () => {
    const { id, token } = await h.endpoint();
    const keys = (n: number) => Array.from({ length: n }, (_, i) => `[k${i}`).join('&');
    const over = await raw(`${h.server.url}/update/${id}?token=${token}&${keys(100)}`, { method: 'POST' });
    expect(over.status).toBe(400);
    expect(over.body.errors).toEqual([{ parameter: 'query', in: 'query', message: 'holds more than 100 parameters' }]);
    const at = await raw(`${h.server.url}/update/${id}?token=${token}&${keys(99)}`, { method: 'POST' });
    expect(at.status).toBe(400);
    expect(at.body.errors[0]).toMatchObject({ parameter: '[k0', message: expect.stringContaining('bracket') });
  });

  it.each(['Infinity', '-Infinity', '1e400', '0x10', '1.5'])('when an integer parameter is %s, then 400 naming it', async (value) => {
    const list = await raw(`${h.server.url}/admin/endpoints?limit=${value}`, {
      headers: { authorization: `Bearer ${h.server.adminToken}` },
    });
    expect(list.status).toBe(400);
    expect(list.body.errors).toEqual([expect.objectContaining({ parameter: 'limit' })]);
  });

  it('when a body cannot be decoded (bad gzip), then 400 naming body', async () => {
    const r = await raw(`${h.server.url}/admin/endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.server.adminToken}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: '{"id":"x1"}',
    });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([expect.objectContaining({ parameter: 'body', in: 'body' })]);
    const ok = await raw(`${h.server.url}/admin/endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.server.adminToken}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync('{"id":"gzipped-1"}'),
    });
    expect(ok.status).toBe(201);
  });

  it('when the request target is absolute-form, then it is served; when unparsable or "*", then problem+json', async () => {
    expect((await rawRequest(h.server.port, `http://127.0.0.1/-/live`)).status).toBe(200);
    const bad = await rawRequest(h.server.port, 'http://[::1/-/ready');
    expect(bad.status).toBe(400);
    expect(bad.type).toContain('application/problem+json');
    // Answered before the app sees it, but with the security headers of every other answer.
    expect(bad.head).toMatch(/^cache-control: no-store\r?$/im);
    expect(bad.head).toMatch(/^x-content-type-options: nosniff\r?$/im);
    const star = await rawRequest(h.server.port, '*');
    expect(star.status).toBe(404);
    expect(star.type).toContain('application/problem+json');
  });

  it('when an Expect header asks for anything but 100-continue, then 417 problem+json with the headers of every answer', async () => {
    const r = await rawRequest(h.server.port, '/-/live', 'Expect: something-else\r\n');
    expect(r.status).toBe(417);
    expect(r.type).toContain('application/problem+json');
    expect(JSON.parse(r.body)).toMatchObject({ type: 'https://chatbridge.dev/problems#expectation-failed', status: 417 });
    expect(r.head).toMatch(/^cache-control: no-store\r?$/im);
    expect(r.head).toMatch(/^x-content-type-options: nosniff\r?$/im);
  });

  it('when dozens of bad parameters are sent, then the problem lists at most 25 of them', async () => {
    const { id, token } = await h.endpoint();
    const query = Array.from({ length: 90 }, (_, i) => `junk[${i}]=1`).join('&');
    const r = await raw(`${h.server.url}/${id}?token=${token}&${query}`);
    expect(r.status).toBe(400);
    expect(r.body.errors).toHaveLength(25);
    expect(r.body.detail).toContain('and 65 more');
  });
});

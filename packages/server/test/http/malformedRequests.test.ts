// Requests that Node's HTTP layer would answer itself (a missing Host, CONNECT) get problem documents
// with the security headers, like every other error.
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { useServer } from './harness.ts';

const h = useServer();

/** Sends `request` as it is on a fresh connection; resolves with everything the server sent before closing. */
async function exchange(request: string): Promise<string> {
  const socket = connect(Number(new URL(h.server.url).port), '127.0.0.1');
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  socket.once('connect', () => socket.write(request));
  await new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return text;
}

/** Status, headers (lower-case names) and parsed body of one HTTP/1.1 answer. */
function parse(text: string) {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = new Map(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  return {
    status: Number(statusLine.split(' ')[1]),
    headers,
    body: body ? (JSON.parse(body) as { type: string; detail: string; errors?: { parameter: string }[] }) : undefined,
  };
}

describe('requests Node would answer itself', () => {
  it('when an HTTP/1.1 request has no Host header, then 400 problem+json naming Host, with the security headers', async () => {
    const answer = parse(await exchange('GET /-/live HTTP/1.1\r\nConnection: close\r\n\r\n'));
    expect(answer.status).toBe(400);
    expect(answer.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    expect(answer.headers.get('cache-control')).toBe('no-store');
    expect(answer.body?.errors?.map((e) => e.parameter)).toEqual(['Host']);
  });

  it('when an HTTP/1.0 request has no Host header, then it is served (HTTP/1.0 does not require one)', async () => {
    expect(parse(await exchange('GET /-/live HTTP/1.0\r\n\r\n')).status).toBe(200);
  });

  it('when a client sends CONNECT, then 405 problem+json with the security headers, and the connection is closed', async () => {
    const answer = parse(await exchange('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'));
    expect(answer.status).toBe(405);
    expect(answer.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    expect(answer.body?.type).toBe('https://chatbridge.dev/problems#method-not-allowed');
  });

  it('when the request line is malformed, then 400 problem+json with the security headers', async () => {
    const answer = parse(await exchange('GET /-/live HTTP/1.1 extra\r\nHost: x\r\n\r\n'));
    expect(answer.status).toBe(400);
    expect(answer.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
  });
});

// Draining (server.ts's close()): no keep-alive connection that had work in flight at close() may hold
// the shutdown after its last answer, pipelined requests included.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { drainConnections, HALF_SENT_GRACE_MS } from '../../src/http/transport/drainConnections.ts';

let server: Server | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

/** A server as server.ts builds it: /slow answers when released, /stream sends its headers at once, the rest at once. */
async function start() {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let seen = 0;
  const s = createServer((req: IncomingMessage, res: ServerResponse) => {
    drain.track(req, res);
    seen++;
    if (req.url === '/slow') void released.then(() => res.end('slow'));
    else if (req.url === '/body') req.resume().on('end', () => res.end('read'));
    else if (req.url === '/stream') {
      res.write('a');
      void released.then(() => res.end('b'));
    } else res.end('fast');
  });
  s.keepAliveTimeout = 65_000;
  const drain = drainConnections(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  server = s;
  const close = () =>
    new Promise<void>((resolve) => {
      drain.begin();
      s.close(() => resolve());
      s.closeIdleConnections();
    });
  return { port: (s.address() as AddressInfo).port, release, seen: () => seen, close };
}

async function drainWith(requests: string[], expected: number) {
  const { port, release, seen, close } = await start();
  const socket = connect(port, '127.0.0.1');
  let answer = '';
  socket.on('data', (c: Buffer) => (answer += c.toString('latin1')));
  socket.on('error', () => undefined);
  const hungUp = new Promise<void>((r) => socket.on('close', () => r()));
  socket.write(requests.map((path) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`).join(''));
  const deadline = Date.now() + 2000;
  while (seen() < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  expect(seen()).toBe(expected);
  const closed = close().then(() => 'closed' as const);
  setTimeout(release, 50);
  const outcome = await Promise.race([closed, new Promise((r) => setTimeout(() => r('still open after 3 s'), 3000))]);
  await Promise.race([hungUp, new Promise((r) => setTimeout(r, 500))]);
  socket.destroy();
  return { outcome, answer };
}

describe('draining connections', () => {
  it('when a keep-alive request is in flight at close(), then its answer carries Connection: close and the server closes', async () => {
    const { outcome, answer } = await drainWith(['/slow'], 1);
    expect(outcome).toBe('closed');
    expect(answer.toLowerCase()).toContain('connection: close');
  });

  it('when a pipelined request was answered at close() while the one before it was not, then the server still closes promptly', async () => {
    const { outcome, answer } = await drainWith(['/slow', '/fast'], 2);
    expect(answer).toContain('slow');
    expect(answer).toContain('fast'); // answered, so sent (the old per-response Set dropped it)
    expect(outcome).toBe('closed');
  });

  it('when a response had sent its headers at close(), then its connection closes once it ends', async () => {
    const { outcome, answer } = await drainWith(['/stream'], 1);
    expect(answer).toContain('0\r\n\r\n');
    expect(outcome).toBe('closed');
  });

  it('when a request head is half sent at close(), then its connection is closed at once and the server closes', async () => {
    const { port, close } = await start();
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise<void>((r) => socket.once('connect', () => r()));
    const hungUp = new Promise<string>((r) => socket.once('close', () => r('hung up')));
    socket.write('GET /slow HTTP/1.1\r\nHost: x\r\nX-Half: '); // never finished
    await new Promise((r) => setImmediate(r));
    const idle = connect(port, '127.0.0.1'); // an idle connection, too
    idle.on('error', () => undefined);
    await new Promise<void>((r) => idle.once('connect', () => r()));
    const outcome = await Promise.race([
      close().then(() => 'closed'),
      new Promise((r) => setTimeout(() => r('still open after 3 s'), 3000)),
    ]);
    expect(outcome).toBe('closed');
    expect(await hungUp).toBe('hung up');
    idle.destroy();
  });

  it('when the rest of a request body arrives within its moment after close(), then it is answered with Connection: close and the server closes', async () => {
    const { port, seen, close } = await start();
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (c: Buffer) => (answer += c.toString('latin1')));
    socket.on('error', () => undefined);
    const hungUp = new Promise<void>((r) => socket.once('close', () => r()));
    await new Promise<void>((r) => socket.once('connect', () => r()));
    socket.write('POST /body HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nConnection: keep-alive\r\n\r\nabc');
    while (seen() < 1) await new Promise((r) => setImmediate(r));
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    let closed = false;
    const closing = close().then(() => (closed = true));
    try {
      await vi.advanceTimersByTimeAsync(HALF_SENT_GRACE_MS - 10);
    } finally {
      vi.useRealTimers();
    }
    socket.write('defghij');
    const outcome = await Promise.race([
      closing.then(() => 'closed'),
      new Promise((r) => setTimeout(() => r('still open after 3 s'), 3000)),
    ]);
    expect(outcome).toBe('closed');
    expect(closed).toBe(true);
    await hungUp;
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer.toLowerCase()).toContain('connection: close');
    expect(answer.endsWith('read')).toBe(true);
  });

  it('when a request body is still arriving at close(), then it gets a moment, is dropped, and the server closes', async () => {
    const { port, seen, close } = await start();
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise<void>((r) => socket.once('connect', () => r()));
    socket.write('POST /body HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc'); // 7 bytes never come
    while (seen() < 1) await new Promise((r) => setImmediate(r)); // the head is parsed and the request dispatched
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    try {
      let closed = false;
      const closing = close().then(() => (closed = true));
      await vi.advanceTimersByTimeAsync(HALF_SENT_GRACE_MS - 10);
      expect(closed).toBe(false); // still within its moment
      await vi.advanceTimersByTimeAsync(20);
      vi.useRealTimers();
      const outcome = await Promise.race([
        closing.then(() => 'closed'),
        new Promise((r) => setTimeout(() => r('still open after 3 s'), 3000)),
      ]);
      expect(outcome).toBe('closed');
    } finally {
      vi.useRealTimers();
      socket.destroy();
    }
  });
});

// Connection fairness: one client address cannot take every connection, and the probes and metrics
// have a listener of their own that a full public listener does not block.
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../src/testing.ts';
import { raw } from './harness.ts';

let server: TestServer | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await server?.close();
  server = undefined;
});

/**
 * Opens a connection from `localAddress` and sends GET /-/live on it: 'answered' when the server
 * answers 200, 'refused' when it closes the connection unanswered. The connection stays open.
 */
async function liveOver(url: string, localAddress = '127.0.0.1'): Promise<'answered' | 'refused'> {
  const socket = connect({ port: Number(new URL(url).port), host: '127.0.0.1', localAddress });
  sockets.push(socket);
  socket.on('error', () => undefined);
  return new Promise((resolve) => {
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (text.includes('\r\n\r\n')) resolve(text.startsWith('HTTP/1.1 200') ? 'answered' : 'refused');
    });
    socket.once('close', () => resolve('refused'));
    socket.once('connect', () => socket.write('GET /-/live HTTP/1.1\r\nHost: x\r\n\r\n'));
  });
}

describe('connection fairness', () => {
  it('when one address holds its cap of connections, then its next is refused while another address is served', async () => {
    server = await startTestServer({ connections: { max: 100, perAddress: 2 } });
    expect(await liveOver(server.url)).toBe('answered');
    expect(await liveOver(server.url)).toBe('answered');
    expect(await liveOver(server.url)).toBe('refused'); // a third from 127.0.0.1
    expect(await liveOver(server.url, '127.0.0.2')).toBe('answered');
    expect(await liveOver(server.url, '127.0.0.2')).toBe('answered');
  });

  it('when a trusted proxy holds many connections, then they are not capped per address, and other addresses still are', async () => {
    server = await startTestServer({ connections: { max: 100, perAddress: 1 }, trustProxy: '127.0.0.1' });
    expect(await liveOver(server.url)).toBe('answered');
    expect(await liveOver(server.url)).toBe('answered'); // the proxy's second
    expect(await liveOver(server.url, '127.0.0.2')).toBe('answered');
    expect(await liveOver(server.url, '127.0.0.2')).toBe('refused');
  });

  it('when the public listener holds its total of connections, then the management port still answers the probes and the metrics', async () => {
    server = await startTestServer({ connections: { max: 2, perAddress: 0 }, managementPort: 0 });
    expect(server.managementUrl).toBeDefined();
    expect(await liveOver(server.url)).toBe('answered');
    expect(await liveOver(server.url, '127.0.0.2')).toBe('answered');
    expect(await liveOver(server.url, '127.0.0.3')).toBe('refused'); // full
    for (const path of ['/-/live', '/-/ready', '/-/metrics']) expect((await fetch(`${server.managementUrl}${path}`)).status).toBe(200);
    expect(await liveOver(server.managementUrl!)).toBe('answered');
  });

  it('when the management port is asked for an operation, then 404 problem+json with the security headers, and nothing runs', async () => {
    server = await startTestServer({ managementPort: 0 });
    const token = await server.provision('private');
    for (const path of [`/private?token=${token}`, '/admin/endpoints', '/']) {
      const r = await raw(`${server.managementUrl}${path}`);
      expect([path, r.status, r.type]).toEqual([path, 404, 'application/problem+json; charset=utf-8']);
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
      expect(r.body.type).toBe('https://chatbridge.dev/problems#not-found');
    }
  });
});

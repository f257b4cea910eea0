import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createChatbridgeClient } from '@chatbridge/client';
import { createLogger } from '../../src/logger.ts';
import { SERVING_BUSY_TIMEOUT_MS } from '../../src/store/open.ts';
import { SqliteEndpointStore } from '../../src/store/sqlite/store.ts';
import { startTestServer } from '../../src/testing.ts';
import { raw } from './harness.ts';

/** A log sink that keeps every line written to it. */
function captureLines() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, sink };
}

describe('request logging', () => {
  it('when requests carry endpoint and admin tokens, then no log line contains either, and request ids are echoed', async () => {
    const { lines, sink } = captureLines();
    const server = await startTestServer({ logger: createLogger('debug', sink) });
    try {
      const client = createChatbridgeClient({ baseUrl: server.url, adminToken: server.adminToken });
      const { token } = await client.createEndpoint('logged-1');
      await client.getEndpoint('logged-1', token);
      await client.updateEndpoint('logged-1', token, { message_content: 'hello' });
      await client.getEndpoint('logged-1', `${token.slice(0, -1)}x`).catch(() => undefined);
      // The token under a percent-encoded key still authenticates; a webhook URL travels as a value.
      const webhook = 'https://chat-a.example.com/api/webhooks/123456789012345678/webhook-secret-part';
      expect((await raw(`${server.url}/logged-1?%74oken=${token}`)).status).toBe(200);
      expect(
        (await raw(`${server.url}/update/logged-1?token=${token}&channel_chat_a=111111&webhook_chat_a=${webhook}`, { method: 'POST' }))
          .status,
      ).toBe(200);
      const rotated = await client.rotateEndpointToken('logged-1');
      const r = await fetch(`${server.url}/-/live`, { headers: { 'x-request-id': 'trace-abc-123' } });
      expect(r.headers.get('x-request-id')).toBe('trace-abc-123');
      // A token sent as the request id (a bot's mistake), whole, prefixed or without its own prefix,
      // is neither echoed nor logged; a W3C trace id is kept.
      for (const given of [rotated.token, `x${rotated.token}`, rotated.token.slice(4)]) {
        const asId = await fetch(`${server.url}/-/live`, { headers: { 'x-request-id': given } });
        expect(asId.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      }
      const trace = '4bf92f3577b34da6a3ce929d0e0e4736';
      expect((await fetch(`${server.url}/-/live`, { headers: { 'x-request-id': trace } })).headers.get('x-request-id')).toBe(trace);
      expect((await raw(`${server.url}/-/live`)).status).toBe(200);

      const log = lines.join('');
      expect(lines.length).toBeGreaterThan(5);
      for (const secret of [token, rotated.token, server.adminToken, token.slice(4, 40), 'webhook-secret-part', 'api/webhooks']) {
        expect(log).not.toContain(secret);
      }
      expect(log).toContain('token=[REDACTED]');
      expect(log).toContain('trace-abc-123');
    } finally {
      await server.close();
    }
  });
});

describe('request logging of HEAD', () => {
  it('when a HEAD request is answered as its GET, then its log line names the method as sent', async () => {
    const { lines, sink } = captureLines();
    const server = await startTestServer({ logger: createLogger('info', sink) });
    try {
      const head = await raw(`${server.url}/-/live`, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(await raw(`${server.url}/-/live`)).toMatchObject({ status: 200 });
      await new Promise((resolve) => setTimeout(resolve, 50)); // the log line is written when the response closes
      const logged = lines.map((l) => JSON.parse(l) as { req?: { method: string; url: string } }).filter((l) => l.req?.url === '/-/live');
      expect(logged.map((l) => l.req!.method)).toEqual(['HEAD', 'GET']);
    } finally {
      await server.close();
    }
  });
});

describe('request logging of abandoned requests', () => {
  it('when the client leaves before any answer, then the line and the metrics say 499, not 200', async () => {
    const { lines, sink } = captureLines();
    const file = join(mkdtempSync(join(tmpdir(), 'chatbridge-abandoned-')), 'store.sqlite');
    // As the server opens it: the update waits for the lock on timers, so the event loop sees the
    // client leave (with the CLI's blocking busy_timeout it could answer 503 first on a slow machine).
    const store = new SqliteEndpointStore(file, { busyTimeoutMs: SERVING_BUSY_TIMEOUT_MS });
    const server = await startTestServer({ logger: createLogger('info', sink), store });
    const other = new DatabaseSync(file);
    try {
      const token = await server.provision('abandoned-1');
      other.exec('BEGIN IMMEDIATE'); // the update waits for the write lock, unanswered
      const gaveUp = fetch(`${server.url}/update/abandoned-1?token=${token}&beta=true`, {
        method: 'POST',
        signal: AbortSignal.timeout(300),
      });
      await expect(gaveUp).rejects.toThrow();
      await new Promise((resolve) => setTimeout(resolve, 100)); // the line is written when the connection closes
      other.exec('ROLLBACK');
      const logged = lines
        .map((l) => JSON.parse(l) as { req?: { url: string }; res?: { statusCode: number } })
        .filter((l) => l.req?.url.startsWith('/update/'));
      expect(logged.map((l) => l.res!.statusCode)).toEqual([499]);
      expect(await (await fetch(`${server.url}/-/metrics`)).text()).toMatch(
        /^chatbridge_http_requests_total\{operation="updateEndpoint",status="499"\} 1$/m,
      );
    } finally {
      other.close();
      await server.close();
    }
  });
});

// The real process: a management listener when asked for, and a SIGTERM that connections with nothing
// to answer do not hold.
import { existsSync, mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startServerProcess } from './processes.ts';

describe('shutdown', () => {
  it('when SIGTERM arrives with a half-sent request and an idle connection open, then the process closes the store and exits 0 well within its deadline', async () => {
    const sqlite = join(mkdtempSync(join(tmpdir(), 'chatbridge-shutdown-')), 'store.sqlite');
    const server = await startServerProcess({ CHATBRIDGE_SQLITE_PATH: sqlite });
    expect((await fetch(`${server.url}/-/ready`)).status).toBe(200);
    expect(existsSync(`${sqlite}-wal`)).toBe(true); // the store is open in WAL mode
    const { port } = new URL(server.url);
    const half = connect(Number(port), '127.0.0.1');
    const idle = connect(Number(port), '127.0.0.1');
    for (const socket of [half, idle]) {
      socket.on('error', () => undefined);
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    }
    half.write('GET /-/live HTTP/1.1\r\nHost: x\r\nX-Never-Finished: '); // the head never ends
    const halfClosed = new Promise<void>((resolve) => half.once('close', () => resolve()));
    const signalled = Date.now();
    server.child.kill('SIGTERM');
    const { code } = await server.exited;
    const took = Date.now() - signalled;
    await halfClosed;
    expect(code).toBe(0);
    // The deadline is 10 s: a half-sent head must not hold the shutdown until then.
    expect(took).toBeLessThan(5_000);
    expect(server.log()).toContain('"msg":"stopped"');
    // The store was closed: SQLite checkpoints the log into the database and deletes it on close.
    expect(existsSync(`${sqlite}-wal`)).toBe(false);
    idle.destroy();
  }, 30_000);
});

describe('management port', () => {
  it('when CHATBRIDGE_MANAGEMENT_PORT is set, then the process logs its URL and serves the probes there, and nothing else', async () => {
    const sqlite = join(mkdtempSync(join(tmpdir(), 'chatbridge-management-')), 'store.sqlite');
    const server = await startServerProcess({ CHATBRIDGE_SQLITE_PATH: sqlite, CHATBRIDGE_MANAGEMENT_PORT: '0' });
    try {
      const management = /"managementUrl":"(http:\/\/[^"]+)"/.exec(server.log())?.[1];
      expect(management).toBeDefined();
      expect(management).not.toBe(server.url);
      expect((await fetch(`${management}/-/ready`)).status).toBe(200);
      expect((await fetch(`${management}/admin/endpoints`)).status).toBe(404);
    } finally {
      server.child.kill('SIGTERM');
      expect((await server.exited).code).toBe(0);
    }
  }, 30_000);
});

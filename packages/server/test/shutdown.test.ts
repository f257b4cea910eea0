// SIGTERM on the real process: connections that have nothing to answer do not hold the shutdown.
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

// What an operator sees when the server cannot start for a reason of theirs: one line naming it and
// exit code 1, not a driver's stack trace.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startServerProcess } from './processes.ts';
import { createScratchDatabase } from './store/pgScratch.ts';

const MAIN = join(import.meta.dirname, '..', 'src', 'main.ts');
const DATABASE_URL = process.env.DATABASE_URL;

function start(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [MAIN], {
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'warn', CHATBRIDGE_STORE: 'sqlite', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, output })));
}

describe.runIf(!!DATABASE_URL)('start-up against a PostgreSQL that cannot be used', () => {
  it('when the database does not exist, or the server refuses the connection, then one line names it and the process exits 1', async () => {
    const missing = new URL(DATABASE_URL!);
    missing.pathname = '/chatbridge_no_such_database';
    const refused = new URL(DATABASE_URL!);
    refused.port = '1'; // nothing listens there
    for (const [url, says] of [
      [missing, 'does not exist'],
      [refused, 'ECONNREFUSED'],
    ] as const) {
      const { code, output } = await start({ CHATBRIDGE_STORE: 'postgres', DATABASE_URL: url.toString() });
      expect(code).toBe(1);
      expect(output).toMatch(new RegExp(`^chatbridge failed to start: the store cannot be opened: .*${says}`, 'm'));
      expect(output).not.toMatch(/^\s+at /m); // no stack trace
    }
  }, 30_000);
});

describe.runIf(!!DATABASE_URL)('start-up with DATABASE_URL alone', () => {
  it('when DATABASE_URL is set and CHATBRIDGE_STORE is not, then the server runs on PostgreSQL and its log names the store, the database and the version, never the password', async () => {
    const db = await createScratchDatabase(DATABASE_URL!);
    try {
      const url = new URL(db.url);
      url.username ||= 'postgres';
      url.password = 'never-logged-pw'; // the test server trusts local connections: any password passes
      const server = await startServerProcess({ CHATBRIDGE_STORE: '', DATABASE_URL: url.toString() });
      server.child.kill('SIGTERM');
      await server.exited;
      const started = server
        .log()
        .split('\n')
        .map((line) => (line.startsWith('{') ? (JSON.parse(line) as Record<string, unknown>) : {}))
        .find((l) => 'url' in l)!;
      expect(started).toMatchObject({
        store: 'postgres',
        database: `${url.hostname}:${url.port || '5432'}${url.pathname}`,
        version: '1.0.0',
      });
      expect(server.log()).not.toContain('never-logged-pw');
    } finally {
      await db.drop();
    }
  }, 30_000);
});

describe('start-up where the server cannot listen', () => {
  it('when the port is taken or the address is not on this machine, then one line names HOST and PORT, not the store, and the process exits 1', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = String((taken.address() as AddressInfo).port);
    try {
      const dir = mkdtempSync(join(tmpdir(), 'chatbridge-listen-'));
      for (const [env, says] of [
        [{ HOST: '127.0.0.1', PORT: port }, 'EADDRINUSE'],
        [{ HOST: '192.0.2.1', PORT: '0' }, 'EADDRNOTAVAIL'], // TEST-NET-1: on no interface here
      ] as const) {
        const { code, output } = await start({ ...env, CHATBRIDGE_SQLITE_PATH: join(dir, 'store.sqlite') });
        expect(code).toBe(1);
        expect(output).toMatch(
          new RegExp(`^chatbridge failed to start: cannot listen on ${env.HOST}:${env.PORT} \\(check HOST and PORT\\): .*${says}`, 'm'),
        );
        expect(output).not.toContain('store');
        expect(output).not.toMatch(/^\s+at /m); // no stack trace
      }
    } finally {
      taken.close();
    }
  }, 30_000);
});

describe('start-up warnings', () => {
  it('when CHATBRIDGE_TRUST_PROXY=true, then the server starts and warns that clients can forge their address; with a hop count it does not', async () => {
    const logs: string[] = [];
    for (const trust of ['true', '1']) {
      const sqlite = join(mkdtempSync(join(tmpdir(), 'chatbridge-startup-')), 'store.sqlite');
      const server = await startServerProcess({ CHATBRIDGE_TRUST_PROXY: trust, CHATBRIDGE_SQLITE_PATH: sqlite });
      server.child.kill('SIGTERM');
      await server.exited;
      logs.push(server.log());
    }
    expect(logs[0]).toContain('CHATBRIDGE_TRUST_PROXY=true trusts every X-Forwarded-For entry');
    expect(logs[1]).not.toContain('X-Forwarded-For');
  }, 30_000);
});

describe('shutdown with a dead log reader', () => {
  it('when stdout is a pipe whose reader has gone, then SIGTERM still ends the process promptly', async () => {
    const sqlite = join(mkdtempSync(join(tmpdir(), 'chatbridge-epipe-')), 'store.sqlite');
    const child = spawn(process.execPath, [MAIN], {
      env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', CHATBRIDGE_STORE: 'sqlite', CHATBRIDGE_SQLITE_PATH: sqlite },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const exited = new Promise<number | string | null>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)));
    let out = '';
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        if (out.includes('"url"')) resolve();
      });
    });
    child.stdout.destroy(); // the log shipper dies: the next write gets EPIPE
    child.kill('SIGTERM');
    const code = await Promise.race([exited, new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 8000))]);
    if (code === 'still running') child.kill('SIGKILL');
    expect(code).toBe(0);
  }, 20_000);
});

describe('shutdown with a drain window', () => {
  it('when CHATBRIDGE_DRAIN_SECONDS is set, then after SIGTERM the server keeps serving with /-/ready at 503 for that long, then exits 0', async () => {
    const sqlite = join(mkdtempSync(join(tmpdir(), 'chatbridge-drain-')), 'store.sqlite');
    const server = await startServerProcess({ CHATBRIDGE_DRAIN_SECONDS: '1.5', CHATBRIDGE_SQLITE_PATH: sqlite });
    expect((await fetch(`${server.url}/-/ready`)).status).toBe(200);
    const signalled = Date.now();
    server.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const ready = await fetch(`${server.url}/-/ready`); // a new connection is still accepted
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: 'not_ready', checks: { server: 'draining' } });
    expect((await fetch(`${server.url}/-/live`)).status).toBe(200);
    expect((await server.exited).code).toBe(0);
    expect(Date.now() - signalled).toBeGreaterThanOrEqual(1500);
  }, 30_000);
});

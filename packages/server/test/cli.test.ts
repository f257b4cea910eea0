// The operator's path: the CLI provisions on the configured store, and a newcomer follows the
// server's start-up log to read their own endpoint.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteEndpointStore } from '../src/store/sqlite/store.ts';
import { hashToken } from '../src/tokens.ts';

const SRC = join(import.meta.dirname, '..', 'src');
const run = promisify(execFile);

function envFor(dir: string, extra: Record<string, string> = {}) {
  return { ...process.env, CHATBRIDGE_STORE: 'sqlite', CHATBRIDGE_SQLITE_PATH: join(dir, 'store.sqlite'), LOG_LEVEL: 'info', ...extra };
}

async function cli(dir: string, ...args: string[]) {
  return cliWithEnv(dir, {}, ...args);
}

async function cliWithEnv(dir: string, env: Record<string, string>, ...args: string[]) {
  return cliIn(process.cwd(), envFor(dir, env), ...args);
}

/** The CLI run in `cwd` with exactly `env`. */
async function cliIn(cwd: string, env: NodeJS.ProcessEnv, ...args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(SRC, 'cli.ts'), ...args], { cwd, env });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

const tokenIn = (stdout: string) => /^token: (\S+)$/m.exec(stdout)?.[1] ?? '';

/** The CLI with `input` on its standard input. */
function cliWithInput(dir: string, input: string, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [join(SRC, 'cli.ts'), ...args], { env: envFor(dir) });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += String(c)));
  child.stderr.on('data', (c) => (stderr += String(c)));
  child.stdin.end(input);
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

describe('chatbridge CLI', () => {
  it('when create, show, list, rotate and delete are run, then each acts on the configured store', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chatbridge-cli-'));
    const created = await cli(dir, 'create', 'community-1');
    expect(created.code).toBe(0);
    expect(tokenIn(created.stdout)).toMatch(/^[A-Za-z0-9_-]{71,85}$/);
    expect(created.stdout).toContain('curl "http://127.0.0.1:8080/community-1?token=');

    expect((await cli(dir, 'create', 'community-1')).code).toBe(1);
    await cli(dir, 'create', 'community-2');
    expect((await cli(dir, 'list')).stdout.trim().split('\n')).toEqual(['community-1', 'community-2']);
    expect((await cli(dir, 'list', '--limit', '1')).stderr).toContain('--cursor community-1');

    const shown = await cli(dir, 'show', 'community-1');
    expect(JSON.parse(shown.stdout).meta.trigger).toBe(false);

    const rotated = await cli(dir, 'rotate', 'community-1');
    expect(tokenIn(rotated.stdout)).not.toBe(tokenIn(created.stdout));

    expect((await cli(dir, 'delete', 'community-1')).code).toBe(0);
    expect((await cli(dir, 'show', 'community-1')).code).toBe(1);
  });

  it("when an endpoint is created with --existing-token, then only that token's digest is stored and the token is not printed", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chatbridge-cli-'));
    const existing = `legacy_${'Ab9-_'.repeat(15)}`; // 82 characters, not one the server would issue
    const created = await cliWithInput(dir, `${existing}\n`, 'create', 'migrated-1', '--existing-token');
    expect([created.code, created.stderr]).toEqual([0, '']);
    expect(created.stdout).not.toContain(existing);
    const store = new SqliteEndpointStore(join(dir, 'store.sqlite'));
    try {
      expect(Buffer.from((await store.endpoints.get('migrated-1'))!.tokenHash)).toEqual(hashToken(existing));
    } finally {
      await store.close();
    }
    for (const bad of ['too-short', `${'a'.repeat(75)}.`]) {
      const refused = await cliWithInput(dir, `${bad}\n`, 'create', 'migrated-2', '--existing-token');
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('71 to 85 characters');
    }
    // A token wrapped onto two lines, blanks around it, or nothing: refused, not cut to fit.
    for (const input of [`${existing.slice(0, 76)}\n${existing.slice(76)}\n`, `  ${existing}  \n`, '', '\n']) {
      const refused = await cliWithInput(dir, input, 'create', 'migrated-2', '--existing-token');
      expect([refused.code, refused.stderr]).toEqual([1, expect.stringContaining('alone, on one line')]);
    }
    // Pasted onto the command line by mistake: refused without echoing it.
    const pasted = await cliWithInput(dir, '', 'create', 'migrated-2', '--existing-token', existing);
    expect(pasted.code).not.toBe(0);
    expect(pasted.stderr).not.toContain(existing);
    const issued = tokenIn((await cli(dir, 'create', 'issued-1')).stdout);
    const copied = await cliWithInput(dir, `${issued}\n`, 'create', 'migrated-3', '--existing-token');
    expect([copied.code, copied.stderr]).toEqual([1, expect.stringContaining('chatbridge issued')]);
    expect((await cli(dir, 'list')).stdout.trim().split('\n')).toEqual(['issued-1', 'migrated-1']);
  });

  it('when HOST is an IPv6 or wildcard address, or PORT is 0, then the printed curl line is still a working URL', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chatbridge-cli-'));
    const cases = [
      [{ HOST: '::', PORT: '8090' }, 'http://[::1]:8090/'],
      [{ HOST: '::1', PORT: '8090' }, 'http://[::1]:8090/'],
      [{ HOST: '0.0.0.0', PORT: '8090' }, 'http://127.0.0.1:8090/'],
      [{ HOST: '127.0.0.1', PORT: '0' }, 'http://127.0.0.1:<port>/'],
    ] as const;
    for (const [i, [env, url]] of cases.entries()) {
      const created = await cliWithEnv(dir, env, 'create', `url-${i}`);
      expect(created.stdout).toContain(`curl "${url}url-${i}?token=`);
    }
  });

  it('when an argument is invalid, then it exits non-zero with a message and changes nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chatbridge-cli-'));
    const bad = await cli(dir, 'create', 'bad id!');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('endpoint ID');
    expect((await cli(dir, 'list')).stdout).toBe('');
  });
});

/** The process environment without the settings a test gives through chatbridge.env instead. */
function environmentWithout(...names: string[]): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, CHATBRIDGE_STORE: 'sqlite', LOG_LEVEL: 'info' };
  for (const name of names) delete env[name];
  return env;
}

/** A port that was free a moment ago (for a server that must listen on a port known in advance). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe('the CLI reads the configuration the server reads', () => {
  let server: ChildProcess | undefined;
  afterEach(() => {
    server?.kill('SIGTERM');
  });

  it('when --version is given, then it prints the version of the packages', async () => {
    const result = await cliIn(process.cwd(), process.env, '--version');
    const root = join(SRC, '..', '..', '..');
    const manifests = [
      'package.json',
      'packages/api/package.json',
      'packages/client/package.json',
      'packages/server/package.json',
      'tests/package.json',
    ];
    const versions = manifests.map((m) => (JSON.parse(readFileSync(join(root, m), 'utf8')) as { version: string }).version);
    expect(new Set(versions)).toEqual(new Set(['1.0.0'])); // one version for the whole release
    const version = versions[0];
    expect([result.code, result.stdout.trim()]).toEqual([0, version]);
  });

  it('when PORT and HOST are set in chatbridge.env, not in the shell, then the curl line the CLI prints reaches the server started beside it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chatbridge-envfile-'));
    const port = await freePort();
    writeFileSync(
      join(dir, 'chatbridge.env'),
      `# shared by the server and the CLI\nHOST=127.0.0.1\nPORT=${port}\nCHATBRIDGE_SQLITE_PATH=${join(dir, 'store.sqlite')}\n`,
    );
    const env = environmentWithout('PORT', 'HOST', 'CHATBRIDGE_SQLITE_PATH', 'CHATBRIDGE_PUBLIC_URL', 'CHATBRIDGE_ENV_FILE');
    server = spawn(process.execPath, [join(SRC, 'main.ts')], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    server.stdout!.on('data', (c: Buffer) => (log += c.toString()));
    for (let waited = 0; !log.includes('listening on') && waited < 15_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
    expect(log).toContain(`"url":"http://127.0.0.1:${port}"`);

    const created = await cliIn(dir, env, 'create', 'shared-config');
    expect(created.code).toBe(0);
    const curl = /curl "([^"]+)"/.exec(created.stdout)?.[1] ?? '';
    expect(curl.startsWith(`http://127.0.0.1:${port}/shared-config?token=`)).toBe(true);
    expect((await fetch(curl)).status).toBe(200); // the same store, at the printed address
  });

  it('when CHATBRIDGE_PUBLIC_URL is set, then the curl line names it instead of HOST and PORT', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chatbridge-cli-'));
    const created = await cliWithEnv(
      dir,
      { CHATBRIDGE_PUBLIC_URL: 'https://bridge.example.com/', HOST: '0.0.0.0', PORT: '8090' },
      'create',
      'public',
    );
    expect(created.stdout).toContain('curl "https://bridge.example.com/public?token=');
  });

  it('when CHATBRIDGE_ENV_FILE names no file, then it exits 1 naming the setting and changes nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chatbridge-cli-'));
    const missing = await cliWithEnv(dir, { CHATBRIDGE_ENV_FILE: join(dir, 'nope.env') }, 'create', 'x');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('CHATBRIDGE_ENV_FILE');
    expect((await cli(dir, 'list')).stdout).toBe('');
  });
});

describe('newcomer path', () => {
  let server: ChildProcess | undefined;
  afterEach(() => {
    server?.kill('SIGTERM');
  });

  it('when the server starts on an empty store, then its log says how to create and read an endpoint, and that works', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chatbridge-newcomer-'));
    server = spawn(process.execPath, [join(SRC, 'main.ts')], { env: envFor(dir, { PORT: '0' }), stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no start-up log: ${log}`)), 15_000);
      server!.stdout!.on('data', (chunk: Buffer) => {
        log += chunk.toString();
        const m = /"url":"(http:\/\/[^"]+)"/.exec(log);
        // Log lines are written one by one and may arrive in separate chunks: wait for the last start-up line.
        if (m && log.includes('No endpoints yet') && log.includes('Admin API disabled')) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
    });
    expect(log).toContain('pnpm chatbridge create my-community');
    expect(log).toContain('Admin API disabled');

    const created = await cli(dir, 'create', 'my-community');
    const token = tokenIn(created.stdout);
    const response = await fetch(`${url}/my-community?token=${token}`);
    expect(response.status).toBe(200);
    const record = (await response.json()) as { config: { channels: unknown } };
    expect(record.config.channels).toEqual({ chat_a: [], chat_b: [], chat_c: [], chat_d: [] });
    expect(log).not.toContain(token);
  });

  it('when the configuration is invalid, then the server refuses to start and names the setting', async () => {
    const result: { code: number; stderr: string } = await run(process.execPath, [join(SRC, 'main.ts')], {
      env: { ...process.env, PORT: 'eighty' },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('PORT');
  });
});

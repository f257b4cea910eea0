// The server's and the CLI's entry points as an operator meets them: the Node version checked before
// anything else, --help and --version, refused arguments, and errors as one line.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { VERSION } from '../src/version.ts';

const SRC = join(import.meta.dirname, '..', 'src');
const MAIN = join(SRC, 'main.ts');
const CLI = join(SRC, 'cli.ts');
const runFile = promisify(execFile);
const scratch = mkdtempSync(join(tmpdir(), 'chatbridge-entry-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Loaded before the entry point (`node --import`): this Node says it is 20.1.0. */
const OLD_NODE = `data:text/javascript,${encodeURIComponent("Object.defineProperty(process, 'version', { value: 'v20.1.0' });")}`;

async function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const environment: NodeJS.ProcessEnv = { ...process.env, PORT: '0', LOG_LEVEL: 'info', CHATBRIDGE_STORE: 'sqlite', ...env };
  environment.CHATBRIDGE_SQLITE_PATH ??= join(scratch, 'store.sqlite');
  try {
    const { stdout, stderr } = await runFile(process.execPath, args, { cwd: scratch, env: environment, timeout: 20_000 });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

const lines = (text: string) => text.split('\n').filter((l) => l !== '');

describe('the server entry point', () => {
  it('when run with --version or -V, then it prints the version and exits 0', async () => {
    for (const flag of ['--version', '-V']) expect(await run([MAIN, flag])).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
  });

  it('when run with --help, then it prints how it is configured and exits 0 without starting', async () => {
    const help = await run([MAIN, '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: main.js [options]');
    expect(help.stdout).toContain('--version');
    expect(help.stdout).toContain('CHATBRIDGE_STORE');
    expect(help.stdout).not.toContain('listening');
  });

  it('when run with a flag or an argument it does not know, then one line says so, it exits 2, and no server starts', async () => {
    for (const args of [['--port', '9000'], ['--verbose'], ['serve']]) {
      const refused = await run([MAIN, ...args]);
      expect(refused.code).toBe(2);
      expect(refused.stdout).toBe('');
      expect(lines(refused.stderr)).toHaveLength(1);
      expect(refused.stderr).toMatch(/^chatbridge: (unknown option '--(port|verbose)'|too many arguments.*serve).*\(see --help\)\n$/);
    }
  });

  it('when Node is older than engines.node, then one line names the Node needed and how to get it, and it exits 1', async () => {
    for (const entry of [MAIN, CLI]) {
      const old = await run(['--import', OLD_NODE, entry, ...(entry === CLI ? ['list'] : [])]);
      expect(old.code).toBe(1);
      expect(old.stdout).toBe('');
      expect(lines(old.stderr)).toEqual([
        expect.stringMatching(/^chatbridge needs Node\.js 24\.0\.0 or later .*this is Node\.js v20\.1\.0\. Install Node\.js 24 /),
      ]);
    }
  });
});

describe('the CLI entry point', () => {
  it('when the database cannot be reached, then one line names it, and the stack trace only with --debug or CHATBRIDGE_DEBUG=1', async () => {
    const down = { CHATBRIDGE_STORE: 'postgres', DATABASE_URL: 'postgres://chatbridge@127.0.0.1:1/chatbridge' }; // nothing listens on port 1
    const plain = await run([CLI, 'list'], down);
    expect(plain.code).toBe(1);
    expect(lines(plain.stderr)).toEqual([
      expect.stringMatching(/^chatbridge: the store cannot be opened: .*ECONNREFUSED/),
      '(run with --debug, or CHATBRIDGE_DEBUG=1, for the stack trace)',
    ]);
    for (const debug of [await run([CLI, '--debug', 'list'], down), await run([CLI, 'list'], { ...down, CHATBRIDGE_DEBUG: '1' })]) {
      expect(debug.code).toBe(1);
      expect(debug.stderr).toMatch(/^chatbridge: the store cannot be opened: /);
      expect(debug.stderr).toMatch(/^\s+at /m);
    }
  });

  it('when CHATBRIDGE_SQLITE_PATH names a folder that does not exist, then the CLI and the server refuse it, naming the path, and create nothing', async () => {
    const path = join(scratch, 'no-such-folder', 'store.sqlite');
    for (const args of [[CLI, 'list'], [MAIN]]) {
      const refused = await run(args, { CHATBRIDGE_SQLITE_PATH: path });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`CHATBRIDGE_SQLITE_PATH=${path}: the folder ${join(scratch, 'no-such-folder')} does not exist`);
      expect(refused.stderr).not.toMatch(/^\s+at /m);
    }
    expect(existsSync(join(scratch, 'no-such-folder'))).toBe(false);
    expect((await run([CLI, 'list'], { CHATBRIDGE_SQLITE_PATH: join(scratch, 'store.sqlite') })).code).toBe(0);
  });
});

// The self-contained deployable (`pnpm deploy:bundle`): built into a folder outside the checkout and
// started there with plain `node` as an unprivileged user (nobody, when the tests run as root, as the
// systemd unit runs it as its own user), it serves; its files are readable by any user; its entry
// points answer --help and --version, refuse unknown flags and check the Node version; a browser (Debian's chromium, driven by playwright-core)
// opens its home page and follows the link to the docs it serves, which render from the server's own
// bytes alone, under the page's Content-Security-Policy.
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './chromium.ts';
import { startedServer } from './startedServer.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const VERSION = '1.0.0';

let scratch = '';
let bundle = '';
let server: ChildProcess | undefined;
let url = '';
let browser: Browser | undefined;
let log: () => string = () => '';

/** Root switches to nobody to start the server; anyone else starts it as themselves. */
const AS_ROOT = process.getuid?.() === 0;
const NOBODY = AS_ROOT
  ? {
      uid: Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' })),
      gid: Number(execFileSync('id', ['-g', 'nobody'], { encoding: 'utf8' })),
    }
  : undefined;
const asUnprivileged = (args: string[]): [string, string[]] =>
  NOBODY
    ? ['setpriv', [`--reuid=${NOBODY.uid}`, `--regid=${NOBODY.gid}`, '--clear-groups', process.execPath, ...args]]
    : [process.execPath, args];

/** Every path under `dir` that is not readable by any user (folders 0755, files 0644 or 0755). */
function notReadableByAll(dir: string): string[] {
  const wrong: string[] = [];
  const walk = (path: string) => {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) return;
    const mode = stat.mode & 0o777;
    if (stat.isDirectory()) {
      if (mode !== 0o755) wrong.push(`${path} ${mode.toString(8)}`);
      for (const entry of readdirSync(path)) walk(join(path, entry));
    } else if (mode !== 0o644 && mode !== 0o755) wrong.push(`${path} ${mode.toString(8)}`);
  };
  walk(dir);
  return wrong;
}

/** An environment with nothing of the checkout's: no pnpm on PATH, no npm_* variables. */
function bareEnvironment(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: '/usr/bin:/bin', HOME: scratch, ...extra };
  return env;
}

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'chatbridge-deployable-'));
  chmodSync(scratch, 0o755); // mkdtemp makes it 0700: the unprivileged user must reach the bundle
  bundle = join(scratch, 'chatbridge');
  execFileSync(process.execPath, ['scripts/bundle.ts', bundle], { cwd: ROOT, stdio: 'pipe' });
  mkdirSync(join(scratch, 'data'));
  if (NOBODY) chownSync(join(scratch, 'data'), NOBODY.uid, NOBODY.gid); // its state folder, as systemd's StateDirectory
  const [command, args] = asUnprivileged([join(bundle, 'dist', 'main.js')]);
  server = spawn(command, args, {
    cwd: scratch,
    env: bareEnvironment({ PORT: '0', HOST: '127.0.0.1', CHATBRIDGE_SQLITE_PATH: join(scratch, 'data', 'store.sqlite') }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const started = await startedServer(server, 'the deployable');
  url = started.url;
  log = started.log;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (server && server.exitCode === null) {
    server.kill('SIGTERM');
    await new Promise((resolve) => server!.once('exit', resolve));
  }
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('the deployable folder', () => {
  it('when started with plain node outside the checkout, then it answers /-/live with its version', async () => {
    const live = await fetch(`${url}/-/live`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: 'ok', version: VERSION });
  });

  it('when built, then every folder is 0755 and every file 0644 (or 0755 when executable): any user can run it', () => {
    expect(notReadableByAll(bundle)).toEqual([]);
  });

  it.runIf(AS_ROOT)(
    'when started by root as nobody (an unprivileged user, not the owner of its files; skipped unless the tests run as root, which switching user needs), then it runs as nobody and serves',
    async () => {
      const uid = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${server!.pid}/status`, 'utf8'))?.[1];
      expect(Number(uid)).toBe(NOBODY!.uid);
      expect((await fetch(`${url}/-/ready`)).status).toBe(200);
    },
  );

  it('when it starts on an empty store, then its hint runs the CLI beside it with node, not through pnpm (which it does not have)', () => {
    expect(log()).toContain(`Create one with \\"${process.execPath} ${join(bundle, 'dist', 'cli.js')} create my-community\\"`);
    expect(log()).not.toContain('pnpm chatbridge');
  });

  it('when its server is run with --version, --help or an unknown flag, then it prints and exits 0, or refuses in one line with exit 2', () => {
    const env = bareEnvironment({ CHATBRIDGE_SQLITE_PATH: join(scratch, 'data', 'store.sqlite') });
    const main = join(bundle, 'dist', 'main.js');
    expect(execFileSync(process.execPath, [main, '--version'], { cwd: scratch, env, encoding: 'utf8' })).toBe(`${VERSION}\n`);
    expect(execFileSync(process.execPath, [main, '--help'], { cwd: scratch, env, encoding: 'utf8' })).toContain('Usage: main.js [options]');
    const refused = spawnSync(process.execPath, [main, '--port=1'], { cwd: scratch, env, encoding: 'utf8', timeout: 10_000 });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toBe("chatbridge: unknown option '--port=1' (see --help)\n");
  });

  // The machine's own node, when it is older than the folder needs (Debian's packaged Node, say): the
  // real thing an older Node does with the folder, not a simulation.
  const systemNode = spawnSync('/usr/bin/node', ['--version'], { encoding: 'utf8' }).stdout?.trim() ?? '';
  it.runIf(/^v(1\d|2[0-3])\./.test(systemNode))(
    `when run with an older Node (/usr/bin/node ${systemNode}), then server and CLI print one line naming the Node they need, and exit 1`,
    () => {
      const env = bareEnvironment({ CHATBRIDGE_SQLITE_PATH: join(scratch, 'data', 'store.sqlite') });
      for (const entry of [['main.js'], ['cli.js', 'list']]) {
        const old = spawnSync('/usr/bin/node', [join(bundle, 'dist', entry[0]!), ...entry.slice(1)], {
          cwd: scratch,
          env,
          encoding: 'utf8',
        });
        expect(old.status).toBe(1);
        expect(old.stderr).toMatch(
          new RegExp(
            `^chatbridge needs Node\\.js 24\\.0\\.0 or later .*this is Node\\.js ${systemNode.replaceAll('.', '\\.')}\\. [^\\n]*\\n$`,
          ),
        );
      }
    },
  );

  it("when its CLI is run with plain node, then it provisions on the server's store", () => {
    const env = bareEnvironment({ CHATBRIDGE_SQLITE_PATH: join(scratch, 'data', 'store.sqlite') });
    expect(
      execFileSync(process.execPath, [join(bundle, 'dist', 'cli.js'), '--version'], { cwd: scratch, env, encoding: 'utf8' }).trim(),
    ).toBe(VERSION);
    const created = execFileSync(process.execPath, [join(bundle, 'dist', 'cli.js'), 'create', 'deployed'], {
      cwd: scratch,
      env,
      encoding: 'utf8',
    });
    expect(created).toContain('created endpoint deployed');
  });

  it('when a browser opens / and follows the docs link, then both pages render from the server alone, with no error and no refused resource', async () => {
    browser = await launchChromium();
    const page = await browser.newPage();
    const outside: string[] = [];
    await page.route('**/*', (route) => {
      const requested = route.request().url();
      if (requested.startsWith(`${url}/`) || /^(data|blob|about):/.test(requested)) return route.continue();
      outside.push(requested);
      return route.abort();
    });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text()); // a Content-Security-Policy refusal among them
    });

    await page.goto(`${url}/`, { waitUntil: 'load' });
    expect(await page.title()).toBe(`chatbridge ${VERSION}`);
    expect(await page.locator('h1').innerText()).toBe(`chatbridge ${VERSION}`);

    await page.getByRole('link', { name: 'API docs' }).click();
    await page.waitForURL(`${url}/-/docs`);
    await page.getByText(`chatbridge (${VERSION})`).waitFor({ timeout: 30_000 });
    await page.getByText('Endpoints', { exact: true }).first().click();
    await page.getByText('/update/{endpoint}').first().waitFor({ timeout: 30_000 });
    expect(await page.locator('body').innerText()).toContain('Read an endpoint');

    expect(outside).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });
});

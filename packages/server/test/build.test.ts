// What operators run is the build: `pnpm install` (or `pnpm build`) compiles the server once, and
// `pnpm start` runs packages/server/dist/main.js with plain `node`, no V8 flags and no build step of
// its own. Builds that overlap must each leave a complete, loadable build; instances started together
// must all come up; the build must serve on each store and find the migrations it reads at run time.
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createChatbridgeClient } from '@chatbridge/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServerProcess, startServerProcess } from './processes.ts';
import { createScratchDatabase, type ScratchDatabase } from './store/pgScratch.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const SERVER = join(ROOT, 'packages', 'server');
const ADMIN_TOKEN = 'build-test-admin-token-0123456789';
const runFile = promisify(execFile);

const scripts = (): Record<string, string> =>
  (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

/** The server command of the root package.json's start script: its node flags and entry point. */
function startCommand(): { flags: string[]; main: string } {
  const words = (scripts().start ?? '').split('&&').pop()!.trim().split(/\s+/);
  const at = words.findIndex((w) => /main\.[jt]s$/.test(w));
  return { flags: words.slice(1, at), main: at === -1 ? '' : words[at]! };
}

/** Creates, reads and updates an endpoint through the admin API and the bots' API. */
async function roundTrip(server: ServerProcess): Promise<void> {
  const client = createChatbridgeClient({ baseUrl: server.url, adminToken: ADMIN_TOKEN });
  const { id, token } = await client.createEndpoint('built');
  const updated = await client.updateEndpoint(id, token, { message_content: 'from the build', log_chat_b: 'log-b' });
  expect(updated.meta.message.content).toBe('from the build');
  const read = await client.getEndpoint(id, token);
  expect(read.config.logs.chat_b).toBe('log-b');
}

/** A build into `out`, as `pnpm build` runs it. */
const build = (out: string) => runFile(process.execPath, ['scripts/build-server.ts', out], { cwd: ROOT });

describe('the compiled server (what pnpm start runs)', () => {
  // Inside the server package, so that the build resolves its dependencies as dist/ does, with the
  // package.json beside it that it reads its version from.
  let out = '';
  const started: ServerProcess[] = [];
  let db: ScratchDatabase | undefined;

  beforeAll(async () => {
    out = join(mkdtempSync(join(SERVER, '.build-test-')), 'dist');
    copyFileSync(join(SERVER, 'package.json'), join(out, '..', 'package.json'));
    await build(out);
  }, 60_000);

  afterAll(async () => {
    for (const s of started) s.child.kill('SIGKILL');
    await Promise.all(started.map((s) => s.exited));
    if (out) rmSync(join(out, '..'), { recursive: true, force: true });
    await db?.drop();
  }, 30_000);

  const start = async (env: Record<string, string>) => {
    const server = await startServerProcess({ CHATBRIDGE_ADMIN_TOKEN: ADMIN_TOKEN, ...env }, join(out, 'main.js'));
    started.push(server);
    return server;
  };

  it('when pnpm start runs, then it starts the compiled main.js with plain node: no build step, no V8 flags', () => {
    const startScript = scripts().start ?? '';
    expect(startScript).not.toContain('build-server');
    expect(startCommand()).toEqual({ flags: [], main: 'packages/server/dist/main.js' });
    expect(scripts().postinstall).toBe('node scripts/build-server.ts'); // `pnpm install` builds
    expect(existsSync(join(out, 'main.js'))).toBe(true);
    expect(existsSync(join(out, 'main.ts'))).toBe(false);
    expect(existsSync(join(out, 'docs', 'index.html'))).toBe(true);
    // Readable by the user a service runs as, whoever built it (a temporary folder is made 0700).
    expect(statSync(out).mode & 0o777).toBe(0o755);
  });

  it('when the build starts on SQLite, then it serves an endpoint end to end', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chatbridge-build-'));
    await roundTrip(await start({ CHATBRIDGE_SQLITE_PATH: join(dir, 'store.sqlite') }));
  });

  it('when two builds into one folder run at once, then both succeed, the folder is never seen half-built, and one complete build serves', async () => {
    // Watched while they run: whenever the compiled server is there, so is what is copied after it.
    const halfBuilt: string[] = [];
    const watch = setInterval(() => {
      if (existsSync(join(out, 'main.js')) && ['sqlite', 'postgres'].some((store) => !existsSync(join(out, 'store', store, 'migrations'))))
        halfBuilt.push('main.js without its migrations');
    }, 2);
    const results = await Promise.allSettled([build(out), build(out)]).finally(() => clearInterval(watch));
    expect(halfBuilt).toEqual([]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
    expect(readdirSync(join(out, '..')).sort()).toEqual(['dist', 'package.json']); // no staging folder left behind
    const dir = mkdtempSync(join(tmpdir(), 'chatbridge-build-'));
    await roundTrip(await start({ CHATBRIDGE_SQLITE_PATH: join(dir, 'store.sqlite') }));
  }, 60_000);

  it.runIf(!!process.env.DATABASE_URL)(
    'when the build starts on an empty PostgreSQL database, then it runs the migrations it was shipped with and serves',
    async () => {
      db = await createScratchDatabase(process.env.DATABASE_URL!);
      await roundTrip(await start({ CHATBRIDGE_STORE: 'postgres', DATABASE_URL: db.url }));
    },
  );
});

/** `pnpm start` in the checkout, in a process group of its own (pnpm runs sh, which runs node). */
function pnpmStart(env: Record<string, string>): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn('pnpm', ['start'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', CHATBRIDGE_STORE: 'sqlite', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function urlOf(run: ReturnType<typeof pnpmStart>): Promise<string> {
  for (let waited = 0; waited < 20_000; waited += 50) {
    const url = /"url":"(http:\/\/[^"]+)"/.exec(run.output())?.[1];
    if (url) return url;
    if (run.child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`pnpm start did not come up:\n${run.output()}`);
}

/** packages/server/dist/main.js is missing, or a file of packages/server/src is newer than it. */
function checkoutBuildIsStale(): boolean {
  const main = join(SERVER, 'dist', 'main.js');
  if (!existsSync(main)) return true;
  const builtAt = statSync(main).mtimeMs;
  const src = join(SERVER, 'src');
  return readdirSync(src, { recursive: true, encoding: 'utf8' }).some((f) => statSync(join(src, f)).mtimeMs > builtAt);
}

describe('pnpm start in a checkout', () => {
  const runs: ReturnType<typeof pnpmStart>[] = [];

  beforeAll(() => {
    // The checkout's own build, as `pnpm install` leaves it (what `pnpm start` runs), built again only
    // when a source is newer than it (the rule of the start script's check): what is tested here is
    // pnpm start, the build itself is tested above.
    if (checkoutBuildIsStale()) execFileSync(process.execPath, ['scripts/build-server.ts'], { cwd: ROOT, stdio: 'pipe' });
  }, 60_000);

  afterAll(async () => {
    for (const run of runs) if (run.child.exitCode === null && run.child.signalCode === null) process.kill(-run.child.pid!, 'SIGKILL');
    await Promise.all(runs.map((r) => r.exited));
  }, 30_000);

  it('when two instances are started from one checkout at the same instant, then both answer /-/ready', async () => {
    const main = join(SERVER, 'dist', 'main.js');
    const built = statSync(main);
    const dirs = [mkdtempSync(join(tmpdir(), 'chatbridge-twin-')), mkdtempSync(join(tmpdir(), 'chatbridge-twin-'))];
    const twins = dirs.map((dir) => pnpmStart({ CHATBRIDGE_SQLITE_PATH: join(dir, 'store.sqlite') }));
    runs.push(...twins);
    const urls = await Promise.all(twins.map(urlOf));
    expect(new Set(urls).size).toBe(2);
    for (const url of urls) {
      const ready = await fetch(`${url}/-/ready`);
      expect(ready.status).toBe(200);
      expect((await ready.json()) as unknown).toMatchObject({ status: 'ready' });
    }
    // They ran the build that was there: neither rebuilt it under the other.
    const after = statSync(main);
    expect([after.ino, after.mtimeMs]).toEqual([built.ino, built.mtimeMs]);
    for (const run of twins) process.kill(-run.child.pid!, 'SIGTERM');
    await Promise.all(twins.map((r) => r.exited));
  }, 60_000);

  it('when the checkout has no build, then the first step of pnpm start says to run pnpm build and exits non-zero', async () => {
    // The start script's check, copied into a checkout whose server package has sources but no dist/.
    const checkout = mkdtempSync(join(tmpdir(), 'chatbridge-unbuilt-'));
    mkdirSync(join(checkout, 'scripts'));
    mkdirSync(join(checkout, 'packages', 'server', 'src'), { recursive: true });
    copyFileSync(join(ROOT, 'scripts', 'check-build.ts'), join(checkout, 'scripts', 'check-build.ts'));
    const first = (scripts().start ?? '').split('&&')[0]!.trim().split(/\s+/);
    expect(first).toEqual(['node', 'scripts/check-build.ts']);
    const result = await runFile(process.execPath, [first[1]!], { cwd: checkout }).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number; stderr: string }) => err,
    );
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('run pnpm build');
    rmSync(checkout, { recursive: true, force: true });
  });
});

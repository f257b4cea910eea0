// The self-contained deployable (`pnpm deploy:bundle`): built into a folder outside the checkout and
// started there with plain `node`, it serves; a browser (Debian's chromium, driven by playwright-core)
// opens its home page and follows the link to the docs it serves, which render from the server's own
// bytes alone, under the page's Content-Security-Policy.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './chromium.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const VERSION = '1.0.0';

let scratch = '';
let bundle = '';
let server: ChildProcess | undefined;
let url = '';
let browser: Browser | undefined;

/** An environment with nothing of the checkout's: no pnpm on PATH, no npm_* variables. */
function bareEnvironment(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: '/usr/bin:/bin', HOME: scratch, ...extra };
  return env;
}

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'chatbridge-deployable-'));
  bundle = join(scratch, 'chatbridge');
  execFileSync(process.execPath, ['scripts/bundle.ts', bundle], { cwd: ROOT, stdio: 'pipe' });
  server = spawn(process.execPath, [join(bundle, 'dist', 'main.js')], {
    cwd: scratch,
    env: bareEnvironment({ PORT: '0', HOST: '127.0.0.1', CHATBRIDGE_SQLITE_PATH: join(scratch, 'data', 'store.sqlite') }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  server.stdout!.on('data', (c: Buffer) => (log += c.toString()));
  server.stderr!.on('data', (c: Buffer) => (log += c.toString()));
  for (let waited = 0; !url && waited < 20_000; waited += 50) {
    url = /"url":"(http:\/\/[^"]+)"/.exec(log)?.[1] ?? '';
    if (server.exitCode !== null) break;
    if (!url) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (!url) throw new Error(`the deployable did not start:\n${log}`);
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

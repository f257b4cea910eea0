// The published HTML docs (`pnpm spec:docs`, Redocly) in a real browser, offline: the page must render
// the API from its own bytes, loading nothing from any network (Redocly's default pulls its script from
// a CDN; ours is built with --inlineBundle). Debian's chromium, driven by playwright-core.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from './chromium.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const PAGE = join(ROOT, 'docs', 'index.html');

let browser: Browser;
beforeAll(async () => {
  const built = spawnSync('pnpm', ['-s', 'spec:docs'], { cwd: ROOT, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`pnpm spec:docs failed:\n${built.stdout}${built.stderr}`);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

describe('published docs', () => {
  it('when the built page is opened offline, then it renders every operation and requests nothing from a network, later ones included', async () => {
    const page = await browser.newPage();
    const outside: string[] = [];
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (/^(file|data|blob|about):/.test(url)) return route.continue();
      outside.push(url);
      return route.abort();
    });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(pathToFileURL(PAGE).href, { waitUntil: 'load' });
    await page.getByText('chatbridge (1.0.0)').waitFor({ timeout: 30_000 });
    // The navigation expands a tag's operations when it is clicked (Redoc renders them on demand).
    await page.getByText('Endpoints', { exact: true }).first().click();
    await page.waitForFunction("document.body.innerText.includes('/events/{endpoint}')", undefined, { timeout: 30_000 });
    const text = await page.locator('body').innerText();
    for (const shown of [
      'Conventions',
      'Read an endpoint',
      'Update an endpoint',
      'Mark a message read',
      'List the message log',
      '/update/{endpoint}',
      '/events/{endpoint}',
    ]) {
      expect(text).toContain(shown);
    }
    // Redoc's telemetry, when on, sends its first traces about 6 s after load: wait past that.
    await page.waitForTimeout(9_000);
    expect(outside).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });
});

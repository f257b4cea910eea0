// The two pages a person opens in a browser: `/` (name, version, links) and `/-/docs` (the built API
// docs). Neither may take an endpoint ID's place: `/docs` and `/-` stay endpoints.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useServer } from './harness.ts';

const docsDir = mkdtempSync(join(tmpdir(), 'chatbridge-docs-'));
const DOCS = join(docsDir, 'index.html');
writeFileSync(DOCS, '<!doctype html><title>chatbridge docs</title><div id="redoc">the docs</div>');
const VERSION = '1.0.0';

describe('with the docs built', () => {
  const h = useServer({ docsFile: DOCS });

  it('when / is opened, then an HTML page names the service and its version and links to the docs and the probes', async () => {
    const response = await fetch(`${h.server.url}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const page = await response.text();
    expect(page).toContain(`chatbridge ${VERSION}`);
    for (const link of ['/-/docs', '/-/live', '/-/ready']) expect(page).toContain(`href="${link}"`);
  });

  it('when /-/docs is opened, then the built docs are served as HTML under a policy that lets only the page itself run', async () => {
    const response = await fetch(`${h.server.url}/-/docs`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await response.text()).toContain('the docs');
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toMatch(/https?:|\*/); // no network source of any kind
    const head = await fetch(`${h.server.url}/-/docs`, { method: 'HEAD' });
    expect([head.status, await head.text()]).toEqual([200, '']);
  });

  it('when endpoints are named docs and -, then they are still endpoints beside / and /-/docs', async () => {
    for (const id of ['docs', '-']) {
      const token = await h.server.provision(id);
      expect((await h.client.getEndpoint(id, token)).meta.trigger).toBe(false);
      expect((await fetch(`${h.server.url}/${id}`)).status).toBe(401); // the endpoint operation: no token
    }
    expect((await fetch(`${h.server.url}/-/docs`)).status).toBe(200);
  });

  it('when the liveness probe answers, then it names the version', async () => {
    expect(await h.client.getLiveness()).toEqual({ status: 'ok', version: VERSION });
  });
});

describe('with the docs not built (the server run from its sources)', () => {
  const h = useServer({ docsFile: join(docsDir, 'missing.html') });

  it('when /-/docs is opened, then 404 problem+json says to run pnpm build', async () => {
    const response = await fetch(`${h.server.url}/-/docs`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await response.json()) as { detail: string }).detail).toContain('pnpm build');
  });
});

import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import helmet from 'helmet';
import { describe, expect, it } from 'vitest';
import { securityHeaders } from '../../src/http/securityHeaders.ts';

const OPTIONS = { contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } } };

async function headersOf(app: RequestListener): Promise<Record<string, string>> {
  const server = createServer(app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    const headers = Object.fromEntries(res.headers);
    for (const varying of ['date', 'connection', 'keep-alive']) delete headers[varying];
    return headers;
  } finally {
    server.close();
  }
}

const appWith = (middleware: express.RequestHandler) =>
  express()
    .disable('x-powered-by')
    .use(middleware)
    .use((_req, res) => void res.json({ ok: true }));

describe('securityHeaders', () => {
  it('when a response is sent, then it carries exactly the headers helmet itself would set', async () => {
    const precomputed = await headersOf(appWith(securityHeaders(OPTIONS)));
    expect(precomputed).toEqual(await headersOf(appWith(helmet(OPTIONS))));
    expect(precomputed['content-security-policy']).toMatch(/^default-src 'none';.*frame-ancestors 'none'/);
    expect(precomputed['x-content-type-options']).toBe('nosniff');
  });
});

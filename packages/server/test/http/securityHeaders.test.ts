import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import helmet from 'helmet';
import { describe, expect, it } from 'vitest';
import { JSON_API_HEADERS, securityHeaders } from '../../src/http/transport/securityHeaders.ts';

const OPTIONS = JSON_API_HEADERS.helmet;

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

  it("when the server answers, then it sends a JSON API's security headers (OWASP REST) and no web-page ones", async () => {
    const sent = await headersOf(appWith(securityHeaders(OPTIONS, JSON_API_HEADERS.extra)));
    const { 'content-type': _type, 'content-length': _length, etag: _etag, ...security } = sent; // the test app's, not ours
    expect(security).toEqual({
      'content-security-policy': "default-src 'none';frame-ancestors 'none'",
      'cross-origin-resource-policy': 'same-origin',
      'strict-transport-security': 'max-age=31536000; includeSubDomains',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'cache-control': 'no-store',
    });
  });
});

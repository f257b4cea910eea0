import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { parseQueryOnce, queryParser } from '../../src/http/request/queryParser.ts';

/** An app whose middlewares read `req.query` as the hygiene check and the validator do. */
async function withApp(run: (origin: string, parses: () => number) => Promise<void>): Promise<void> {
  let parses = 0;
  const parse = queryParser(new Set(['flag']));
  const app = express().set('query parser', (qs: string) => {
    parses++;
    return parse(qs);
  });
  parseQueryOnce(app);
  app.use((req, _res, next) => {
    void Object.keys(req.query); // hygiene reads it
    const query = req.query as Record<string, unknown>;
    if (typeof query.n === 'string') query.n = Number(query.n); // the validator coerces in place
    next();
  });
  // biome-ignore lint/suspicious/noSelfCompare: the getter must hand out one object, read twice
  app.use((req, res) => void res.json({ query: req.query, same: req.query === req.query }));
  const server = createServer(app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, () => parses);
  } finally {
    server.close();
  }
}

describe('parseQueryOnce', () => {
  it('when middlewares read req.query several times, then it is parsed once and their changes are kept', async () => {
    await withApp(async (origin, parses) => {
      const body = await (await fetch(`${origin}/x?n=42&flag=TRUE`)).json();
      expect(body).toEqual({ query: { n: 42, flag: 'true' }, same: true });
      expect(parses()).toBe(1);
    });
  });

  it('when requests carry different queries, then each gets its own object', async () => {
    await withApp(async (origin, parses) => {
      const [a, b] = await Promise.all([fetch(`${origin}/x?n=1`), fetch(`${origin}/x?n=2&extra=y`)]);
      expect(((await a.json()) as { query: unknown }).query).toEqual({ n: 1 });
      expect(((await b.json()) as { query: unknown }).query).toEqual({ n: 2, extra: 'y' });
      expect(parses()).toBe(2);
    });
  });
});

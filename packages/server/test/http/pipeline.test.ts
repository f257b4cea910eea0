import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { describe, expect, it } from 'vitest';
import { inOneLayer } from '../../src/http/pipeline.ts';

/** Runs the layer once; resolves with what it passed to Express's next (undefined: went on). */
function run(layer: RequestHandler): Promise<unknown> {
  return new Promise((resolve) => layer({} as Request, {} as Response, ((error?: unknown) => resolve(error)) as NextFunction));
}

describe('inOneLayer', () => {
  it('when every middleware goes on, then they run in order and the layer goes on', async () => {
    const seen: string[] = [];
    const mark =
      (name: string): RequestHandler =>
      (_req, _res, next) => (seen.push(name), next());
    const later: RequestHandler = (_req, _res, next) => void setImmediate(() => (seen.push('async'), next()));
    const skipRoute: RequestHandler = (_req, _res, next) => (seen.push('route'), next('route'));
    expect(await run(inOneLayer([mark('a'), later, skipRoute, mark('b')]))).toBeUndefined();
    expect(seen).toEqual(['a', 'async', 'route', 'b']);
  });

  it('when a middleware passes an error, throws, or returns a rejected promise, then the rest is skipped and the error goes on', async () => {
    const boom = new Error('boom');
    const never: RequestHandler = () => expect.unreachable('a middleware after the error ran');
    const ways: RequestHandler[] = [
      (_req, _res, next) => next(boom),
      () => {
        throw boom;
      },
      async () => {
        throw boom;
      },
    ];
    for (const failing of ways) expect(await run(inOneLayer([failing, never]))).toBe(boom);
  });

  it('when a promise rejects without a reason, then an error still reaches the error handler', async () => {
    const error = await run(inOneLayer([() => Promise.reject(undefined)]));
    expect(error).toBeInstanceOf(Error);
  });
});

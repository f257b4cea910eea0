// A missing endpoint is answered after the same digest comparison as a wrong token on an existing
// one, so how long a 401 takes does not tell which endpoints exist. Counted, not timed: the
// comparison is node:crypto's timingSafeEqual, watched through a module mock.
import * as crypto from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { useServer } from './harness.ts';

vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

const WRONG = `cbt_${'w'.repeat(72)}`;
const h = useServer();

/** The digest comparisons made while answering `path`, and its status. */
async function comparisonsFor(path: string, method = 'GET'): Promise<{ status: number; comparisons: number }> {
  const compare = vi.mocked(crypto.timingSafeEqual);
  compare.mockClear();
  const response = await fetch(`${h.server.url}${path}`, { method });
  await response.body?.cancel();
  return { status: response.status, comparisons: compare.mock.calls.length };
}

describe('unknown endpoints', () => {
  it('when an endpoint does not exist, then its 401 comes after the same digest comparison as a wrong token on an existing endpoint', async () => {
    const { id } = await h.endpoint('exists');
    for (const [method, path] of [
      ['GET', (e: string) => `/${e}?token=${WRONG}`],
      ['POST', (e: string) => `/update/${e}?token=${WRONG}&beta=true`],
      ['POST', (e: string) => `/read/${e}?token=${WRONG}&platform=chat_a`],
      ['GET', (e: string) => `/events/${e}?token=${WRONG}`],
    ] as const) {
      const existing = await comparisonsFor(path(id), method);
      const missing = await comparisonsFor(path('no-such-endpoint'), method);
      expect([path('x'), existing]).toEqual([path('x'), { status: 401, comparisons: 1 }]);
      expect([path('x'), missing]).toEqual([path('x'), { status: 401, comparisons: 1 }]);
    }
  });
});

// The read-ahead of getEndpoint's endpoint (PostgreSQL): started once the request is valid, used by
// the handler instead of a second read, and harmless when nobody uses it.
import type { Request, Response } from 'express';
import { describe, expect, it } from 'vitest';
import { readAhead, readEndpoint } from '../../src/http/request/readAhead.ts';
import type { EndpointStore, StoredEndpoint } from '../../src/store/port.ts';

/** A store whose reads are counted and answered by `answer`. */
const countingStore = (answer: (id: string) => Promise<StoredEndpoint | undefined>) => {
  const reads: string[] = [];
  const store = { inProcess: false, endpoints: { get: (id: string) => (reads.push(id), answer(id)) } } as unknown as EndpointStore;
  return { store, reads };
};
const request = (operationId: string, endpoint: string) =>
  ({ openapi: { schema: { operationId }, pathParams: { endpoint } } }) as unknown as Request;
const row = { version: 3 } as StoredEndpoint;

describe('readAhead', () => {
  it('when a getEndpoint request passes it, then its endpoint is read once, before the next layer, and the handler gets that read', async () => {
    const { store, reads } = countingStore(async () => row);
    const req = request('getEndpoint', 'ep-1');
    let readsBeforeNext = -1;
    readAhead(store)(req, {} as Response, () => (readsBeforeNext = reads.length));
    expect(readsBeforeNext).toBe(1);
    expect(await readEndpoint(req, store)).toBe(row);
    expect(reads).toEqual(['ep-1']);
  });

  it('when another operation passes it, then nothing is read ahead and the handler reads when it asks', async () => {
    const { store, reads } = countingStore(async () => row);
    const req = request('updateEndpoint', 'ep-1');
    readAhead(store)(req, {} as Response, () => undefined);
    expect(reads).toEqual([]);
    expect(await readEndpoint(req, store)).toBe(row);
    expect(reads).toEqual(['ep-1']);
  });

  it('when a read ahead fails and no handler awaits it (the rate limit refused the request), then nothing is left unhandled', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const { store } = countingStore(async () => {
        throw new Error('connection lost');
      });
      readAhead(store)(request('getEndpoint', 'ep-1'), {} as Response, () => undefined);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('when a read ahead fails and the handler awaits it, then the handler sees the failure', async () => {
    const { store } = countingStore(async () => {
      throw new Error('connection lost');
    });
    const req = request('getEndpoint', 'ep-1');
    readAhead(store)(req, {} as Response, () => undefined);
    await expect(readEndpoint(req, store)).rejects.toThrow('connection lost');
  });
});

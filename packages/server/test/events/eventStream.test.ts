// The connection every event stream runs on (EventStream), with a stand-in kind instead of the
// store: it looks again while its kind asks to and whenever a notice arrives, asks the credential at
// each heartbeat, ends on a failed look, and answers HEAD with the headers alone.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EventStream, type StreamConnection, type StreamKind } from '../../src/events/eventStream.ts';
import { EventStreams } from '../../src/events/streams.ts';
import type { Logger } from '../../src/logger.ts';
import { ChangeHub } from '../../src/store/changeFeed.ts';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

/** A kind that sends `id: n` events from a counter: `look` writes and says whether to look again. */
function counting(hub: ChangeHub, look: (out: EventStream, n: number) => Promise<boolean> | boolean) {
  let n = 0;
  const kind: StreamKind & { looks: number } = {
    context: { stream: 'test' },
    looks: 0,
    subscribe: (wake) => hub.feed().subscribe('ep', wake),
    look: async (out) => {
      kind.looks++;
      return look(out, ++n);
    },
  };
  return kind;
}

async function serve(kind: StreamKind, connection: Partial<StreamConnection> = {}, heartbeatMs = 20) {
  const streams = new EventStreams(new ChangeHub().feed(), { heartbeatMs });
  const warn = vi.fn();
  const logger = { warn } as unknown as Logger;
  const app = express();
  app.get('/s', (req, res) => {
    if (req.method === 'HEAD') res.locals.head = true;
    EventStream.open({ streams, budgetKey: 'ep', req, res, logger, ...connection }, kind);
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server!.once('listening', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/s`, streams, warn };
}

const event = (n: number) => Buffer.from(`id: ${n}\nevent: test\ndata: ${n}\n\n`);
const ids = (text: string) => [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));

/** Reads the stream's text until `done` holds for it. */
async function readUntil(url: string, done: (text: string) => boolean) {
  const controller = new AbortController();
  const reader = (await fetch(url, { signal: controller.signal })).body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  const until = async (condition: (text: string) => boolean) => {
    while (!condition(text)) {
      const { value, done: ended } = await reader.read();
      if (ended) break;
      text += value;
    }
    return text;
  };
  await until(done);
  return { until, close: () => controller.abort() };
}

describe('EventStream', () => {
  it("when its kind's look says more may follow, then it looks again at once, and again when a notice arrives", async () => {
    const hub = new ChangeHub();
    const kind = counting(hub, (out, n) => {
      out.write(event(n));
      return n < 3;
    });
    const { url } = await serve(kind, {}, 60_000); // no heartbeat: only the notice wakes it
    const stream = await readUntil(url, (text) => ids(text).length === 3);
    hub.publish('ep', 1);
    expect(ids(await stream.until((text) => ids(text).length === 4))).toEqual([1, 2, 3, 4]);
    stream.close();
  });

  it('when the credential no longer opens the stream at a heartbeat, then the stream ends and gives back its place', async () => {
    let allowed = true;
    const kind = counting(new ChangeHub(), () => false);
    const { url, streams } = await serve(kind, { stillAllowed: async () => allowed });
    const response = await fetch(url);
    const text = response.text();
    await vi.waitFor(() => expect(kind.looks).toBeGreaterThan(1)); // heartbeats look while allowed
    allowed = false;
    expect(await text).toMatch(/^retry: 2000\n\n(: heartbeat\n\n)+$/);
    expect(streams.size).toBe(0);
  });

  it("when a look fails, then the stream ends, logged with its kind's context", async () => {
    const kind = counting(new ChangeHub(), () => Promise.reject(new Error('store down')));
    const { url, streams, warn } = await serve(kind);
    expect(await (await fetch(url)).text()).toBe('retry: 2000\n\n');
    expect(warn).toHaveBeenCalledWith({ err: expect.any(Error), stream: 'test' }, 'event stream ended: the store failed');
    expect(streams.size).toBe(0);
  });

  it('when asked with HEAD, then the headers alone: no look and no place among the open streams', async () => {
    const kind = counting(new ChangeHub(), () => false);
    const { url, streams } = await serve(kind);
    const response = await fetch(url, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(kind.looks).toBe(0);
    expect(streams.size).toBe(0);
  });
});

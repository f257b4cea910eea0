// An endpoint's event stream without the rest of the app: its events' bytes, and that a stream the
// client leaves gives back its subscription, its timer and its place among open streams.
import { mkdtempSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import express, { type Response } from 'express';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { initialRecord } from '../../src/domain/record.ts';
import type { ChangeFeed } from '../../src/store/changeFeed.ts';
import { formatEvent, resumePoint } from '../../src/events/endpointEvents.ts';
import type { ResumePoint } from '../../src/events/resume.ts';
import { openEndpointStream } from '../../src/events/endpointStream.ts';
import { type EventStreamSettings, EventStreams } from '../../src/events/streams.ts';
import { createLogger } from '../../src/logger.ts';
import { SqliteEndpointStore } from '../../src/store/sqlite/store.ts';
import { hashToken, tokenMatchesDigest } from '../../src/tokens.ts';

describe('formatEvent', () => {
  it('when a record holds line breaks, then the event still has exactly one data line', () => {
    const record = initialRecord();
    record.config.blacklist = ['line\nbreak', 'carriage\rreturn', 'both\r\n', 'sep\u2028'];
    const lines = formatEvent(3, 'record', JSON.stringify(record), 7)
      .toString()
      .split(/\r\n|\r|\n/);
    expect(lines).toEqual(['id: 3-7', 'event: record', `data: ${JSON.stringify(record)}`, '', '']);
  });

  it('when no message is pending, then the ID is the version alone', () => {
    const record = JSON.stringify(initialRecord());
    expect(formatEvent(3, 'reset', Buffer.from(record), null).toString()).toBe(`id: 3\nevent: reset\ndata: ${record}\n\n`);
  });
});

describe('openEndpointStream', () => {
  let server: Server | undefined;
  let store: SqliteEndpointStore | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    await store?.close();
  });

  /**
   * A bare app serving one stream per request of ep-1 (from `resume`, else from the request's
   * Last-Event-ID), over a feed that counts its subscriptions.
   */
  async function serve(options: { resume?: ResumePoint; settings?: Partial<EventStreamSettings>; responses?: Response[] } = {}) {
    store = new SqliteEndpointStore(join(mkdtempSync(join(tmpdir(), 'chatbridge-stream-')), 'store.sqlite'));
    await store.endpoints.create('ep-1', hashToken('t'), initialRecord());
    const inner = await store.changes.openFeed();
    let subscriptions = 0;
    const feed: ChangeFeed = {
      subscribeAll: (listener) => inner.subscribeAll(listener),
      subscribe(id, listener) {
        subscriptions++;
        const off = inner.subscribe(id, listener);
        return () => {
          subscriptions--;
          off();
        };
      },
      close: () => inner.close(),
    };
    const streams = new EventStreams(feed, { heartbeatMs: 20, ...options.settings });
    const app = express();
    const logger = createLogger('silent');
    app.get('/s', (req, res) => {
      options.responses?.push(res);
      openEndpointStream({
        store: store!,
        streams,
        endpointId: 'ep-1',
        stillAuthorized: (row) => tokenMatchesDigest(row.tokenHash, 't'),
        resume: options.resume ?? resumePoint(req.headers['last-event-id'], undefined),
        req,
        res,
        logger,
      });
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server!.once('listening', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/s`;
    return { url, streams, subscriptions: () => subscriptions };
  }

  const until = async (what: string, condition: () => boolean) => {
    const deadline = Date.now() + 5000;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };

  it('when clients disconnect, then their subscriptions and places among the open streams are given back', async () => {
    const { url, streams, subscriptions } = await serve();
    const controllers = Array.from({ length: 3 }, () => new AbortController());
    const responses = await Promise.all(controllers.map((c) => fetch(url, { signal: c.signal })));
    for (const r of responses) await r.body!.getReader().read();
    expect(streams.size).toBe(3);
    expect(subscriptions()).toBe(3);
    for (const c of controllers) c.abort();
    await until('every stream to end', () => streams.size === 0 && subscriptions() === 0);
  });

  /** Writes `count` versions of ep-1, each record about `kb` KB. */
  async function bigVersions(count: number, kb: number) {
    const words = Array.from({ length: kb * 4 }, (_, w) => `${String(w).padStart(6, '0')}${'x'.repeat(250)}`);
    for (let v = 0; v < count; v++) {
      await store!.endpoints.update('ep-1', (cur) => {
        const record = structuredClone(cur!.record);
        record.config.blacklist = words.slice(v % 2); // a different record each time
        return { write: { record, state: cur!.state }, result: undefined };
      });
    }
  }

  /** A client that asks for the stream and then never reads (its socket is paused). */
  async function stalledClient(url: string) {
    const { port } = new URL(url);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write('GET /s HTTP/1.1\r\nHost: x\r\n\r\n');
    socket.pause();
    return socket;
  }

  it('when a client resumes far back and does not read, then the server holds about one event for it, not the whole replay', async () => {
    const responses: Response[] = [];
    const { url } = await serve({ resume: { kind: 'after', version: 0 }, settings: { heartbeatMs: 60_000 }, responses });
    await bigVersions(100, 250); // 100 events of ~250 KB: 25 MB to replay
    const socket = await stalledClient(url);
    try {
      await until('the stream to start', () => responses.length === 1);
      await new Promise((resolve) => setTimeout(resolve, 500));
      // What the kernel's socket buffers did not take waits in the response; a replay written
      // whole would leave most of the 25 MB there.
      expect(responses[0]!.writableLength).toBeLessThan(1024 * 1024);
    } finally {
      socket.destroy();
    }
  });

  it('when a client takes nothing of what was written for the stall limit, then its stream is ended and its place given back', async () => {
    const responses: Response[] = [];
    const { url, streams } = await serve({ resume: { kind: 'after', version: 0 }, settings: { heartbeatMs: 20, stallMs: 200 }, responses });
    await bigVersions(100, 250);
    const socket = await stalledClient(url);
    try {
      await until('the stream to start', () => streams.size === 1);
      await until('the stalled stream to end', () => streams.size === 0);
      expect(responses[0]!.destroyed).toBe(true);
    } finally {
      socket.destroy();
    }
  });

  /** Reads a stream's events until `count` have arrived, as their raw text. */
  async function events(url: string, count: number, headers: Record<string, string> = {}) {
    const controller = new AbortController();
    const response = await fetch(url, { headers, signal: controller.signal });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    const next = async () => {
      while ((text.match(/\n\n(?=id: )|^id: /g)?.length ?? 0) < count || !text.endsWith('\n\n')) {
        const { value, done } = await reader.read();
        if (done) break;
        text += value;
      }
      return text.split('\n\n').filter((e) => e.startsWith('id: '));
    };
    return { next, want: (n: number) => ((count = n), next()), close: () => controller.abort() };
  }

  it('when a stream is caught up, then each live event is the committed row, the same bytes a replay sends, without reading the log', async () => {
    const { url } = await serve({ settings: { heartbeatMs: 60_000 } });
    const live = await Promise.all([events(url, 1), events(url, 1)]);
    for (const s of live) expect(await s.next()).toHaveLength(1); // version 0, the current record
    const reads = vi.spyOn(store!.changes, 'eventsSince');
    for (let v = 1; v <= 5; v++) {
      await store!.endpoints.update('ep-1', (cur) => {
        const record = structuredClone(cur!.record);
        record.config.blacklist = [`v${v}`];
        return { write: { record, state: cur!.state }, result: undefined };
      });
      for (const s of live) expect(await s.want(v + 1)).toHaveLength(v + 1);
    }
    expect(reads).not.toHaveBeenCalled();
    const [first, second] = await Promise.all(live.map((s) => s.next()));
    expect(second).toEqual(first);
    const replay = await events(url, 5, { 'Last-Event-ID': '0' });
    expect(await replay.next()).toEqual(first!.slice(1));
    expect(first![5]).toContain('"blacklist":["v5"]');
    for (const s of [...live, replay]) s.close();
  });

  it('when the streams are ended for shutdown, then each response ends and new ones end at once', async () => {
    const { url, streams, subscriptions } = await serve();
    const response = await fetch(url);
    const text = response.text();
    await until('the stream to open', () => streams.size === 1);
    streams.endAll();
    expect(await text).toMatch(/^retry: 2000\n\nid: 0\nevent: record\n/);
    expect(subscriptions()).toBe(0);
    expect(await (await fetch(url)).text()).toBe('retry: 2000\n\n');
    expect(streams.size).toBe(0);
  });
});

// The fan-out scenarios' baseline: a bare node:http Server-Sent Events broadcaster, measured at the
// same streams and rate as chatbridge. It keeps nothing: `POST /update/{id}` answers 200 and writes
// one event to the open streams of that endpoint (`GET /events/{id}`) and to every stream of all
// changes (`GET /events`), its data the message content beside the record the bench's endpoints
// hold, so an event is about as large as chatbridge's. A stream of one endpoint starts with an event,
// as chatbridge's does. No authentication, validation, store or replay: the floor of the work.
//   PORT=... HOST=... node bench/sse-broadcaster.ts
import { createServer, type ServerResponse } from 'node:http';
import { benchRecord } from './lib/record.ts';
import { listenUntilSignalled } from './lib/bareServer.ts';

const recordJson = JSON.stringify(benchRecord());
const byEndpoint = new Map<string, Set<ServerResponse>>();
const everything = new Set<ServerResponse>();
let position = 0;

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  const [, first, id] = url.pathname.split('/');
  if (req.method === 'GET' && first === 'events') {
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' });
    const streams = id ? (byEndpoint.get(id) ?? byEndpoint.set(id, new Set()).get(id)!) : everything;
    streams.add(res);
    res.on('close', () => streams.delete(res));
    res.write(`retry: 2000\n\n${id ? `id: 0\nevent: record\ndata: ${recordJson}\n\n` : ''}`);
  } else if (req.method === 'POST' && first === 'update' && id) {
    const content = url.searchParams.get('message_content') ?? '';
    const event = `id: ${++position}\nevent: change\ndata: {"endpoint":${JSON.stringify(id)},"content":${JSON.stringify(content)},"record":${recordJson}}\n\n`;
    for (const stream of byEndpoint.get(id) ?? []) stream.write(event);
    for (const stream of everything) stream.write(event);
    res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
  } else {
    res.writeHead(req.url === '/' ? 200 : 404).end();
  }
});
listenUntilSignalled(server);

// Scenario 1's server: bare node:http answering every GET with the bytes of a real endpoint record,
// so the ratio to it isolates what the framework, validation, authentication and store cost. It
// listens as the real server does and exits through process.exit on SIGTERM/SIGINT, so that
// --cpu-prof writes its profile.
//   PORT=... HOST=... node bench/baseline-server.ts RECORD_JSON_FILE
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { listenUntilSignalled } from './lib/bareServer.ts';

const body = readFileSync(process.argv[2] ?? '');
const headers = { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(body.length) };

const server = createServer((req, res) => {
  if (req.method !== 'GET') {
    res.writeHead(405).end();
    return;
  }
  res.writeHead(200, headers);
  res.end(body);
});
listenUntilSignalled(server);

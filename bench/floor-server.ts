// Scenario 7's server: the framework floor. Express 5 with express-openapi-validator (our patched
// build), set up as the real server sets them up, answering every validated request with the same
// record bytes as the baseline and doing nothing else: no store, no authentication, no logging. It is
// the most chatbridge's server can reach on its mandated stack, measured in the same run.
//   PORT=... HOST=... node bench/floor-server.ts RECORD_JSON_FILE
import { readFileSync } from 'node:fs';
import { serveUntilSignalled } from './lib/serve.ts';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';

// The server package's dependencies, resolved as the server resolves them (their types are not
// visible from here, hence the small structural ones).
interface Res {
  setHeader(name: string, value: string): void;
  send(body: Buffer): void;
  status(code: number): { json(body: unknown): void };
}
interface App {
  (req: IncomingMessage, res: ServerResponse): void;
  disable(setting: string): void;
  set(setting: string, value: unknown): void;
  use(...handlers: unknown[]): void;
}
const require = createRequire(new URL('../packages/server/package.json', import.meta.url));
const express = require('express') as () => App;
const OpenApiValidator = require('express-openapi-validator') as { middleware(options: Record<string, unknown>): unknown[] };
const specPath = require.resolve('@chatbridge/api/openapi.bundled.yaml');

const body = readFileSync(process.argv[2] ?? '');
const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.use(
  OpenApiValidator.middleware({
    apiSpec: specPath,
    validateRequests: { allowUnknownQueryParameters: false },
    validateResponses: false,
    validateSecurity: true,
  }),
);
app.use((_req: unknown, res: Res) => {
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.send(body);
});
app.use((err: { status?: number; message?: string }, _req: unknown, res: Res, _next: unknown) => {
  res.status(err.status ?? 500).json({ message: err.message });
});

const server = createServer(app);
serveUntilSignalled(server);

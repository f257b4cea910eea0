// How the bench's bare node:http servers (the request baseline, the relay, the SSE broadcaster) listen
// and stop: as the real server keeps connections alive, on PORT/HOST, ending on SIGTERM or SIGINT.
import type { Server } from 'node:http';

export function listenUntilSignalled(server: Server): void {
  server.keepAliveTimeout = 65_000; // as the real server
  server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1');
  const stop = () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

// Listening for the bench's stand-in server (the baseline) as the real server listens, and
// exiting through process.exit on SIGTERM/SIGINT so that --cpu-prof writes its profile.
import type { Server } from 'node:http';

export function serveUntilSignalled(server: Server): void {
  server.keepAliveTimeout = 65_000; // as the real server
  server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1');
  const stop = () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

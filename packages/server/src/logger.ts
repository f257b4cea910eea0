// pino to stdout. Secrets never reach a log line: a logged URL keeps no query value and no
// over-long path segment (http/observe/redactUrl.ts), and the Authorization header is redacted.
import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/**
 * stdout, written synchronously, as Node writes to a pipe anyway. pino's default stdout stream writes
 * asynchronously and flushes what is left when the process exits; with stdout a pipe whose reader
 * had gone (a dead log shipper), that flush retried forever and the process never exited.
 */
const stdout = (): DestinationStream => pino.destination({ dest: 1, sync: true });

export function createLogger(level: string, destination: DestinationStream = stdout()): Logger {
  return pino(
    {
      level,
      base: { service: 'chatbridge' },
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie', '*.token', 'token', '*.key', 'key'], censor: '[REDACTED]' },
    },
    destination,
  );
}

// pino to stdout. Secrets never reach a log line: the `token` query parameter is masked in every
// logged URL and the Authorization header is redacted.
import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

/** Replaces the value of every `token` query parameter with `[REDACTED]`. */
export function redactUrl(url: string): string {
  return url.replace(/([?&]token=)[^&#]*/gi, '$1[REDACTED]');
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'chatbridge' },
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie', '*.token', 'token'], censor: '[REDACTED]' },
    },
    destination,
  );
}

// pino to stdout. Secrets never reach a log line: a logged URL keeps no query value and no
// over-long path segment (see redactUrl), and the Authorization header is redacted.
import { pino, type Logger, type DestinationStream } from 'pino';
import { decodeQueryComponent, rawQueryPairs } from './http/queryText.ts';

export type { Logger };

const REDACTED = '[REDACTED]';
/** The shape of every query parameter name in the spec; any other key is not logged either. */
const PARAMETER_NAME = /^[a-z][a-z_]{0,39}$/;
/** Longer than any endpoint ID, so it may be a token sent in the wrong place. */
const MAX_LOGGED_SEGMENT = 64;
/** Query parameters named in a logged URL; more are counted, not listed. */
const MAX_LOGGED_PARAMETERS = 50;

/**
 * The URL as a log line may show it: every query value replaced by `[REDACTED]` (values carry tokens,
 * webhook URLs and message text, however their keys are spelt or encoded), keys shown decoded only
 * when they look like a parameter name (else `[REDACTED]`: a key can hold a mistyped token), path
 * segments longer than an endpoint ID replaced, and any fragment dropped.
 */
export function redactUrl(url: string): string {
  const hash = url.indexOf('#');
  const whole = hash === -1 ? url : url.slice(0, hash);
  const q = whole.indexOf('?');
  const path = (q === -1 ? whole : whole.slice(0, q))
    .split('/')
    .map((segment) => (segment.length > MAX_LOGGED_SEGMENT ? REDACTED : segment))
    .join('/');
  if (q === -1) return path;
  const pairs = rawQueryPairs(whole.slice(q + 1));
  const keys = pairs.slice(0, MAX_LOGGED_PARAMETERS).map((pair) => {
    const key = decodeQueryComponent(pair.key);
    return `${key !== undefined && PARAMETER_NAME.test(key) ? key : REDACTED}=${REDACTED}`;
  });
  // A hostile query of 20,000 keys would make a log line of 300 KB (and cost the event loop as much).
  if (pairs.length > MAX_LOGGED_PARAMETERS) keys.push(`...(${pairs.length - MAX_LOGGED_PARAMETERS} more)`);
  return keys.length === 0 ? path : `${path}?${keys.join('&')}`;
}

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
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie', '*.token', 'token'], censor: '[REDACTED]' },
    },
    destination,
  );
}

// The URL as a request log line shows it: no query value, no path segment that may hold a token.
import { BOT_KEY_PREFIX, TOKEN_PREFIX } from '../../tokens.ts';
import { decodeQueryComponent, rawQueryPairs } from '../request/queryText.ts';

const REDACTED = '[REDACTED]';
/** The shape of every query parameter name in the spec; any other key is not logged either. */
const PARAMETER_NAME = /^[a-z][a-z_]{0,39}$/;
/** Longer than any endpoint ID, so it may be a token sent in the wrong place. */
const MAX_LOGGED_SEGMENT = 64;
/**
 * A token's or bot key's prefix and the characters after it, however the path splits them (slashes
 * are taken out first): the segments it spans are not logged.
 */
const PREFIXED_TOKEN = new RegExp(`(?:${TOKEN_PREFIX}|${BOT_KEY_PREFIX})[A-Za-z0-9_-]{0,72}`, 'gi');
/**
 * Neighbouring segments of random-looking token characters (upper and lower case mixed) that
 * add up to this many are taken for a token's random part, split or whole: endpoint IDs are
 * usually numbers or words, a token's 72 random characters are neither.
 */
const RANDOM_RUN = 32;
const looksRandom = (segment: string) =>
  segment.length >= 8 && /^[A-Za-z0-9_-]+$/.test(segment) && /[A-Z]/.test(segment) && /[a-z]/.test(segment);

/** The path's segments, each replaced by `[REDACTED]` when it may hold (part of) a token. */
function redactPath(path: string): string {
  const segments = path.split('/');
  const hide = segments.map((segment) => segment.length > MAX_LOGGED_SEGMENT);
  // Where each segment starts in the path without its slashes.
  const starts: number[] = [];
  let at = 0;
  for (const segment of segments) {
    starts.push(at);
    at += segment.length;
  }
  for (const match of segments.join('').matchAll(PREFIXED_TOKEN)) {
    const end = match.index + match[0].length;
    segments.forEach((segment, i) => {
      if (starts[i]! < end && starts[i]! + segment.length > match.index) hide[i] = true;
    });
  }
  for (let i = 0; i < segments.length; ) {
    let j = i;
    let length = 0;
    while (j < segments.length && looksRandom(segments[j]!)) length += segments[j++]!.length;
    if (length >= RANDOM_RUN) for (let k = i; k < j; k++) hide[k] = true;
    i = j === i ? i + 1 : j;
  }
  return segments.map((segment, i) => (hide[i] ? REDACTED : segment)).join('/');
}
/** Query parameters named in a logged URL; more are counted, not listed. */
const MAX_LOGGED_PARAMETERS = 50;

/**
 * The URL as a log line may show it: every query value replaced by `[REDACTED]` (values carry tokens,
 * webhook URLs and message text, however their keys are spelt or encoded), keys shown decoded only
 * when they look like a parameter name (else `[REDACTED]`: a key can hold a mistyped token), path
 * segments that may hold a token or part of one replaced (see redactPath), and any fragment dropped.
 */
export function redactUrl(url: string): string {
  const hash = url.indexOf('#');
  const whole = hash === -1 ? url : url.slice(0, hash);
  const q = whole.indexOf('?');
  const path = redactPath(q === -1 ? whole : whole.slice(0, q));
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

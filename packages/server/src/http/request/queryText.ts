// A query string as sent, before any parser has decoded it: for the checks and the log line that must
// see what the client wrote (the query parser turns malformed escapes into U+FFFD, or keeps them).

export interface RawQueryPair {
  key: string;
  /** Undefined for a bare key (`?flag`). */
  value: string | undefined;
}

/** The `key=value` pairs of a query string (without its `?`), still percent-encoded; empty pairs skipped. */
export function rawQueryPairs(query: string): RawQueryPair[] {
  return query
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const eq = pair.indexOf('=');
      return eq === -1 ? { key: pair, value: undefined } : { key: pair.slice(0, eq), value: pair.slice(eq + 1) };
    });
}

/** A key or value decoded as a form does (`+` is a space); undefined when it is not valid percent-encoded UTF-8. */
export function decodeQueryComponent(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

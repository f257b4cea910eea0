/**
 * Written as an absolute http(s) URL: `scheme://`, no backslash, tab or line break, nothing blank at
 * the end. The URL parser is lenient with all of these (`https:host/x` and `https:\\host` get their
 * slashes, tabs and line breaks are dropped, the ends are trimmed), but the value is stored and read
 * by other bots as it was sent, so a form only a lenient parser reads as intended is refused.
 */
const WRITTEN_ABSOLUTE = /^https?:\/\/[^\\\t\n\r]*[^\\\s]$/i;

/** The URL, if `value` is an absolute http(s) URL written out in full; else undefined. */
export function parseHttpUrl(value: string): URL | undefined {
  if (!WRITTEN_ABSOLUTE.test(value)) return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/** An absolute http(s) URL (what chat platforms accept for attachments, avatars and images). */
export function isHttpUrl(value: string): boolean {
  return parseHttpUrl(value) !== undefined;
}

/**
 * ASCII characters no URL holds as they are (controls, space, `"`, `<`, `>`, backtick, braces, `|`, `^`): a bot
 * that builds its query by hand sends `%20` once, and the value arrives with a space. They are
 * percent-encoded, as a browser would; everything else is kept as sent.
 */
const NOT_IN_URLS = /[\x00-\x20\x7f"<>`{}|^]/g;

export const encodeCharactersNotInUrls = (value: string) =>
  value.replace(NOT_IN_URLS, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);

// Checks the validator cannot make on its own, run before it: the URL decodes (the query parser
// would turn a malformed escape into U+FFFD or keep it literally, and the value would be stored so),
// query keys are plain names, and integer parameters are written as plain decimal integers (the
// validator's coercion would accept "Infinity", "1e3" or "0x10"). Each failure is a 400 naming the
// parameter.
import type { RequestHandler } from 'express';
import type { Issue } from '../../domain/issues.ts';
import { queryParameters, type SpecIndex } from '../../spec/specIndex.ts';
import { invalid } from '../problem.ts';
import { decodeQueryComponent, rawQueryPairs } from './queryText.ts';

/** Every query parameter the spec declares: its path template, name and schema type. */
const queryParametersOf = (spec: SpecIndex) =>
  spec.operations.flatMap((operation) => queryParameters(operation).map((p) => ({ path: operation.path, name: p.name, type: p.type })));

/** Query parameters of one schema type: names of that type wherever declared, and names of it only on some paths. */
export interface NamesOfType {
  everywhere: Set<string>;
  /**
   * A name that is of another type elsewhere (`log_chat_a`: a log channel ID for updateEndpoint, a
   * flag for removeFromEndpoint; `last_event_id`: a position for streamAllEvents, an event ID of
   * text for streamEndpointEvents).
   */
  onPaths: { path: RegExp; names: Set<string> }[];
}

/** A path template as a pattern: `{x}` is one segment; routing ignores letter case and a trailing slash. */
const pathPattern = (template: string) =>
  new RegExp(
    `^${template
      .split(/\{[^}]+\}/)
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('[^/]+')}/?$`,
    'i',
  );

/** The query parameters of `type` in the spec (read once at start-up). */
export function queryNamesOfType(spec: SpecIndex, type: 'integer' | 'boolean'): NamesOfType {
  const declared = queryParametersOf(spec);
  const elsewhere = new Set(declared.filter((p) => p.type !== type).map((p) => p.name));
  const everywhere = new Set(declared.filter((p) => p.type === type && !elsewhere.has(p.name)).map((p) => p.name));
  const byPath = new Map<string, Set<string>>();
  for (const p of declared) {
    if (p.type !== type || !elsewhere.has(p.name)) continue;
    if (!byPath.has(p.path)) byPath.set(p.path, new Set());
    byPath.get(p.path)!.add(p.name);
  }
  return { everywhere, onPaths: [...byPath].map(([path, names]) => ({ path: pathPattern(path), names })) };
}

const DECIMAL_INTEGER = /^-?\d+$/;
const NOT_UTF8 = 'is not valid percent-encoded UTF-8';

/**
 * An escape that is not `%00`-`%7F`. Escapes in that range each decode to one ASCII character and
 * cannot be malformed, so a query without any other (`%20`, `%3A`, ...: what bots send) needs no
 * decoding to be checked. Buys: updates −8% CPU, +9% requests/s (BENCHMARKS.md, 7cded57).
 */
const ESCAPE_TO_CHECK = /%(?![0-7][0-9A-Fa-f])/;

/** Query keys and values that are not valid percent-encoded UTF-8 (`%ZZ`, `%FF`, an encoded surrogate). */
function malformedEscapes(url: string, issues: Issue[]): void {
  const q = url.indexOf('?');
  if (q === -1 || !ESCAPE_TO_CHECK.test(url.slice(q + 1))) return; // the common case: nothing to decode
  for (const { key, value } of rawQueryPairs(url.slice(q + 1))) {
    if (!key.includes('%') && !value?.includes('%')) continue; // nothing to get wrong
    const decodedKey = decodeQueryComponent(key);
    if (decodedKey === undefined || (value !== undefined && decodeQueryComponent(value) === undefined)) {
      issues.push({ parameter: decodedKey ?? key, in: 'query', message: NOT_UTF8 });
    }
  }
}

/**
 * No operation has more than 35 query parameters. A request with many more is refused before its
 * query is parsed: a 128 KiB head holds 20,000 keys, and parsing, checking and logging them cost the
 * event loop a quarter of a second per request, without authentication or rate limit.
 */
export const MAX_QUERY_PARAMETERS = 100;

/** Non-empty pairs of the query, counted up to one past the maximum (`&&` separates nothing). */
function countQueryParameters(url: string): number {
  const q = url.indexOf('?');
  if (q === -1) return 0;
  let count = 0;
  for (let start = q + 1; start <= url.length && count <= MAX_QUERY_PARAMETERS; ) {
    const at = url.indexOf('&', start);
    const end = at === -1 ? url.length : at;
    if (end > start) count++;
    start = end + 1;
  }
  return count;
}

const decodes = (segment: string) => {
  try {
    decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
};

/**
 * The path parameter an undecodable segment of `path` stands in, by the first template the path
 * matches (`/admin/bots/%C3%28` is the `bot` of `/admin/bots/{bot}`); `endpoint` when none matches.
 */
export function undecodablePathParameter(templates: readonly string[], path: string): string {
  const at = path.split('/').findIndex((segment) => !decodes(segment));
  for (const template of templates) {
    if (!pathPattern(template).test(path)) continue;
    const name = /^\{(.+)\}$/.exec(template.split('/')[at] ?? '')?.[1];
    if (name) return name;
  }
  return 'endpoint';
}

export function requestHygiene(spec: SpecIndex): RequestHandler {
  const integers = queryNamesOfType(spec, 'integer');
  const booleansOnPaths = queryNamesOfType(spec, 'boolean').onPaths;
  const { pathTemplates } = spec;
  const isInteger = (key: string, path: string) =>
    integers.everywhere.has(key) || integers.onPaths.some((p) => p.names.has(key) && p.path.test(path));
  return (req, _res, next) => {
    // The booleans the query parser leaves as sent (their names are text on other paths), in any letter case here too.
    for (const { path, names } of booleansOnPaths) {
      if (!path.test(req.path)) continue;
      for (const name of names) {
        const value = req.query[name];
        if (typeof value === 'string' && /^(true|false)$/i.test(value)) req.query[name] = value.toLowerCase();
      }
    }
    if (countQueryParameters(req.originalUrl) > MAX_QUERY_PARAMETERS) {
      return next(invalid([{ parameter: 'query', in: 'query', message: `holds more than ${MAX_QUERY_PARAMETERS} parameters` }]));
    }
    if (!decodes(req.path))
      return next(invalid([{ parameter: undecodablePathParameter(pathTemplates, req.path), in: 'path', message: NOT_UTF8 }]));
    const issues: Issue[] = [];
    malformedEscapes(req.originalUrl, issues);
    // A Set, not a search of `issues`: a hostile query holds ~26,000 keys (128 KiB), and a search per
    // key made that quadratic (1.6 s of the event loop for one request).
    const named = new Set(issues.map((issue) => issue.parameter));
    for (const [key, value] of Object.entries(req.query)) {
      if (named.has(key)) continue;
      if (/[[\]]/.test(key)) issues.push({ parameter: key, in: 'query', message: 'unknown parameter (bracket notation is not supported)' });
      else if (
        typeof value === 'string' &&
        isInteger(key, req.path) &&
        !(DECIMAL_INTEGER.test(value) && Number.isSafeInteger(Number(value)))
      ) {
        issues.push({ parameter: key, in: 'query', message: 'must be a decimal integer' });
      }
    }
    next(issues.length > 0 ? invalid(issues) : undefined);
  };
}

// Answers made before the app sees a request, for what Node would otherwise answer with a bare
// status line or not at all: a missing Host, a request target that is no URL, an unsupported
// `Expect`, a CONNECT. Problem documents with the headers every answer carries, like the app's own.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { invalid, problemFor } from '../problem.ts';
import { JSON_API_HEADERS, headerLines, securityHeaderList } from './securityHeaders.ts';

/** The security headers every answer carries. */
const SECURITY_HEADERS = securityHeaderList(JSON_API_HEADERS.helmet, JSON_API_HEADERS.extra);

/**
 * The request target as Express expects it: an absolute-form target (`GET http://host/path`, which
 * HTTP/1.1 servers must accept) becomes its path and query; undefined when it cannot be parsed.
 */
export function originForm(target: string): string | undefined {
  if (target.startsWith('/')) return target;
  if (!/^https?:\/\//i.test(target)) return target === '*' ? target : undefined;
  try {
    const url = new URL(target);
    return url.pathname + url.search;
  } catch {
    return undefined;
  }
}

/** Answers a problem document before the app sees the request, with the headers every answer carries. */
export function answerEarly(res: ServerResponse, status: 400 | 404 | 417, body: object): void {
  const text = JSON.stringify(body);
  for (const [name, value] of SECURITY_HEADERS) res.setHeader(name, value);
  res.writeHead(status, { 'content-type': 'application/problem+json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Node answers an `Expect` other than `100-continue` with a bare 417 unless told how. */
export function rejectExpectation(_req: IncomingMessage, res: ServerResponse): void {
  answerEarly(res, 417, problemFor(417, 'Only "Expect: 100-continue" is supported.'));
}

export function rejectTarget(res: ServerResponse): void {
  const p = invalid([{ parameter: 'endpoint', in: 'path', message: 'the request target is not a valid URL' }]);
  answerEarly(res, 400, problemFor(400, p.message, undefined, p.errors));
}

/**
 * HTTP/1.1 requires a Host header (RFC 9112 §3.2). Node's own check answers a bare 400 without a body
 * or the security headers, so it is turned off and made here.
 */
export function rejectMissingHost(res: ServerResponse): void {
  const p = invalid([{ parameter: 'Host', in: 'header', message: 'is required in an HTTP/1.1 request' }]);
  res.setHeader('Connection', 'close');
  answerEarly(res, 400, problemFor(400, p.message, undefined, p.errors));
}

export const needsHost = (req: IncomingMessage) =>
  req.httpVersionMajor === 1 && req.httpVersionMinor >= 1 && req.headers.host === undefined;

const SECURITY_HEADER_LINES = headerLines(SECURITY_HEADERS);

/** A CONNECT request (a tunnel): Node leaves it unanswered unless told how. This is no proxy. */
export function rejectConnect(_req: IncomingMessage, socket: Duplex): void {
  const body = JSON.stringify(problemFor(405, 'CONNECT is not supported: this server is not a proxy.'));
  socket.on('error', () => undefined);
  socket.end(
    'HTTP/1.1 405 Method Not Allowed\r\n' +
      'Allow: GET, HEAD, POST, OPTIONS\r\n' +
      'Content-Type: application/problem+json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      SECURITY_HEADER_LINES +
      'Connection: close\r\n\r\n' +
      body,
  );
}

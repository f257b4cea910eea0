// A deliberately dumb HTTP/1.1 client over a TCP socket: the request goes out byte for byte as built
// (no URL parsing, no percent-encoding, no header normalisation), so hostile request-targets reach
// the server unchanged. One connection per request, `Connection: close`.
import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Map<string, string>; // lower-case names; repeated headers joined with ", "
  body: Buffer;
  /**
   * Node's HTTP parser rejected the request (oversized head, malformed request line) before the app
   * saw it: the server's clientError answer, a problem document without X-Request-Id (the app sets
   * one on every response) and without `errors` (which the server's answer to an unparseable request
   * target, also given before the app, always has).
   */
  fromParser: boolean;
}

export interface RawRequest {
  method: string;
  /** The request-target exactly as sent (may hold any byte). */
  target: Buffer;
  headers: [string, string][];
  body?: Buffer;
}

export function encodeRequest(host: string, req: RawRequest): Buffer {
  const headers: [string, string][] = [['Host', host], ['Connection', 'close'], ...req.headers];
  const hasLength = req.headers.some(([k]) => /^(content-length|transfer-encoding)$/i.test(k));
  if (!hasLength && (req.body !== undefined || req.method === 'POST')) headers.push(['Content-Length', String(req.body?.length ?? 0)]);
  const head = `${headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
  return Buffer.concat([
    Buffer.from(`${req.method} `, 'latin1'),
    req.target,
    Buffer.from(` HTTP/1.1\r\n${head}`, 'latin1'),
    req.body ?? Buffer.alloc(0),
  ]);
}

/** Size of the request line plus headers, as Node's header-size limit counts it (roughly). */
export const headSize = (bytes: Buffer) => {
  const end = bytes.indexOf('\r\n\r\n');
  return end === -1 ? bytes.length : end + 4;
};

interface Parsed {
  response: RawResponse;
  complete: boolean;
}

function parse(data: Buffer, closed: boolean, method: string): Parsed | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const lines = data.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1]);
  if (!Number.isInteger(status)) throw new Error(`unparseable status line: ${JSON.stringify(lines[0])}`);
  const headers = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i <= 0) continue;
    const name = line.slice(0, i).trim().toLowerCase();
    const value = line.slice(i + 1).trim();
    headers.set(name, headers.has(name) ? `${headers.get(name)}, ${value}` : value);
  }
  const rest = data.subarray(end + 4);
  const make = (body: Buffer, complete: boolean): Parsed => ({
    response: { status, headers, body, fromParser: !headers.has('x-request-id') && !body.includes('"errors":') },
    complete,
  });
  if (method === 'HEAD' || status === 204 || status === 304) return make(Buffer.alloc(0), true);
  // An event stream does not end: its head (and what came with it) is the answer.
  if (/^text\/event-stream/i.test(headers.get('content-type') ?? '')) return make(rest, true);
  const length = headers.get('content-length');
  if (length !== undefined) {
    const n = Number(length);
    return rest.length >= n ? make(rest.subarray(0, n), true) : make(rest, false);
  }
  if (/chunked/i.test(headers.get('transfer-encoding') ?? '')) {
    const chunks: Buffer[] = [];
    let at = 0;
    for (;;) {
      const lineEnd = rest.indexOf('\r\n', at);
      if (lineEnd === -1) return make(Buffer.concat(chunks), false);
      const size = parseInt(rest.subarray(at, lineEnd).toString('latin1'), 16);
      if (size === 0) return make(Buffer.concat(chunks), true);
      if (rest.length < lineEnd + 2 + size + 2) return make(Buffer.concat(chunks), false);
      chunks.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
  }
  return make(rest, closed);
}

/** Sends one request and reads one response. Rejects on timeout or when no complete response came back. */
export function exchange(port: number, bytes: Buffer, method: string, timeoutMs = 20_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' });
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (error?: Error) => {
      if (done) return;
      const data = Buffer.concat(chunks);
      let parsed: Parsed | undefined;
      try {
        parsed = parse(data, true, method);
      } catch (e) {
        error = e as Error;
      }
      done = true;
      clearTimeout(timer);
      socket.destroy();
      if (parsed?.complete) resolve(parsed.response);
      else
        reject(
          new Error(
            `no complete response (${error?.message ?? 'connection closed'}); received ${JSON.stringify(data.subarray(0, 300).toString('latin1'))}`,
          ),
        );
    };
    const timer = setTimeout(() => finish(new Error(`timeout after ${timeoutMs} ms`)), timeoutMs);
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      try {
        if (parse(Buffer.concat(chunks), false, method)?.complete) finish();
      } catch {
        finish();
      }
    });
    // The server may answer early (413, 431) and reset while we are still writing: a complete answer wins.
    socket.on('error', (e) => finish(e));
    socket.on('close', () => finish());
    socket.write(bytes);
  });
}

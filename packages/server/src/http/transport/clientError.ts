// Answers for requests that Node's HTTP parser rejects before the app sees them (a head over the
// limit, a malformed request line or header, a head that arrives too slowly). Node's own answers are
// a bare status line; these are problem documents like every other error, written to the socket
// directly since no request or response object exists yet.
import type { Socket } from 'node:net';
import { type ProblemStatus, problemFor } from '../problem.ts';
import { JSON_API_HEADERS, headerLines, securityHeaderList } from './securityHeaders.ts';

/** The parser's error: `code` names the failure (llhttp's `HPE_*`, or Node's timeout). */
interface ParserError extends Error {
  code?: string;
  reason?: string;
}

const REASONS: Partial<Record<ProblemStatus, string>> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  413: 'Payload Too Large',
  431: 'Request Header Fields Too Large',
};

/** The status and detail for a parser error, as Node would choose the status. */
export function clientErrorAnswer(error: ParserError, maxHeadBytes: number): { status: ProblemStatus; detail: string } {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, detail: `The request line and headers exceed ${maxHeadBytes / 1024} KiB together.` };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, detail: 'The chunk extensions of the request body are too large.' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, detail: 'The request did not arrive in time.' };
    default: {
      // llhttp's reason is a fixed phrase ("Invalid method encountered"), never request data.
      const reason = typeof error.reason === 'string' && error.reason !== '' ? `: ${error.reason}` : '';
      return { status: 400, detail: `The request is not valid HTTP/1.1${reason}${error.code ? ` (${error.code})` : ''}.` };
    }
  }
}

/** A `clientError` listener for an `http.Server`. */
export function answerClientError(maxHeadBytes: number): (error: ParserError, socket: Socket) => void {
  // The security headers every other answer carries, as header lines.
  const security = headerLines(securityHeaderList(JSON_API_HEADERS.helmet, JSON_API_HEADERS.extra));
  return (error, socket) => {
    // A peer that reset the connection gets nothing; neither does one with a response already under
    // way on this connection (writing now would corrupt it), as in Node's own handler.
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (error.code !== 'ECONNRESET' && socket.writable && !inFlight?.headersSent) {
      const { status, detail } = clientErrorAnswer(error, maxHeadBytes);
      const body = JSON.stringify(problemFor(status, detail));
      socket.write(
        `HTTP/1.1 ${status} ${REASONS[status]}\r\n` +
          'Content-Type: application/problem+json; charset=utf-8\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\n` +
          security +
          'Connection: close\r\n\r\n' +
          body,
      );
    }
    socket.destroy(error);
  };
}

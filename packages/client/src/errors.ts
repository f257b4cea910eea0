import type { Problem } from './types.ts';

/**
 * The server answered with a non-2xx status. `problem` is the RFC 9457 body when the server sent
 * `application/problem+json`; otherwise one synthesised from the status (`type: "about:blank"`), with any
 * text body (shortened) as `detail`. The message never contains the request URL, so tokens do not leak
 * into logs.
 */
export class ChatbridgeError extends Error {
  override readonly name = 'ChatbridgeError';
  /** The HTTP status of the response. */
  readonly status: number;
  /** The problem document (as sent, or synthesised). */
  readonly problem: Problem;
  /** The operation that failed, e.g. `updateEndpoint`. */
  readonly operationId: string;
  /** The response, for its headers (e.g. `Retry-After`); its body has already been read. */
  readonly response: Response;

  constructor(operationId: string, response: Response, problem: Problem) {
    super(`${operationId} failed with ${response.status}: ${problem.title}: ${problem.detail}`);
    this.operationId = operationId;
    this.response = response;
    this.status = response.status;
    this.problem = problem;
  }

  /** Builds the error from a response and the body openapi-fetch read from it (JSON-parsed if it could be). */
  static fromResponse(operationId: string, response: Response, body: unknown): ChatbridgeError {
    return new ChatbridgeError(operationId, response, toProblem(response, body));
  }
}

/** The call was refused before any request was sent (missing admin token, unusable endpoint ID). */
export class ChatbridgeUsageError extends Error {
  override readonly name = 'ChatbridgeUsageError';
}

const MAX_DETAIL = 200;

function toProblem(response: Response, body: unknown): Problem {
  const mediaType = response.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  const fallbackTitle = response.statusText || `HTTP ${response.status}`;
  if (mediaType === 'application/problem+json' && isRecord(body)) {
    // Keep every member the server sent (instance, errors, extensions); fill any required one it left out.
    const detail = str(body.detail) ?? str(body.message) ?? fallbackTitle;
    return {
      ...body,
      type: str(body.type) ?? 'about:blank',
      title: str(body.title) ?? fallbackTitle,
      status: typeof body.status === 'number' ? body.status : response.status,
      detail,
      message: str(body.message) ?? detail,
    } as Problem;
  }
  const text = typeof body === 'string' ? body.trim() : body === undefined ? '' : JSON.stringify(body);
  const detail = text ? shorten(text) : fallbackTitle;
  return { type: 'about:blank', title: fallbackTitle, status: response.status, detail, message: detail };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function shorten(text: string): string {
  if (text.length <= MAX_DETAIL) return text;
  // Not between the two halves of a surrogate pair (an emoji): that would leave half a character.
  const cut = /[\uD800-\uDBFF]/.test(text[MAX_DETAIL - 1]!) ? MAX_DETAIL - 1 : MAX_DETAIL;
  return `${text.slice(0, cut)}…`;
}

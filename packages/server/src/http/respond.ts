// How a handler answers: `respond(res, operationId)` and one call naming the kind of body. Bodies are
// typed by the operation's declared response for the status, so an answer the spec does not declare
// does not compile. Errors are not answered here: a handler throws an HttpProblem (problem.ts).
import type { Response } from 'express';
import type { operations } from '@chatbridge/api';
import type { OperationId } from './operations.ts';
import { MESSAGE_NUMBER_HEADER } from './record/messageNumber.ts';
import { endAtTurnEnd } from './transport/endAtTurnEnd.ts';

type Responses<Op extends OperationId> = operations[Op]['responses'];
type Status<Op extends OperationId> = keyof Responses<Op> & number;
type JsonBody<R> = R extends { content: { 'application/json': infer B } } ? B : never;
/** The JSON body the spec declares for `Op`'s `S` response. */
export type BodyOf<Op extends OperationId, S extends Status<Op>> = JsonBody<Responses<Op>[S]>;
/** The statuses of `Op` whose response has no body. */
type EmptyStatus<Op extends OperationId> = { [S in Status<Op>]: Responses<Op>[S] extends { content: unknown } ? never : S }[Status<Op>];

/** A body that is already JSON text (a record as committed), with the means to check it. */
export interface JsonText<B> {
  json: string;
  /** The same body, parsed: asked for only when responses are validated. */
  parsed: () => B;
  /** json's UTF-8 length, when the caller knows it. */
  bytes?: number | undefined;
}

export interface JsonTextOptions {
  /** Responses are checked against the spec (AppDeps.validateResponses): the parsed body goes through res.json. */
  validateResponses: boolean;
  /** `Chatbridge-Message-Number`: the message the record shows; undefined while the endpoint is idle (no header). */
  messageNumber?: number | undefined;
  /** End with the other answers of this event-loop turn (transport/endAtTurnEnd.ts) rather than at once. */
  endAtTurnEnd?: boolean;
}

class Reply<Op extends OperationId> {
  private readonly res: Response;
  constructor(res: Response) {
    this.res = res;
  }

  /** A JSON body typed by the operation's declared response for `status`. */
  json<S extends Status<Op>>(status: S, body: BodyOf<Op, S>): void {
    this.res.status(status).json(body);
  }

  /**
   * A body that is already JSON text, sent without parsing and re-serialising it. When responses are
   * validated, the parsed body goes through res.json instead, where the validator sees it.
   */
  jsonText<S extends Status<Op>>(status: S, body: JsonText<BodyOf<Op, S>>, options: JsonTextOptions): void {
    const { res } = this;
    if (options.messageNumber !== undefined) res.setHeader(MESSAGE_NUMBER_HEADER, String(options.messageNumber));
    if (options.validateResponses) return this.json(status, body.parsed());
    // Straight to node:http: Express's send() would re-parse the content type and copy the text into
    // a Buffer to measure it. Node itself leaves the body out for HEAD. The head is rendered before the
    // body is given: end() with the head still unrendered counts the body's UTF-8 bytes again.
    // Buys: the committed text sent as it is (BENCHMARKS.md, 6796692); its length counted once, GET
    // 7.6k → under 2.1k instructions in Utf8Length (1087926).
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    res.setHeader('Content-Length', body.bytes ?? Buffer.byteLength(body.json));
    res.writeHead(status);
    if (options.endAtTurnEnd) endAtTurnEnd(res, body.json);
    else res.end(body.json);
  }

  /** Text of another media type (a page, the metrics). */
  text(status: Status<Op>, contentType: string, body: string): void {
    this.res.status(status).type(contentType).send(body);
  }

  /** No body (`204`). */
  empty(status: EmptyStatus<Op>): void {
    this.res.status(status).end();
  }
}

/** The answer to a request of `operationId`. */
export const respond = <Op extends OperationId>(res: Response, _operationId: Op): Reply<Op> => new Reply<Op>(res);

// Typing that ties handlers to the spec: one handler per operationId of the generated `operations`
// interface, so a missing or misnamed handler does not compile.
import type { Request, Response } from 'express';
import type { operations } from '@chatbridge/api';
import { endAtTurnEnd } from './transport/endAtTurnEnd.ts';

/** `webhooks` operations (`deliverMessage`) are requests the service sends, not ones it serves. */
export type OperationId = Exclude<keyof operations, 'deliverMessage'>;
export type Handler = (req: Request, res: Response) => Promise<void> | void;
export type Handlers = { [K in OperationId]: Handler };

type Responses<Op extends OperationId> = operations[Op]['responses'];
type Query<Op extends OperationId> = operations[Op]['parameters'] extends { query?: infer Q } ? NonNullable<Q> : never;

/**
 * The operation's query parameters as the generated types declare them. express-openapi-validator has
 * checked and coerced every one against the spec before a handler runs, so the declared types hold.
 */
export const queryOf = <Op extends OperationId>(req: Request, _op: Op): Query<Op> => req.query as unknown as Query<Op>;
type JsonBody<R> = R extends { content: { 'application/json': infer B } } ? B : never;

/** Sends a success body typed by the operation's declared response for that status. */
export function reply<Op extends OperationId, S extends keyof Responses<Op> & number>(
  res: Response,
  _op: Op,
  status: S,
  body: JsonBody<Responses<Op>[S]>,
): void {
  res.status(status).json(body);
}

/**
 * Sends a success body that is already JSON text (a record as committed), without parsing and
 * re-serialising it. When responses are validated against the spec, the parsed body goes through
 * res.json instead, where the validator sees it. `end`: at once, or with the other responses of this
 * event-loop turn (see endAtTurnEnd.ts). `bytes`: the text's UTF-8 length, when the caller knows it.
 */
export function replyJsonText<Op extends OperationId, S extends keyof Responses<Op> & number>(
  res: Response,
  op: Op,
  status: S,
  json: string,
  parsed: () => JsonBody<Responses<Op>[S]>,
  validateResponses: boolean,
  end: 'now' | 'at turn end' = 'now',
  bytes: number = Buffer.byteLength(json),
): void {
  if (validateResponses) return reply(res, op, status, parsed());
  // Straight to node:http: Express's send() would re-parse the content type and copy the text into
  // a Buffer to measure it. Node itself leaves the body out for HEAD. The head is rendered before the
  // body is given: end() with the head still unrendered counts the body's UTF-8 bytes again.
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', bytes);
  res.writeHead(status);
  if (end === 'now') res.end(json);
  else endAtTurnEnd(res, json);
}

interface OpenApiMeta {
  pathParams?: Record<string, string>;
  schema?: { operationId?: string; security?: Record<string, string[]>[] };
}

export const openapiOf = (req: Request): OpenApiMeta => (req as Request & { openapi?: OpenApiMeta }).openapi ?? {};

/** A path parameter, already validated against the spec. */
export const pathParam = (req: Request, name: string): string => openapiOf(req).pathParams?.[name] ?? '';

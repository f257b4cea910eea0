// Typing that ties handlers to the spec: one handler per operationId of the generated `operations`
// interface, so a missing or misnamed handler does not compile; and what a handler reads of the
// operation the validator matched (its path and query parameters). Answers are respond.ts's.
import type { Request, Response } from 'express';
import type { operations } from '@chatbridge/api';

/** `webhooks` operations (a copy's create, edit and delete) are requests the service sends, not ones it serves. */
export type OperationId = Exclude<keyof operations, 'deliverMessage' | 'editDeliveredMessage' | 'deleteDeliveredMessage'>;
export type Handler = (req: Request, res: Response) => Promise<void> | void;
export type Handlers = { [K in OperationId]: Handler };

type Query<Op extends OperationId> = operations[Op]['parameters'] extends { query?: infer Q } ? NonNullable<Q> : never;

/**
 * The operation's query parameters as the generated types declare them. express-openapi-validator has
 * checked and coerced every one against the spec before a handler runs, so the declared types hold.
 */
export const queryOf = <Op extends OperationId>(req: Request, _op: Op): Query<Op> => req.query as unknown as Query<Op>;

interface OpenApiMeta {
  pathParams?: Record<string, string>;
  schema?: { operationId?: string; security?: Record<string, string[]>[] };
}

export const openapiOf = (req: Request): OpenApiMeta => (req as Request & { openapi?: OpenApiMeta }).openapi ?? {};

/** A path parameter, already validated against the spec. */
export const pathParam = (req: Request, name: string): string => openapiOf(req).pathParams?.[name] ?? '';

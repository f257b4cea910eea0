// Which query parameter names each operation takes, and the check that names every other one.
// express-openapi-validator can refuse unknown names itself, but it throws at the first one and so
// hides the request's other errors, while the spec promises one 400 naming every offending parameter.
// The validator is therefore told to let unknown names through (allowUnknownQueryParameters), and this
// check answers for them: after the validator when it accepts the request, and beside its findings in
// the error handler when it does not.
import type { Request, RequestHandler } from 'express';
import type { Issue } from '../../domain/issues.ts';
import { queryParameters, type SpecIndex } from '../../spec/specIndex.ts';
import { openapiOf } from '../operations.ts';
import { invalid } from '../problem.ts';

/** The query names one operation takes. */
export interface QueryNames {
  known: ReadonlySet<string>;
  /** Parameters declared with `allowEmptyValue` (any other may not be sent as `name=`). */
  emptyAllowed: ReadonlySet<string>;
}

/**
 * Each operation's query names, by operationId (read once at start-up): its own and its path's
 * query parameters, and the query names of the API-key schemes its security accepts.
 */
export function queryNamesByOperation(spec: SpecIndex): Map<string, QueryNames> {
  const byOperation = new Map<string, QueryNames>();
  for (const operation of spec.operations) {
    const query = queryParameters(operation);
    const known = new Set(query.map((p) => p.name));
    for (const requirement of operation.security) {
      for (const scheme of Object.keys(requirement).map((name) => spec.securityScheme(name))) {
        if (scheme?.type === 'apiKey' && scheme.in === 'query' && scheme.name) known.add(scheme.name);
      }
    }
    const emptyAllowed = new Set(query.filter((p) => p.allowEmptyValue).map((p) => p.name));
    byOperation.set(operation.operationId, { known, emptyAllowed });
  }
  return byOperation;
}

/** A query's names the operation does not take, and its empty values where none is allowed. */
export function queryNameIssues(names: QueryNames, query: Record<string, unknown>): Issue[] {
  const issues: Issue[] = [];
  for (const name of Object.keys(query)) {
    if (!names.known.has(name)) issues.push({ parameter: name, in: 'query', message: 'unknown parameter' });
    else if (query[name] === '' && !names.emptyAllowed.has(name))
      issues.push({ parameter: name, in: 'query', message: 'must not be empty' });
  }
  return issues;
}

export interface QueryNameCheck {
  /** The issues of a request the validator has matched to an operation (none for any other). */
  issuesOf(req: Request): Issue[];
  /** Runs after the validator: a 400 naming every issue, if there is one. */
  middleware: RequestHandler;
}

export function queryNameCheck(spec: SpecIndex): QueryNameCheck {
  const byOperation = queryNamesByOperation(spec);
  const issuesOf = (req: Request): Issue[] => {
    const names = byOperation.get(openapiOf(req).schema?.operationId ?? '');
    return names ? queryNameIssues(names, req.query as Record<string, unknown>) : [];
  };
  return {
    issuesOf,
    middleware: (req, _res, next) => {
      const issues = issuesOf(req);
      next(issues.length > 0 ? invalid(issues) : undefined);
    },
  };
}

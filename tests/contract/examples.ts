// Requests made of the spec's own examples, as an example-driven tool (Portman, Dredd, Schemathesis'
// examples phase) builds them: every parameter that has an example is sent with it, the request body
// is the first named example of the body.
import { deref, operation, spec } from './spec.ts';

type Json = Record<string, any>;

export interface ExampleRequest {
  method: string;
  /** The path with its parameters' examples in place. */
  path: string;
  query: [string, string][];
  headers: Record<string, string>;
  body: unknown;
}

/** Every operationId of the spec's `paths` (the webhooks are requests the service sends, not serves). */
export function operationIds(): string[] {
  return Object.values<Json>(spec.paths).flatMap((item) =>
    Object.values<Json>(item).flatMap((op) => (typeof op?.operationId === 'string' ? [op.operationId] : [])),
  );
}

const exampleOf = (parameter: Json): unknown =>
  parameter.example ?? Object.values<Json>(parameter.examples ?? {}).map((e) => deref(e).value)[0] ?? parameter.schema?.example;

/**
 * The request `operationId`'s examples make. The credentials are the caller's: `token` replaces the
 * `token` parameter's example (an example token is valid nowhere but on the mock), and `adminToken`
 * is sent as the bearer of operations secured by `adminBearer`.
 */
export function exampleRequest(operationId: string, credentials: { token?: string; adminToken?: string } = {}): ExampleRequest {
  const { path, method, op } = operation(operationId);
  const parameters = [...(spec.paths[path].parameters ?? []), ...(op.parameters ?? [])].map(deref);
  let url = path;
  const query: [string, string][] = [];
  const headers: Record<string, string> = {};
  for (const parameter of parameters) {
    const example = parameter.name === 'token' && credentials.token !== undefined ? credentials.token : exampleOf(parameter);
    if (example === undefined) continue;
    const value = typeof example === 'string' ? example : JSON.stringify(example);
    if (parameter.in === 'path') url = url.replace(`{${parameter.name}}`, encodeURIComponent(value));
    else if (parameter.in === 'query') query.push([parameter.name, value]);
    else if (parameter.in === 'header') headers[parameter.name.toLowerCase()] = value;
  }
  const secured = (op.security ?? []).some((requirement: Json) => 'adminBearer' in requirement);
  if (secured && credentials.adminToken !== undefined) headers.authorization = `Bearer ${credentials.adminToken}`;
  const json = op.requestBody ? deref(op.requestBody).content?.['application/json'] : undefined;
  const body = json ? (Object.values<Json>(json.examples ?? {}).map((e) => deref(e).value)[0] ?? json.example) : undefined;
  if (body !== undefined) headers['content-type'] = 'application/json';
  return { method: method.toUpperCase(), path: url, query, headers, body };
}

/** Sends `request` to `baseUrl`; extra headers (such as `Prefer`) are added to the example's. */
export function sendExample(
  baseUrl: string,
  request: ExampleRequest,
  extraHeaders: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<Response> {
  const query = request.query.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`).join('&');
  return fetch(`${baseUrl}${request.path}${query ? `?${query}` : ''}`, {
    method: request.method,
    headers: { ...request.headers, ...extraHeaders },
    body: request.body === undefined ? undefined : JSON.stringify(request.body),
    signal,
  });
}

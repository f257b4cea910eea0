// The bundled OpenAPI document, reduced to what the hostile-input properties generate from: every
// operation with its path/query parameters (schemas resolved), its security and its request body.
// Nothing here knows a parameter by name, so an operation or parameter added to the spec is covered
// by the next run without touching the tests.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { bundledSpecPath } from '@chatbridge/api';

export interface Schema {
  type?: string | string[];
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  enum?: unknown[];
  pattern?: string;
  format?: string;
  default?: unknown;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  oneOf?: Schema[];
}

export interface ParamSpec {
  name: string;
  in: 'query' | 'path' | 'header' | 'cookie';
  required: boolean;
  schema: Schema;
  allowReserved: boolean;
  allowEmptyValue: boolean;
  example?: unknown;
}

export type Security =
  | { kind: 'apiKeyQuery'; scheme: string; parameter: string }
  | { kind: 'bearer'; scheme: string }
  | { kind: 'other'; scheme: string };

export interface BodySpec {
  required: boolean;
  mediaTypes: string[];
  schema: Schema;
}

export interface OperationSpec {
  operationId: string;
  method: string; // upper case
  path: string; // template, e.g. /update/{endpoint}
  params: ParamSpec[];
  /** Alternatives as in the spec (any one satisfies); empty: no authentication. */
  security: Security[];
  body?: BodySpec;
  /** Status codes the spec declares (as strings, `default` included). */
  responses: string[];
}

export interface ApiSpec {
  operations: OperationSpec[];
  /** Path templates with the methods the spec defines on each. */
  paths: Map<string, string[]>;
  /** Problem `type` fragment per status, read from the Problem schema's description. */
  problemKinds: Map<number, string>;
  problemTypeBase: string | undefined;
}

type Json = Record<string, unknown>;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** Replaces every local `$ref` by (a resolved copy of) its target. */
function resolveRefs(node: unknown, root: Json, depth = 0): unknown {
  if (depth > 50) throw new Error('spec: $ref nesting too deep (cycle?)');
  if (Array.isArray(node)) return node.map((n) => resolveRefs(n, root, depth + 1));
  if (node === null || typeof node !== 'object') return node;
  const obj = node as Json;
  if (typeof obj.$ref === 'string') {
    const ref = obj.$ref;
    if (!ref.startsWith('#/')) throw new Error(`spec: only local $ref are supported, got ${ref}`);
    let target: unknown = root;
    for (const part of ref.slice(2).split('/')) target = (target as Json)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    if (target === undefined) throw new Error(`spec: unresolved ${ref}`);
    return resolveRefs(target, root, depth + 1);
  }
  return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, resolveRefs(v, root, depth + 1)]));
}

function toParam(raw: Json): ParamSpec {
  const schema = (raw.schema ?? {}) as Schema;
  return {
    name: String(raw.name),
    in: raw.in as ParamSpec['in'],
    required: raw.required === true,
    schema,
    allowReserved: raw.allowReserved === true,
    allowEmptyValue: raw.allowEmptyValue === true,
    ...(raw.example !== undefined && { example: raw.example }),
  };
}

function toSecurity(requirements: Json[] | undefined, schemes: Json): Security[] {
  const out: Security[] = [];
  for (const requirement of requirements ?? []) {
    for (const name of Object.keys(requirement)) {
      // Bot keys are an alternative to the endpoint token (and, on lookup, to the admin token) that
      // this model leaves out: it sends the token or the admin token; bot keys have tests of their own.
      if (name === 'botKey') continue;
      const s = (schemes[name] ?? {}) as Json;
      if (s.type === 'apiKey' && s.in === 'query') out.push({ kind: 'apiKeyQuery', scheme: name, parameter: String(s.name) });
      else if (s.type === 'http' && String(s.scheme).toLowerCase() === 'bearer') out.push({ kind: 'bearer', scheme: name });
      else out.push({ kind: 'other', scheme: name });
    }
  }
  return out;
}

export function loadSpec(path = bundledSpecPath): ApiSpec {
  const root = parse(readFileSync(path, 'utf8')) as Json;
  const doc = resolveRefs(root, root) as Json;
  const schemes = ((doc.components as Json | undefined)?.securitySchemes ?? {}) as Json;
  const operations: OperationSpec[] = [];
  const paths = new Map<string, string[]>();
  for (const [template, item] of Object.entries((doc.paths ?? {}) as Record<string, Json>)) {
    const shared = ((item.parameters ?? []) as Json[]).map(toParam);
    const methods: string[] = [];
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      methods.push(method.toUpperCase());
      const own = ((op.parameters ?? []) as Json[]).map(toParam);
      // Operation-level parameters override path-level ones with the same name and location.
      const params = [...shared.filter((s) => !own.some((o) => o.name === s.name && o.in === s.in)), ...own];
      const requestBody = op.requestBody as Json | undefined;
      const content = (requestBody?.content ?? {}) as Record<string, Json>;
      const firstMedia = Object.values(content)[0];
      operations.push({
        operationId: String(op.operationId ?? `${method} ${template}`),
        method: method.toUpperCase(),
        path: template,
        params,
        security: toSecurity((op.security ?? doc.security) as Json[] | undefined, schemes),
        ...(requestBody && {
          body: { required: requestBody.required === true, mediaTypes: Object.keys(content), schema: (firstMedia?.schema ?? {}) as Schema },
        }),
        responses: Object.keys((op.responses ?? {}) as Json),
      });
    }
    paths.set(template, methods);
  }

  // "`#validation` (400), `#unauthorized` (401), ..." in the Problem schema's description.
  const problem = (((doc.components as Json).schemas as Json | undefined)?.Problem ?? {}) as Json;
  const problemKinds = new Map<number, string>();
  for (const m of String(problem.description ?? '').matchAll(/`#([a-z-]+)`\s*\((\d{3})/g)) problemKinds.set(Number(m[2]), m[1]!);
  const examples = ((doc.components as Json).examples ?? {}) as Record<string, Json>;
  const someType = Object.values(examples)
    .map((e) => (e.value as Json | undefined)?.type)
    .find((t): t is string => typeof t === 'string' && t.includes('#'));
  return { operations, paths, problemKinds, problemTypeBase: someType?.slice(0, someType.indexOf('#') + 1) };
}

/** The JSON-schema `type` of a schema, with `enum`-only schemas read as strings. */
export function typeOf(schema: Schema): string {
  const t = Array.isArray(schema.type) ? schema.type.find((x) => x !== 'null') : schema.type;
  if (t) return t;
  if (schema.oneOf) {
    const inner = schema.oneOf.map(typeOf).find((x) => x !== 'null' && x !== 'any');
    if (inner) return inner;
  }
  if (schema.enum?.every((e) => typeof e === 'string')) return 'string';
  return 'any';
}

// The bundled OpenAPI document and what the server asks of it outside express-openapi-validator: the
// parameters each operation takes (its path's and its own, `$ref`s resolved), the security it accepts,
// the path templates, and the document itself for compiling its schemas. One parse and one resolver
// serve the request checks (http/request/) and the import's schema checks (portability/).
//
// Loaded once per file and process: a parse of the 150 KB document takes tens of milliseconds, and a
// test process builds an app per server it starts. The document is frozen, so no reader can change
// what another reads.
import { readFileSync } from 'node:fs';
import { bundledSpecPath } from '@chatbridge/api';
import { parse as parseYaml } from 'yaml';

export type ParameterLocation = 'query' | 'path' | 'header' | 'cookie';

/** One alternative of an operation's `security`: scheme names, each with its scopes. */
export type SecurityRequirement = Readonly<Record<string, readonly string[]>>;

export interface SecurityScheme {
  readonly type?: string;
  /** For an `apiKey` scheme: where the key travels, and under which name. */
  readonly in?: string;
  readonly name?: string;
}

export interface SpecParameter {
  readonly name: string;
  readonly in: ParameterLocation;
  readonly allowEmptyValue: boolean;
  /** Its schema's `type` when that is one name (`$ref` followed); undefined otherwise. */
  readonly type: string | undefined;
  /** JSON pointer to the parameter's definition in the document (its component, or where it is written). */
  readonly pointer: string;
}

export interface SpecOperation {
  readonly operationId: string;
  /** Lower case, as the document writes it. */
  readonly method: string;
  /** The path template (`/update/{endpoint}`). */
  readonly path: string;
  /** The path's parameters and the operation's own; an own one replaces the path's of that name and place. */
  readonly parameters: readonly SpecParameter[];
  /** The operation's security, else the document's; empty: none needed. */
  readonly security: readonly SecurityRequirement[];
}

export interface SpecIndex {
  /** The file it was read from (the validator reads the same one). */
  readonly file: string;
  /** The parsed document, frozen. */
  readonly document: Readonly<Record<string, unknown>>;
  readonly pathTemplates: readonly string[];
  readonly operations: readonly SpecOperation[];
  operation(operationId: string): SpecOperation | undefined;
  securityScheme(name: string): SecurityScheme | undefined;
  /** What a local `$ref` (`#/components/...`) points at; throws when nothing is there. */
  resolve(ref: string): unknown;
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

type Node = Record<string, unknown>;
const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && !Array.isArray(value);
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** A JSON-pointer segment as written (`/` is `~1`, `~` is `~0`). */
const escapeSegment = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
const unescapeSegment = (segment: string) => segment.replace(/~1/g, '/').replace(/~0/g, '~');

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value)) deepFreeze(member);
  }
  return value;
}

function buildIndex(file: string, document: Node): SpecIndex {
  /** The node at a JSON pointer of the document (`/components/parameters/EndpointId`). */
  const at = (pointer: string): unknown => {
    let node: unknown = document;
    for (const segment of pointer.split('/').slice(1)) node = isNode(node) ? node[unescapeSegment(segment)] : undefined;
    return node;
  };
  const resolve = (ref: string): unknown => {
    if (!ref.startsWith('#/')) throw new Error(`the spec's $ref ${ref} is not local: bundle it first`);
    const found = at(ref.slice(1));
    if (found === undefined) throw new Error(`the spec's $ref ${ref} points at nothing`);
    return found;
  };
  /** A node and where it is defined, following `$ref`s. */
  const follow = (node: unknown, pointer: string): { node: unknown; pointer: string } => {
    for (let hops = 0; isNode(node) && typeof node.$ref === 'string'; hops++) {
      if (hops > 20) throw new Error(`the spec's $ref ${node.$ref} goes round in circles`);
      pointer = node.$ref.slice(1);
      node = resolve(node.$ref);
    }
    return { node, pointer };
  };
  const parameterOf = (written: unknown, writtenAt: string): SpecParameter | undefined => {
    const { node, pointer } = follow(written, writtenAt);
    if (!isNode(node) || typeof node.name !== 'string' || typeof node.in !== 'string') return undefined;
    const schema = follow(node.schema, `${pointer}/schema`).node;
    const type = isNode(schema) && typeof schema.type === 'string' ? schema.type : undefined;
    return { name: node.name, in: node.in as ParameterLocation, allowEmptyValue: node.allowEmptyValue === true, type, pointer };
  };
  const parametersAt = (owner: Node, ownerAt: string): SpecParameter[] =>
    list(owner.parameters).flatMap((p, i) => parameterOf(p, `${ownerAt}/parameters/${i}`) ?? []);

  const paths = isNode(document.paths) ? document.paths : {};
  const defaultSecurity = list(document.security) as SecurityRequirement[];
  const operations: SpecOperation[] = [];
  for (const [path, item] of Object.entries(paths)) {
    if (!isNode(item)) continue;
    const itemAt = `/paths/${escapeSegment(path)}`;
    const shared = parametersAt(item, itemAt);
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.has(method) || !isNode(op) || typeof op.operationId !== 'string') continue;
      const own = parametersAt(op, `${itemAt}/${method}`);
      const overridden = (p: SpecParameter) => own.some((o) => o.name === p.name && o.in === p.in);
      operations.push({
        operationId: op.operationId,
        method,
        path,
        parameters: [...shared.filter((p) => !overridden(p)), ...own],
        security: Array.isArray(op.security) ? (op.security as SecurityRequirement[]) : defaultSecurity,
      });
    }
  }
  const byId = new Map(operations.map((op) => [op.operationId, op]));
  const schemes = at('/components/securitySchemes');
  return {
    file,
    document,
    pathTemplates: Object.keys(paths),
    operations,
    operation: (operationId) => byId.get(operationId),
    securityScheme: (name) => {
      const scheme = isNode(schemes) ? follow(schemes[name], `/components/securitySchemes/${escapeSegment(name)}`).node : undefined;
      return isNode(scheme) ? (scheme as SecurityScheme) : undefined;
    },
    resolve,
  };
}

const loaded = new Map<string, SpecIndex>();

/** The index of the spec at `file` (default: the bundled spec), read and built on first use. */
export function loadSpecIndex(file: string = bundledSpecPath): SpecIndex {
  let index = loaded.get(file);
  if (!index) {
    const document: unknown = parseYaml(readFileSync(file, 'utf8'));
    if (!isNode(document)) throw new Error(`${file} holds no OpenAPI document`);
    loaded.set(file, (index = buildIndex(file, deepFreeze(document))));
  }
  return index;
}

/** An operation's query parameters. */
export const queryParameters = (operation: SpecOperation): SpecParameter[] => operation.parameters.filter((p) => p.in === 'query');

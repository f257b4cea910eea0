// The response contract of the bundled spec: for an operation and a status, the declared media type and
// an Ajv (JSON Schema 2020-12) validator of the body, with $refs resolved inside the bundle.
import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { parse } from 'yaml';
import { BUNDLED_SPEC } from './targets.ts';

// ajv-formats is CommonJS and also exports its plugin as `default`, which works under every interop.
const addFormats = ajvFormats.default;

type Json = Record<string, any>;

const SPEC_ID = 'https://chatbridge.test/openapi.bundled.json';
const spec: Json = parse(readFileSync(BUNDLED_SPEC, 'utf8'));

const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
addFormats(ajv);
// The whole bundle is registered as one schema resource so that `#/components/...` pointers resolve
// within it; its OpenAPI-only top-level members are declared as inert keywords for strict mode.
for (const keyword of ['openapi', 'info', 'servers', 'tags', 'paths', 'components']) ajv.addKeyword(keyword);
ajv.addSchema({ ...spec, $id: SPEC_ID });

/** Follows a local `$ref` (`#/components/...`) inside the bundle. */
function deref(node: Json): Json {
  if (typeof node.$ref !== 'string') return node;
  const target = node.$ref
    .replace(/^#\//, '')
    .split('/')
    .reduce((at: Json, key: string) => at[key.replace(/~1/g, '/').replace(/~0/g, '~')], spec);
  return deref(target);
}

function operation(operationId: string): { path: string; method: string; op: Json } {
  for (const [path, item] of Object.entries<Json>(spec.paths)) {
    for (const [method, op] of Object.entries<Json>(item)) {
      if (op?.operationId === operationId) return { path, method, op };
    }
  }
  throw new Error(`no operation ${operationId} in the spec`);
}

export interface ResponseContract {
  /** The declared status key that applies (`'200'`, `'default'`, ...). */
  declared: string;
  /** The one media type declared for the body, or undefined for a response without content. */
  mediaType: string | undefined;
  validate: ValidateFunction | undefined;
}

const cache = new Map<string, ResponseContract>();

/** The contract of `operationId` answering `status`; throws if the spec declares neither it nor `default`. */
export function responseContract(operationId: string, status: number): ResponseContract {
  const key = `${operationId} ${status}`;
  const cached = cache.get(key);
  if (cached) return cached;
  const { op } = operation(operationId);
  const declared = String(status) in op.responses ? String(status) : 'default';
  if (!(declared in op.responses)) throw new Error(`${operationId} does not declare ${status} (nor default)`);
  const response = deref(op.responses[declared]);
  const media = Object.keys(response.content ?? {});
  if (media.length > 1) throw new Error(`${operationId} ${declared}: several media types, pick one`);
  const mediaType = media[0];
  const schema = mediaType ? response.content[mediaType].schema : undefined;
  // Compile a $ref into the registered bundle (local refs are rewritten to it), so nested refs resolve.
  const validate = schema
    ? ajv.compile(typeof schema.$ref === 'string' ? { $ref: SPEC_ID + schema.$ref } : schema)
    : undefined;
  const contract = { declared, mediaType, validate };
  cache.set(key, contract);
  return contract;
}

/** `application/json; charset=utf-8` -> `application/json`. */
export function mediaTypeOf(contentType: string | null): string | undefined {
  return contentType?.split(';')[0]?.trim().toLowerCase() || undefined;
}

export interface CapturedResponse {
  status: number;
  mediaType: string | undefined;
  /** The parsed JSON body, or the raw text when it is not JSON, or undefined when empty. */
  body: unknown;
  headers: Headers;
}

/** Reads a fetch response once into a plain object. */
export async function capture(response: Response): Promise<CapturedResponse> {
  const text = await response.text();
  let body: unknown = text === '' ? undefined : text;
  try {
    if (text !== '') body = JSON.parse(text);
  } catch {
    // not JSON: keep the text, the media type / schema checks will report it
  }
  return { status: response.status, mediaType: mediaTypeOf(response.headers.get('content-type')), body, headers: response.headers };
}

/**
 * Problems with `response` as an answer of `operationId`: an undeclared status, the wrong media type, a
 * body the schema rejects (each Ajv error as `path message`), a body where none is declared. Empty when
 * it complies.
 */
export function violations(operationId: string, response: CapturedResponse): string[] {
  let contract: ResponseContract;
  try {
    contract = responseContract(operationId, response.status);
  } catch (error) {
    return [(error as Error).message];
  }
  const { mediaType, validate } = contract;
  if (!mediaType) return response.body === undefined ? [] : [`a body where ${contract.declared} declares none`];
  const found: string[] = [];
  if (response.mediaType !== mediaType) found.push(`media type ${response.mediaType} instead of ${mediaType}`);
  if (validate && !validate(response.body)) {
    for (const error of validate.errors ?? []) found.push(`body${error.instancePath} ${error.message}`);
  }
  return found;
}

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
export const spec: Json = parse(readFileSync(BUNDLED_SPEC, 'utf8'));

const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
addFormats(ajv);
// The whole bundle is registered as one schema resource so that `#/components/...` pointers resolve
// within it; its OpenAPI-only top-level members are declared as inert keywords for strict mode.
for (const keyword of ['openapi', 'info', 'servers', 'tags', 'paths', 'webhooks', 'components']) ajv.addKeyword(keyword);
ajv.addSchema({ ...spec, $id: SPEC_ID });

/** Follows a local `$ref` (`#/components/...`) inside the bundle. */
export function deref(node: Json): Json {
  if (typeof node.$ref !== 'string') return node;
  const target = node.$ref
    .replace(/^#\//, '')
    .split('/')
    .reduce((at: Json, key: string) => at[key.replace(/~1/g, '/').replace(/~0/g, '~')], spec);
  return deref(target);
}

export function operation(operationId: string): { path: string; method: string; op: Json } {
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
  const validate = schema ? ajv.compile(typeof schema.$ref === 'string' ? { $ref: SPEC_ID + schema.$ref } : schema) : undefined;
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
  // An event stream's schema is that of each event's data (schemas/EndpointEvent.yaml).
  const bodies = mediaType === EVENT_STREAM ? eventData(String(response.body ?? '')) : [response.body];
  if (mediaType === EVENT_STREAM && bodies.length === 0) found.push('an event stream without any event');
  for (const [i, body] of bodies.entries()) {
    if (validate && !validate(body)) {
      const at = mediaType === EVENT_STREAM ? `event ${i} data` : 'body';
      for (const error of validate.errors ?? []) found.push(`${at}${error.instancePath} ${error.message}`);
    }
  }
  return found;
}

const EVENT_STREAM = 'text/event-stream';

/** The `data` of every complete event in an event stream's text, parsed as JSON (or the text, when it is not). */
export function eventData(text: string): unknown[] {
  const blocks = text.split(/\r?\n\r?\n/).slice(0, -1); // the last block may be cut off
  return blocks.flatMap((block) => {
    const data = block
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''));
    if (data.length === 0) return [];
    try {
      return [JSON.parse(data.join('\n'))];
    } catch {
      return [data.join('\n')];
    }
  });
}

/**
 * Headers the spec does not declare per response, each with why: Content-Type is declared by the
 * response's `content`; Content-Length and Transfer-Encoding frame the body and Connection and
 * Keep-Alive the connection (hop-by-hop, set by Node's HTTP server); Date is required of every origin
 * server by RFC 9110 and added by Node. Any other header the server sends must be declared.
 */
export const TRANSPORT_HEADERS = ['content-type', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date'];

/**
 * Problems with the headers of `response` as an answer of `operationId`: a header the spec does not
 * declare for that response (other than TRANSPORT_HEADERS), and a header it declares `required` that
 * is missing. Empty when they comply.
 */
export function headerViolations(operationId: string, response: Pick<CapturedResponse, 'status' | 'headers'>): string[] {
  const { op } = operation(operationId);
  const key = String(response.status) in op.responses ? String(response.status) : 'default';
  const declared = Object.entries<Json>(deref(op.responses[key] ?? {}).headers ?? {}).map(([name, header]) => ({
    name: name.toLowerCase(),
    required: deref(header).required === true,
  }));
  const sent = [...response.headers.keys()].map((name) => name.toLowerCase());
  const undeclared = sent.filter((name) => !TRANSPORT_HEADERS.includes(name) && !declared.some((d) => d.name === name));
  const missing = declared.filter((d) => d.required && !sent.includes(d.name)).map((d) => d.name);
  return [
    ...undeclared.map((name) => `${operationId} ${response.status}: ${name} is sent but not declared`),
    ...missing.map((name) => `${operationId} ${response.status}: ${name} is required but not sent`),
  ];
}

// Hostile request lines, below the parameter level: raw bytes the URL grammar forbids (control
// characters, space, non-ASCII, unsafe punctuation), fragments, absolute and asterisk forms, odd
// methods on every path of the spec, and heads around the 128 KiB limit. Built on a valid request
// for some operation of the spec, so every operation is a starting point.
import fc from 'fast-check';
import type { ApiSpec, OperationSpec } from './spec.ts';
import { POOL } from './cases.ts';

export type LineMutation =
  | { kind: 'raw-byte'; byte: number; at: number }
  | { kind: 'raw-utf8'; text: string; at: number }
  | { kind: 'fragment'; text: string }
  | { kind: 'absolute-form'; host: string }
  | { kind: 'asterisk' }
  | { kind: 'no-leading-slash' }
  | { kind: 'double-slash' }
  | { kind: 'dot-segment'; segment: string }
  | { kind: 'oversize'; size: number; where: 'query' | 'header' }
  | { kind: 'method'; method: string }
  | { kind: 'none' };

export interface LineDraft {
  op: OperationSpec;
  mutation: LineMutation;
}

/** Mutations after which Node's parser may answer by itself (no problem document). */
export const PARSER_MAY_ANSWER = new Set(['raw-byte', 'raw-utf8', 'no-leading-slash', 'oversize', 'method']);

// Bytes not allowed unencoded in a request-target (RFC 3986 / 9112).
const FORBIDDEN = [...Array.from({ length: 0x21 }, (_, i) => i), 0x7f, 0x22, 0x3c, 0x3e, 0x5c, 0x5e, 0x60, 0x7b, 0x7c, 0x7d];
const HIGH = Array.from({ length: 0x80 }, (_, i) => 0x80 + i);
// Methods without a body-less special meaning in Node (CONNECT would hand the socket to a 'connect' listener).
const METHODS = [
  'GET',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
  'TRACE',
  'PROPFIND',
  'PURGE',
  'SEARCH',
  'LINK',
  'FOO',
  'get',
  'Get',
  'G ET',
];

export function lineDraftArb(spec: ApiSpec): fc.Arbitrary<LineDraft> {
  const mutation: fc.Arbitrary<LineMutation> = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({ kind: fc.constant('raw-byte' as const), byte: fc.constantFrom(...FORBIDDEN, ...HIGH), at: fc.nat() }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('raw-utf8' as const),
        text: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 4 }),
        at: fc.nat(),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('fragment' as const),
        text: fc.string({ unit: 'grapheme-ascii', maxLength: 10 }).map(encodeURIComponent),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('absolute-form' as const),
        host: fc.constantFrom('http://127.0.0.1', 'http://evil.example', 'https://x', 'http://[::1'),
      }),
    },
    { weight: 1, arbitrary: fc.constant({ kind: 'asterisk' as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'no-leading-slash' as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'double-slash' as const }) },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('dot-segment' as const), segment: fc.constantFrom('/.', '/..', '/%2e%2e', '/./', '/%2E') }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('oversize' as const),
        // Mostly right around the limit, where off-by-one errors live.
        size: fc.oneof(fc.integer({ min: 128 * 1024 - 600, max: 128 * 1024 + 600 }), fc.integer({ min: 100_000, max: 200_000 })),
        where: fc.constantFrom('query' as const, 'header' as const),
      }),
    },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('method' as const), method: fc.constantFrom(...METHODS) }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
  );
  return fc
    .record({ op: fc.constantFrom(...spec.operations), mutation })
    .map((d) =>
      Object.defineProperty(d, fc.toStringMethod, { value: () => `${d.op.operationId} ${JSON.stringify(d.mutation)}`, enumerable: false }),
    );
}

/** A valid request for the operation, to be mutated. */
function baseTarget(op: OperationSpec, token: string): { path: string; query: string } {
  // Endpoint operations address pool-0; admin ones pool-3, so that a DELETE does not take pool-0 away.
  const id = op.security.some((s) => s.kind === 'bearer') ? POOL[3] : POOL[0];
  const path = op.path.replace(/\{[^}]+\}/g, id);
  const pairs: string[] = [];
  for (const p of op.params.filter((q) => q.in === 'query')) {
    if (op.security.some((s) => s.kind === 'apiKeyQuery' && s.parameter === p.name)) pairs.push(`${p.name}=${token}`);
    else if (p.required && p.schema.enum) pairs.push(`${p.name}=${encodeURIComponent(String(p.schema.enum[0]))}`);
    else if (p.required && typeof p.example === 'string') pairs.push(`${p.name}=${encodeURIComponent(p.example)}`);
  }
  // A text parameter to carry payloads, when the operation has one.
  const carrier = op.params.find(
    (p) =>
      p.in === 'query' &&
      !p.required &&
      p.schema.type === 'string' &&
      !p.schema.pattern &&
      !p.schema.enum &&
      !p.schema.format &&
      (p.schema.maxLength ?? 0) >= 100,
  );
  if (carrier) pairs.push(`${carrier.name}=abc`);
  return { path, query: pairs.join('&') };
}

export interface LineRendered {
  method: string;
  target: Buffer;
  headers: [string, string][];
  body?: Buffer;
  rawPath: string | undefined;
}

export function renderLine(d: LineDraft, ctx: { token: string; adminToken: string }): LineRendered {
  const { op, mutation: m } = d;
  const { path, query } = baseTarget(op, ctx.token);
  let method = op.method;
  const headers: [string, string][] = [];
  if (op.security.some((s) => s.kind === 'bearer')) headers.push(['Authorization', `Bearer ${ctx.adminToken}`]);
  let body: Buffer | undefined;
  if (op.body) {
    body = Buffer.from(JSON.stringify({ id: POOL[5] }));
    headers.push(['Content-Type', 'application/json']);
  }
  let target = Buffer.from(query ? `${path}?${query}` : path, 'latin1');
  let rawPath: string | undefined = path;
  const insert = (bytes: Buffer, at: number) => {
    const pos = 1 + (at % target.length); // never before the leading '/'
    target = Buffer.concat([target.subarray(0, pos), bytes, target.subarray(pos)]);
    rawPath = undefined;
  };
  switch (m.kind) {
    case 'raw-byte':
      insert(Buffer.from([m.byte]), m.at);
      break;
    case 'raw-utf8':
      insert(Buffer.from(m.text, 'utf8'), m.at);
      break;
    case 'fragment':
      target = Buffer.concat([target, Buffer.from(`#${m.text}`)]);
      break;
    case 'absolute-form':
      target = Buffer.concat([Buffer.from(m.host), target]);
      break;
    case 'asterisk':
      target = Buffer.from('*');
      rawPath = undefined;
      break;
    case 'no-leading-slash':
      target = target.subarray(1);
      rawPath = undefined;
      break;
    case 'double-slash':
      target = Buffer.concat([Buffer.from('/'), target]);
      rawPath = `/${path}`;
      break;
    case 'dot-segment':
      target = Buffer.concat([Buffer.from(m.segment), target]);
      rawPath = undefined;
      break;
    case 'oversize': {
      const fixed = 200 + target.length + headers.reduce((n, [k, v]) => n + k.length + v.length + 4, 0);
      const pad = Math.max(0, m.size - fixed);
      if (m.where === 'query') target = Buffer.concat([target, Buffer.from(`${target.includes('?') ? '&' : '?'}pad=${'a'.repeat(pad)}`)]);
      else headers.push(['X-Pad', 'a'.repeat(pad)]);
      break;
    }
    case 'method':
      method = m.method;
      break;
    case 'none':
      break;
  }
  if (method !== op.method && body && !['POST', 'PUT', 'PATCH'].includes(method.toUpperCase())) {
    body = undefined;
    headers.splice(
      headers.findIndex(([k]) => k === 'Content-Type'),
      1,
    );
  }
  return { method, target, headers, ...(body && { body }), rawPath };
}

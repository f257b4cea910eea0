// Whole requests for one operation of the spec: a path, a raw query string assembled by hand (values
// from values.ts, repeated parameters, unknown parameters, stray separators), credentials, and for
// operations with a request body a hostile body. Drafts are plain data, fixed by the seed; tokens
// are only known once the server runs, so credentials are placeholders filled in by `render`.
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import type { OperationSpec, ParamSpec, Schema } from './spec.ts';
import { typeOf } from './spec.ts';
import { type Draw, BAD_ESCAPES, ENCODERS, anyChar, segmentFor, valueFor } from './values.ts';
import type { RawRequest } from './wire.ts';

/** IDs every server of the suite may hold: the first POOL_PROVISIONED exist at start. */
export const POOL = ['pool-0', 'pool-1', 'pool-2', 'pool-3', 'pool-4', 'pool-5'] as const;
export const POOL_PROVISIONED = 4;

export type Credential = { of: 'path' } | { of: 'pool'; id: string };

export interface QueryItem {
  key: string; // raw
  value: string | null; // raw; null: bare key
  credential?: Credential; // value is a token, filled in by render
  kind: string;
  order: number;
  /** The decoded value is known to satisfy the parameter's `format`. */
  formatOk?: string;
}

export type PathChoice = { kind: 'pool'; id: string } | { kind: 'generated'; raw: string; note: string };

export type AdminAuth = 'ok' | 'missing' | 'wrong' | 'basic' | 'empty' | 'lower-scheme' | 'double-space' | 'suffix';

export interface BodyDraft {
  bytes: Buffer;
  headers: [string, string][];
  kind: string;
  /** The body is exactly a JSON document sent as plain application/json. */
  plainJson: boolean;
}

export interface Noise {
  leading: number;
  trailing: number;
  doubled: boolean;
  /** A run of empty pairs ('&' x n) inserted before item `at`. */
  flood?: { n: number; at: number };
  bareQuestionMark: boolean;
}

/** A header parameter of the spec, as sent (values are sent as generated: headers are not percent-decoded). */
export interface HeaderItem {
  name: string;
  value: string;
  kind: string;
}

export interface Draft {
  op: OperationSpec;
  mode: Mode;
  path: Record<string, PathChoice>;
  items: QueryItem[];
  headerParams: HeaderItem[];
  noise: Noise;
  adminAuth?: AdminAuth;
  body?: BodyDraft;
}

// ---------------------------------------------------------------------------------------------

const weighted = <T>(...pairs: [number, fc.Arbitrary<T>][]) =>
  fc.oneof(...pairs.filter(([w]) => w > 0).map(([weight, arbitrary]) => ({ weight, arbitrary })));

const isCredentialParam = (op: OperationSpec, p: ParamSpec) =>
  p.in === 'query' && op.security.some((s) => s.kind === 'apiKeyQuery' && s.parameter === p.name);

const endpointScoped = (op: OperationSpec) => op.security.some((s) => s.kind === 'apiKeyQuery');

/**
 * How hostile a draft is. `clean`: every part valid (drives 200s and grows the records); `one-defect`:
 * valid but for exactly one thing (a parameter, an unknown parameter, the path or the body), so a 400
 * must name that one; `chaos`: anything anywhere.
 */
export type Mode = 'clean' | 'one-defect' | 'chaos';
type Defect = 'parameter' | 'unknown' | 'path' | 'body' | 'auth';
type Item = Omit<QueryItem, 'order'>;

function pathChoice(op: OperationSpec, p: ParamSpec, hostileShare: number): fc.Arbitrary<PathChoice> {
  const pool = POOL.map((id) => ({ kind: 'pool' as const, id }));
  const generated = segmentFor(p, hostileShare).map((d): PathChoice => ({ kind: 'generated', raw: d.raw ?? '', note: d.kind }));
  if (hostileShare >= 100) return generated;
  // Endpoint operations mostly address pool-0 (whose record the properties watch); admin ones any ID.
  return endpointScoped(op)
    ? weighted<PathChoice>(
        [72, fc.constant(pool[0]!)],
        [10, fc.constant(pool[1]!)],
        [4, fc.constantFrom(...pool.slice(POOL_PROVISIONED))],
        [14, generated],
      )
    : weighted<PathChoice>([60, fc.constantFrom(...pool)], [40, generated]);
}

function occurrence(op: OperationSpec, p: ParamSpec, hostileShare: number): fc.Arbitrary<Item> {
  const plain = valueFor(p, hostileShare).map(
    (d: Draw): Item => ({
      key: p.name,
      value: d.raw,
      kind: `${p.name}:${d.kind}`,
      ...(d.formatOk !== undefined && { formatOk: d.formatOk }),
    }),
  );
  if (!isCredentialParam(op, p) || hostileShare >= 100) return plain;
  return weighted<Item>(
    [80, fc.constant<Item>({ key: p.name, value: '', credential: { of: 'path' }, kind: `${p.name}:own` })],
    [
      6,
      fc
        .constantFrom(...POOL.slice(0, 2))
        .map((id): Item => ({ key: p.name, value: '', credential: { of: 'pool', id }, kind: `${p.name}:pool` })),
    ],
    [hostileShare > 0 ? 14 : 4, plain],
  );
}

/** The key of a known parameter, now and then spelled with percent-escapes (same name once decoded). */
const keyVariant = (name: string) =>
  weighted<string>(
    [24, fc.constant(name)],
    [1, fc.constant(ENCODERS.everyByte(name))],
    [1, fc.nat(name.length - 1).map((i) => name.slice(0, i) + ENCODERS.everyByte(name[i]!) + name.slice(i + 1))],
  );

function paramItems(op: OperationSpec, p: ParamSpec, optionalCount: number, mode: Mode): fc.Arbitrary<Item[]> {
  const presence = p.required ? (mode === 'chaos' ? 94 : 100) : optionalCount > 8 ? 22 : 50;
  const share = mode === 'chaos' ? 45 : 0;
  const once = fc.tuple(occurrence(op, p, share), keyVariant(p.name)).map(([o, key]) => [{ ...o, key }]);
  const repeated = fc
    .array(occurrence(op, p, share), { minLength: 2, maxLength: 3 })
    .map((os) => os.map((o) => ({ ...o, kind: `${p.name}:repeated` })));
  return weighted<Item[]>(
    [100 - presence, fc.constant([])],
    [mode === 'chaos' ? Math.round(presence * 0.9) : presence, once],
    [mode === 'chaos' ? Math.round(presence * 0.1) : 0, repeated],
  );
}

/** The one wrong parameter of a `one-defect` draft: a hostile value, or a valid one given twice. */
function defectFor(op: OperationSpec, p: ParamSpec): fc.Arbitrary<Item[]> {
  const hostile = occurrence(op, p, 100).map((o) => [o]);
  const repeated = fc
    .array(occurrence(op, p, 0), { minLength: 2, maxLength: 2 })
    .map((os) => os.map((o) => ({ ...o, kind: `${p.name}:repeated` })));
  return weighted<Item[]>([8, hostile], [1, repeated]);
}

const PROTO_NAMES = ['__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString', 'valueOf', '__defineGetter__', 'isPrototypeOf'];
// Names with structure: bracket notation (which some query parsers expand), dots, slashes, nothing.
const SHAPED_NAMES = [
  '[x]',
  '[__proto__]',
  '[constructor]',
  '[',
  ']',
  '[]',
  '[]x',
  'x[__proto__]',
  'x[constructor][prototype]',
  '__proto__[x]',
  'a[b][c]',
  'a[',
  'a]',
  'a[]',
  '.',
  '..',
  '/',
  'a/b',
  'a.b',
  'a..b',
  ' ',
  '+',
  '%',
  '&',
  '=',
];

function unknownItem(op: OperationSpec): fc.Arbitrary<Omit<QueryItem, 'order'>> {
  const known = op.params.filter((p) => p.in === 'query').map((p) => p.name);
  const near = known.length
    ? fc.tuple(fc.constantFrom(...known), fc.nat()).map(([n, r]) => {
        const variants = [
          n.toUpperCase(),
          n[0]!.toUpperCase() + n.slice(1),
          n.slice(0, -1),
          n + n.slice(-1),
          `${n}_`,
          `_${n}`,
          `${n}[]`,
          `${n}[x]`,
          `${n}.x`,
          `${n} `,
          n.replace(/_/g, '-'),
          n.replace(/_/g, ''),
        ];
        return variants[r % variants.length]!;
      })
    : fc.constant('x');
  const shaped = fc
    .tuple(fc.constantFrom(...SHAPED_NAMES), fc.constantFrom('', ...known))
    .map(([shape, k]) => (k && shape.startsWith('[') ? k + shape : shape));
  const name = weighted<string>(
    [5, near],
    [2, fc.constantFrom(...PROTO_NAMES)],
    [3, shaped],
    [4, fc.array(anyChar, { minLength: 0, maxLength: 16 }).map((a) => a.join(''))],
    [1, fc.integer({ min: 100, max: 20_000 }).map((n) => 'k'.repeat(n))],
  ).filter((n) => !known.includes(n));
  const rawKey = fc.tuple(name, fc.nat(9), fc.constantFrom(...BAD_ESCAPES), fc.nat()).map(([n, how, bad, at]) => {
    if (how <= 5) return encodeURIComponent(n);
    if (how <= 7) return encodeURIComponent(n).replace(/%5B/g, '[').replace(/%5D/g, ']').replace(/%2F/g, '/').replace(/%20/g, '+');
    const e = encodeURIComponent(n);
    const cut = at % (e.length + 1);
    return e.slice(0, cut).replace(/%.?$/, '') + bad + e.slice(cut).replace(/^[^%]?.?/, (m) => (/^[0-9A-F]/i.test(m) ? '' : m));
  });
  const value = weighted<string | null>(
    [6, fc.array(anyChar, { maxLength: 20 }).map((a) => encodeURIComponent(a.join('')))],
    [1, fc.constant(null)],
    [1, fc.constant('')],
  );
  return fc.tuple(rawKey, value).map(([key, v]) => ({ key, value: v, kind: 'unknown-parameter' }));
}

const noiseArb: fc.Arbitrary<Noise> = fc.record({
  leading: weighted<number>([9, fc.constant(0)], [1, fc.integer({ min: 1, max: 3 })]),
  trailing: weighted<number>([9, fc.constant(0)], [1, fc.integer({ min: 1, max: 3 })]),
  doubled: weighted<boolean>([9, fc.constant(false)], [1, fc.constant(true)]),
  // Around Node's 1000-pair default of querystring.parse: parameters after it must not vanish.
  flood: weighted<{ n: number; at: number } | undefined>(
    [49, fc.constant(undefined)],
    [1, fc.record({ n: fc.integer({ min: 990, max: 1_100 }), at: fc.nat() })],
  ),
  bareQuestionMark: fc.boolean(),
});

// Harmless separators only (a flood now and then: the parameters after it must still count).
const quietNoiseArb: fc.Arbitrary<Noise> = fc.record({
  leading: weighted<number>([19, fc.constant(0)], [1, fc.constant(1)]),
  trailing: weighted<number>([19, fc.constant(0)], [1, fc.constant(1)]),
  doubled: weighted<boolean>([19, fc.constant(false)], [1, fc.constant(true)]),
  flood: weighted<{ n: number; at: number } | undefined>(
    [49, fc.constant(undefined)],
    [1, fc.record({ n: fc.integer({ min: 990, max: 1_100 }), at: fc.nat() })],
  ),
  bareQuestionMark: fc.boolean(),
});

const adminAuthArb: fc.Arbitrary<AdminAuth> = weighted<AdminAuth>(
  [76, fc.constant('ok')],
  [6, fc.constant('missing')],
  [6, fc.constant('wrong')],
  [3, fc.constant('basic')],
  [3, fc.constant('empty')],
  [2, fc.constant('lower-scheme')],
  [2, fc.constant('double-space')],
  [2, fc.constant('suffix')],
);

// ---------------------------------------------------------------------------------------------
// Bodies

/** A JSON value valid for a (simple) schema: objects with properties, strings with lengths and patterns. */
function validJson(schema: Schema): fc.Arbitrary<unknown> {
  const type = typeOf(schema);
  if (type === 'object') {
    const props = schema.properties ?? {};
    const required = new Set(schema.required ?? []);
    const model = Object.fromEntries(Object.entries(props).map(([k, s]) => [k, validJson(s)]));
    return fc.record(model, { requiredKeys: [...required] as never[] });
  }
  if (type === 'string') {
    if (schema.enum) return fc.constantFrom(...schema.enum);
    const min = schema.minLength ?? 0;
    const max = Math.min(schema.maxLength ?? min + 30, min + 70);
    const cls = /^\^(\[[^\]]+\])[+*]\$$/.exec(schema.pattern ?? '')?.[1];
    const unit = cls ? fc.stringMatching(new RegExp(`^${cls}$`, 'u')) : anyChar;
    return weighted<string>(
      [3, fc.array(unit, { minLength: min, maxLength: max }).map((a) => a.join(''))],
      [1, fc.array(unit, { minLength: schema.maxLength ?? max, maxLength: schema.maxLength ?? max }).map((a) => a.join(''))],
      // The pool: IDs that exist (409) or may exist.
      [3, fc.constantFrom(...POOL)],
    );
  }
  if (type === 'integer') return fc.integer({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6 });
  if (type === 'boolean') return fc.boolean();
  return fc.jsonValue();
}

const WRONG_TYPED = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
  fc.array(anyChar, { minLength: 0, maxLength: 90 }).map((a) => a.join('')),
);

function mutatedJson(schema: Schema): fc.Arbitrary<unknown> {
  const props = Object.keys(schema.properties ?? {});
  return fc
    .tuple(validJson(schema), fc.nat(5), fc.constantFrom(...(props.length ? props : ['x'])), WRONG_TYPED, fc.string({ maxLength: 8 }))
    .map(([v, how, prop, wrong, extra]) => {
      const obj = { ...(v as Record<string, unknown>) };
      if (how <= 1) obj[prop] = wrong;
      else if (how === 2) delete obj[prop];
      else if (how === 3) obj[extra || 'extra'] = wrong;
      else if (how === 4) return Object.fromEntries(Object.entries(obj).map(([k, val]) => [k.toUpperCase(), val]));
      else obj[prop] = `${String(obj[prop] ?? '')}${'\u0000'}`;
      return obj;
    });
}

const json = (v: unknown) => Buffer.from(JSON.stringify(v) ?? 'null', 'utf8');
const JSON_HEADERS: [string, string][] = [['Content-Type', 'application/json']];

const plainBody = (bytes: Buffer, kind: string, ok = true): BodyDraft => ({ bytes, headers: JSON_HEADERS, kind, plainJson: ok });

function validBodyArb(op: OperationSpec): fc.Arbitrary<BodyDraft> {
  return validJson(op.body?.schema ?? { type: 'object' }).map((v) => plainBody(json(v), 'body:valid'));
}

function hostileBodyArb(op: OperationSpec): fc.Arbitrary<BodyDraft> {
  const schema = op.body?.schema ?? { type: 'object' };
  const plain = plainBody;
  return weighted<BodyDraft>(
    [6, mutatedJson(schema).map((v) => plain(json(v), 'body:mutated'))],
    [3, fc.jsonValue({ maxDepth: 3 }).map((v) => plain(json(v), 'body:any-json'))],
    [
      3,
      fc.tuple(validJson(schema), fc.nat(), fc.constantFrom('', ',', '}', '{', '"', 'x', '\u0000', ' //c', ',}')).map(([v, cut, junk]) => {
        const text = JSON.stringify(v) ?? '';
        return plain(Buffer.from(text.slice(0, cut % (text.length + 1)) + junk), 'body:broken-json', false);
      }),
    ],
    [
      1,
      fc
        .constantFrom(
          "{'id':'a'}",
          '{"id":NaN}',
          '{"id":"a",}',
          '{"id":"a"}{"id":"b"}',
          '\uFEFF{"id":"pool-5"}',
          '',
          ' ',
          'null',
          '[]',
          '"x"',
          '1e999',
        )
        .map((t) => plain(Buffer.from(t), 'body:odd-text', false)),
    ],
    // The JSON body limit is 16 KiB: just under, at and over it.
    [2, fc.integer({ min: 16 * 1024 - 64, max: 64 * 1024 }).map((n) => plain(json({ id: 'a'.repeat(n) }), 'body:huge'))],
    [
      2,
      validJson(schema).chain((v) =>
        fc
          .constantFrom<[string, string][]>(
            [],
            [['Content-Type', 'text/plain']],
            [['Content-Type', 'application/x-www-form-urlencoded']],
            [['Content-Type', 'application/json; charset=utf-16']],
            [['Content-Type', 'application/json; charset=latin1']],
            [
              ['Content-Type', 'application/json; charset=utf-8'],
              ['Content-Encoding', 'gzip'],
            ],
            [
              ['Content-Type', 'application/json'],
              ['Content-Encoding', 'br'],
            ],
            [
              ['Content-Type', 'application/json'],
              ['Content-Encoding', 'x-unknown'],
            ],
            [
              ['Content-Type', 'application/json'],
              ['Content-Encoding', 'deflate'],
            ],
            [['Content-Type', 'multipart/form-data; boundary=x']],
            [['Content-Type', '']],
          )
          .map((headers) => ({
            bytes: json(v),
            headers,
            kind: `body:headers(${headers.map((h) => h.join('=')).join(',') || 'none'})`,
            plainJson: false,
          })),
      ),
    ],
    [
      1,
      validJson(schema).map((v) => ({
        bytes: gzipSync(json(v)),
        headers: [...JSON_HEADERS, ['Content-Encoding', 'gzip']] as [string, string][],
        kind: 'body:gzip',
        plainJson: false,
      })),
    ],
    [
      1,
      fc
        .uint8Array({ minLength: 1, maxLength: 40 })
        .map((b) => plain(Buffer.concat([Buffer.from('{"id":"'), Buffer.from(b), Buffer.from('"}')]), 'body:raw-bytes', false)),
    ],
  );
}

function bodyArb(op: OperationSpec): fc.Arbitrary<BodyDraft | undefined> {
  if (op.body)
    return weighted<BodyDraft | undefined>(
      [45, validBodyArb(op)],
      [45, hostileBodyArb(op)],
      [op.body.required ? 10 : 20, fc.constant(undefined)],
    );
  // Operations without a body: now and then one anyway.
  return weighted<BodyDraft | undefined>([92, fc.constant(undefined)], [8, hostileBodyArb(op)]);
}

// ---------------------------------------------------------------------------------------------

const MODE: fc.Arbitrary<Mode> = weighted<Mode>([30, fc.constant('clean')], [45, fc.constant('one-defect')], [25, fc.constant('chaos')]);

/**
 * A chain step's arbitraries, built once per key and reused. Building those of an operation with
 * dozens of query parameters costs several times more than drawing a draft from them, and a chain
 * step runs for every draft. fast-check's arbitraries hold no state, so a reused one draws from the
 * random stream exactly what a new one would: the seed still fixes every request.
 */
function builtOnce<T>(): (key: string, build: () => fc.Arbitrary<T>) => fc.Arbitrary<T> {
  const built = new Map<string, fc.Arbitrary<T>>();
  return (key, build) => {
    let arbitrary = built.get(key);
    if (!arbitrary) built.set(key, (arbitrary = build()));
    return arbitrary;
  };
}

export function draftArb(op: OperationSpec): fc.Arbitrary<Draft> {
  const once = builtOnce<Draft>();
  return MODE.chain((mode) => once(mode, () => draftIn(op, mode)));
}

function draftIn(op: OperationSpec, mode: Mode): fc.Arbitrary<Draft> {
  const pathParams = op.params.filter((p) => p.in === 'path');
  const queryParams = op.params.filter((p) => p.in === 'query');
  const optionalCount = queryParams.filter((p) => !p.required).length;
  const bearer = op.security.some((s) => s.kind === 'bearer');
  const defects: [number, fc.Arbitrary<Defect>][] = [
    [queryParams.length ? 60 : 0, fc.constant('parameter')],
    [15, fc.constant('unknown')],
    [pathParams.length ? 15 : 0, fc.constant('path')],
    [op.body ? 20 : 0, fc.constant('body')],
    [bearer ? 5 : 0, fc.constant('auth')],
  ];
  const defect: fc.Arbitrary<Defect | undefined> = mode === 'one-defect' ? weighted<Defect>(...defects) : fc.constant(undefined);
  const defectAndTarget = defect.chain((d) =>
    (d === 'parameter' ? fc.nat(queryParams.length - 1) : fc.constant(-1)).map((k) => [d, k] as const),
  );
  const once = builtOnce<Draft>();
  return defectAndTarget.chain(([d, target]) =>
    once(`${d} ${target}`, () => {
      const pathShare = mode === 'chaos' ? 40 : d === 'path' ? 100 : 0;
      const path = fc.record(Object.fromEntries(pathParams.map((p) => [p.name, pathChoice(op, p, pathShare)]))) as fc.Arbitrary<
        Record<string, PathChoice>
      >;
      const extra: fc.Arbitrary<Item[]> =
        d === 'unknown'
          ? unknownItem(op).map((o) => [o])
          : mode === 'chaos'
            ? weighted<Item[]>(
                [queryParams.length ? 82 : 55, fc.constant([])],
                [queryParams.length ? 18 : 45, fc.array(unknownItem(op), { minLength: 1, maxLength: 3 })],
              )
            : fc.constant([]);
      const items = fc
        .tuple(
          fc.tuple(
            ...queryParams.map((p, i) => (i === target ? defectFor(op, p) : paramItems(op, p, optionalCount, mode))),
          ) as fc.Arbitrary<Item[][]>,
          extra,
          fc.array(fc.nat(), { minLength: 40, maxLength: 40 }),
        )
        .map(([perParam, more, orderKeys]) =>
          [...perParam.flat(), ...more]
            .map((it, i) => ({ ...it, order: orderKeys[i % orderKeys.length]! + i / 1000 }))
            .sort((a, b) => a.order - b.order),
        );
      // Header parameters: present now and then (always when required), hostile like the rest in chaos.
      const headerParams = fc
        .tuple(
          ...op.params
            .filter((p) => p.in === 'header')
            .map((p) =>
              weighted<HeaderItem[]>(
                [p.required ? 0 : 70, fc.constant([])],
                [
                  30,
                  valueFor(p, mode === 'chaos' ? 45 : 0).map((d) => [{ name: p.name, value: d.raw ?? '', kind: `${p.name}:${d.kind}` }]),
                ],
              ),
            ),
        )
        .map((hs) => (hs as HeaderItem[][]).flat());
      const adminAuth = !bearer
        ? fc.constant(undefined)
        : mode === 'chaos' || d === 'auth'
          ? adminAuthArb.filter((a) => mode === 'chaos' || a !== 'ok')
          : fc.constant<AdminAuth>('ok');
      const body = mode === 'chaos' ? bodyArb(op) : d === 'body' ? hostileBodyArb(op) : op.body ? validBodyArb(op) : fc.constant(undefined);
      return fc
        .record({ path, items, headerParams, noise: mode === 'chaos' ? noiseArb : quietNoiseArb, adminAuth, body })
        .map(({ path, items, headerParams, noise, adminAuth, body }) =>
          withDescription({ op, mode, path, items, headerParams, noise, ...(adminAuth && { adminAuth }), ...(body && { body }) }),
        );
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// Rendering

export interface RenderContext {
  /** The current token of a pool endpoint. */
  token(id: string): string;
  adminToken: string;
}

export interface Rendered {
  request: RawRequest;
  rawPath: string;
  rawQuery: string | undefined;
  /** Pool ID addressed by the path, if any. */
  pathId: string | undefined;
}

export function pathIdOf(draft: Draft): string | undefined {
  const choice = Object.values(draft.path)[0];
  return choice?.kind === 'pool' ? choice.id : undefined;
}

export function render(draft: Draft, ctx: RenderContext): Rendered {
  const { op } = draft;
  const pathId = pathIdOf(draft);
  const rawPath = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    const c = draft.path[name];
    return c === undefined ? '' : c.kind === 'pool' ? c.id : c.raw;
  });
  const pairs = draft.items.map((it) => {
    let value = it.value;
    if (it.credential) {
      const id = it.credential.of === 'path' ? (pathId ?? POOL[0]) : it.credential.id;
      value = ctx.token(id);
    }
    return value === null ? it.key : `${it.key}=${value}`;
  });
  const { noise } = draft;
  if (noise.flood) pairs.splice(noise.flood.at % (pairs.length + 1), 0, '&'.repeat(noise.flood.n - 1));
  let query = pairs.join(noise.doubled ? '&&' : '&');
  if (query || noise.leading || noise.trailing) query = '&'.repeat(noise.leading) + query + '&'.repeat(noise.trailing);
  const rawQuery = query || noise.bareQuestionMark ? query : undefined;
  const headers: [string, string][] = [];
  if (draft.adminAuth) {
    const t = ctx.adminToken;
    const auth: Record<AdminAuth, string | undefined> = {
      ok: `Bearer ${t}`,
      missing: undefined,
      wrong: `Bearer ${t.split('').reverse().join('')}`,
      basic: `Basic ${Buffer.from(`admin:${t}`).toString('base64')}`,
      empty: 'Bearer ',
      'lower-scheme': `bearer ${t}`,
      'double-space': `Bearer  ${t}`,
      suffix: `Bearer ${t}x`,
    };
    const value = auth[draft.adminAuth];
    if (value !== undefined) headers.push(['Authorization', value]);
  }
  for (const h of draft.headerParams) headers.push([h.name, h.value]);
  if (draft.body) headers.push(...draft.body.headers);
  const target = rawQuery === undefined ? rawPath : `${rawPath}?${rawQuery}`;
  return {
    request: { method: op.method, target: Buffer.from(target, 'latin1'), headers, ...(draft.body && { body: draft.body.bytes }) },
    rawPath,
    rawQuery,
    pathId,
  };
}

/** How fast-check prints a draft in a counterexample: the request as it goes on the wire. */
function withDescription(draft: Draft): Draft {
  const describe = () => {
    const { request } = render(draft, { token: (id) => `<token of ${id}>`, adminToken: '<admin token>' });
    const target = request.target.toString('latin1');
    const head = [
      `${request.method} ${target.length > 2000 ? `${target.slice(0, 2000)}...(${target.length} bytes)` : target}`,
      ...request.headers.map(([k, v]) => `${k}: ${v}`),
    ];
    const body = request.body
      ? `\n\n${JSON.stringify(request.body.subarray(0, 300).toString('latin1'))}${request.body.length > 300 ? `...(${request.body.length} bytes)` : ''}`
      : '';
    return `${draft.op.operationId} [${draft.mode}]: ${JSON.stringify(head.join('\n'))}${body}`;
  };
  return Object.defineProperty(draft, fc.toStringMethod, { value: describe, enumerable: false });
}

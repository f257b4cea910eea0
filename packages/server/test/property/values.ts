// Values for one parameter, generated from its schema: valid ones, boundary ones, and hostile ones
// (wrong type, empty, control characters, invalid percent-encodings, very long). Each comes out
// already encoded for the wire; what the server should make of it is decided afterwards by `judge`,
// from the bytes actually sent, so a generator never has to be right about its own output.
import fc from 'fast-check';
import type { ParamSpec, Schema } from './spec.ts';
import { typeOf } from './spec.ts';

export type Verdict = 'valid' | 'invalid' | 'unknown';

/** One generated value: the raw wire text (`null`: the key is sent bare, without `=`). */
export interface Draw {
  raw: string | null;
  kind: string;
  /** The decoded value is known to satisfy a `format` the judge cannot check itself. */
  formatOk?: string;
}

export const codePoints = (s: string) => [...s].length;

// ---------------------------------------------------------------------------------------------
// Characters

const ALNUM = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789');
const SPECIAL = fc.constantFrom(...' &=+%#?"\'<>\\,/:;@!$()*[]{}|^`~.-_');
const ASTRAL = fc.constantFrom('😀', '𝄞', '🜁', '𠀀', '🏳', '\u{10FFFD}');
export const CONTROL = fc.integer({ min: 0, max: 0x20 }).map((n) => String.fromCharCode(n === 0x20 ? 0x7f : n));
const C1 = fc.integer({ min: 0x80, max: 0x9f }).map((n) => String.fromCharCode(n));
const NON_ASCII = fc.string({ unit: 'grapheme-composite', minLength: 1, maxLength: 1 });

/** One code point, mostly harmless, sometimes not. */
export const anyChar: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: ALNUM },
  { weight: 3, arbitrary: SPECIAL },
  { weight: 3, arbitrary: NON_ASCII },
  { weight: 1, arbitrary: ASTRAL },
  { weight: 1, arbitrary: CONTROL },
  { weight: 1, arbitrary: C1 },
);

/** `^[...]+$`, `^[...]*$`, `^[...]{m,n}$`: the bracket expression, else undefined. */
function patternClass(pattern: string | undefined): string | undefined {
  return pattern ? /^\^(\[[^\]]+\])(?:[+*]|\{\d+(?:,\d*)?\})\$$/.exec(pattern)?.[1] : undefined;
}

function classChar(schema: Schema): fc.Arbitrary<string> {
  const cls = patternClass(schema.pattern);
  return cls ? fc.stringMatching(new RegExp(`^${cls}$`, 'u')) : anyChar;
}

/** A character the parameter's pattern does not allow (or any odd one when there is no pattern). */
function foreignChar(schema: Schema): fc.Arbitrary<string> {
  const cls = patternClass(schema.pattern);
  const re = cls ? new RegExp(`^${cls}$`, 'u') : undefined;
  return fc.oneof(SPECIAL, NON_ASCII, ASTRAL, CONTROL).filter((c) => !re?.test(c));
}

const textOf = (unit: fc.Arbitrary<string>, min: number, max: number) =>
  fc.array(unit, { minLength: min, maxLength: max }).map((a) => a.join(''));

// ---------------------------------------------------------------------------------------------
// Encodings: every one of these decodes back to the same text.

const PCT = /%[0-9A-F]{2}/g;
const pctBytes = (s: string) => [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');

export const ENCODERS = {
  component: (s: string) => encodeURIComponent(s),
  lowerHex: (s: string) => encodeURIComponent(s).replace(PCT, (m) => m.toLowerCase()),
  everyByte: (s: string) => pctBytes(s),
  plusForSpace: (s: string) => encodeURIComponent(s).replace(/%20/g, '+'),
  // allowReserved: , / : @ $ ; ? left as they are (as existing bots send comma lists and URLs).
  reservedRaw: (s: string) => encodeURIComponent(s).replace(/%(2C|2F|3A|40|24|3B|3F)/g, (m) => decodeURIComponent(m)),
} as const;
type EncoderName = keyof typeof ENCODERS;

function encoderFor(param: ParamSpec): fc.Arbitrary<EncoderName> {
  return fc.oneof(
    { weight: 10, arbitrary: fc.constant<EncoderName>('component') },
    { weight: param.allowReserved ? 5 : 0, arbitrary: fc.constant<EncoderName>('reservedRaw') },
    { weight: 1, arbitrary: fc.constant<EncoderName>('lowerHex') },
    { weight: 1, arbitrary: fc.constant<EncoderName>('everyByte') },
    { weight: 1, arbitrary: fc.constant<EncoderName>('plusForSpace') },
  );
}

const encoded = (param: ParamSpec, text: fc.Arbitrary<string>, kind: string, formatOk = false): fc.Arbitrary<Draw> =>
  fc.tuple(text, encoderFor(param)).map(([s, e]) => ({ raw: ENCODERS[e](s), kind: `${kind}/${e}`, ...(formatOk && { formatOk: s }) }));

// Invalid percent-encodings: invalid UTF-8, an encoded lone surrogate, overlong forms, beyond U+10FFFF,
// truncated sequences, and '%' not followed by two hex digits.
export const BAD_ESCAPES = [
  '%C3%28',
  '%FF',
  '%E0%80',
  '%E2%82',
  '%ED%A0%80',
  '%ED%BF%BF',
  '%C0%AF',
  '%F4%90%80%80',
  '%',
  '%%',
  '%G1',
  '%2',
  '%2G',
  '%u0041',
  '%C3',
];

// ---------------------------------------------------------------------------------------------
// Schema-driven text

function validText(param: ParamSpec): fc.Arbitrary<Draw> {
  const s = param.schema;
  const type = typeOf(s);
  if (s.enum) return encoded(param, fc.constantFrom(...s.enum.map(String)), 'enum');
  if (type === 'integer' || type === 'number') {
    const min = s.minimum ?? -1e6;
    const max = s.maximum ?? 1e6;
    return encoded(param, fc.integer({ min, max }).map(String), 'integer');
  }
  if (type === 'boolean') return encoded(param, fc.constantFrom('true', 'false'), 'boolean');
  const min = s.minLength ?? 0;
  const max = s.maxLength ?? min + 200;
  const example = typeof param.example === 'string' ? param.example : undefined;
  const options: fc.Arbitrary<Draw>[] = [];
  if (example !== undefined && codePoints(example) >= min && codePoints(example) <= max) {
    // The spec's own example, lengthened with characters that keep it what it was (a URL stays a URL).
    const room = max - codePoints(example);
    const grown = textOf(ALNUM, 0, Math.min(room, 60)).map((tail) =>
      s.format ? `${example}${example.endsWith('/') ? '' : '/'}${tail}`.slice(0, example.length + room) : example + tail,
    );
    options.push(encoded(param, grown, 'example', !!s.format));
  }
  if (!s.format) {
    const unit = classChar(s);
    options.push(encoded(param, textOf(unit, min, Math.min(max, min + 40)), 'text'));
    options.push(encoded(param, textOf(unit, min, min), 'min-length'));
    options.push(encoded(param, textOf(unit, max, max), 'max-length'));
  }
  return options.length ? fc.oneof(...options) : encoded(param, textOf(anyChar, min, Math.min(max, min + 40)), 'text');
}

/** Values that are wrong on purpose (or probably wrong: the judge decides). */
function hostileText(param: ParamSpec): fc.Arbitrary<Draw> {
  const s = param.schema;
  const type = typeOf(s);
  const arbs: { weight: number; arbitrary: fc.Arbitrary<Draw> }[] = [];
  const add = (weight: number, arbitrary: fc.Arbitrary<Draw>) => arbs.push({ weight, arbitrary });

  add(3, fc.constantFrom<Draw>({ raw: '', kind: 'empty' }, { raw: null, kind: 'bare-key' }));
  if (type === 'string') {
    const min = s.minLength ?? 0;
    const max = s.maxLength;
    const unit = classChar(s);
    if (min > 1) add(2, encoded(param, textOf(unit, min - 1, min - 1), 'min-1'));
    if (max !== undefined) add(3, encoded(param, textOf(unit, max + 1, max + 1), 'max+1'));
    if (s.pattern) {
      add(
        3,
        fc
          .tuple(textOf(unit, Math.max(min - 1, 0), Math.min(max ?? 40, min + 10)), foreignChar(s), fc.nat())
          .map(([t, c, at]) => {
            const cps = [...t];
            cps.splice(at % (cps.length + 1), 0, c);
            return cps.join('');
          })
          .chain((t) => encoded(param, fc.constant(t), 'pattern-breaking')),
      );
    }
    if (s.enum) {
      const members = s.enum.map(String);
      add(
        3,
        encoded(
          param,
          fc.oneof(
            fc.constantFrom(...members).map((m) => m.toUpperCase()),
            fc.constantFrom(...members).map((m) => ` ${m}`),
            fc.constantFrom(...members).map((m) => `${m} `),
            fc.constantFrom(...members).map((m) => m.slice(0, -1)),
            fc.constantFrom(...members).map((m) => `${m}x`),
            textOf(anyChar, 0, 12),
          ),
          'not-in-enum',
        ),
      );
    }
    if (s.format) add(2, encoded(param, textOf(anyChar, Math.max(min, 1), Math.min(max ?? 80, min + 40)), 'not-a-uri'));
  }
  if (type === 'integer' || type === 'number') {
    const lo = s.minimum;
    const hi = s.maximum;
    add(
      3,
      fc
        .constantFrom(...[lo, hi].filter((v) => v !== undefined).flatMap((v) => [v!, v! - 1, v! + 1]))
        .map((n) => ({ raw: String(n), kind: 'bound' })),
    );
    add(
      3,
      fc
        .constantFrom(
          'abc',
          '1.5',
          '1,2',
          '[1]',
          '{}',
          'null',
          'true',
          'NaN',
          'Infinity',
          '-Infinity',
          '-1e400',
          '-',
          '1 2',
          '١',
          '9'.repeat(40),
          '-9'.repeat(20),
          '1e400',
        )
        .map((v) => ({ raw: encodeURIComponent(v), kind: 'wrong-type' })),
    );
    // Coercible but not written as a plain decimal: the spec does not say; reported, not asserted.
    add(
      1,
      fc
        .constantFrom('0x1', '1e1', ' 1', '1 ', '+1', '01', '1.0', '-0', '0b1', '0o7', '\t1')
        .map((v) => ({ raw: encodeURIComponent(v), kind: 'lenient-number' })),
    );
  }
  if (type === 'boolean') {
    add(
      4,
      fc
        .constantFrom('1', '0', 'yes', 'no', 'on', 'off', 'null', 'truee', 't', ' true', 'false ', '"true"')
        .map((v) => ({ raw: encodeURIComponent(v), kind: 'wrong-type' })),
    );
    // Any letter case is valid (the spec: Python bots send True/False).
    add(
      1,
      fc.constantFrom('TRUE', 'True', 'FALSE', 'False', 'tRuE').map((v) => ({ raw: v, kind: 'boolean-case' })),
    );
  }
  // Control characters, percent-encoded (raw ones are a protocol matter; see the request-line property).
  add(
    3,
    fc.tuple(validText(param), fc.array(CONTROL, { minLength: 1, maxLength: 3 }), fc.nat()).map(([d, ctl, at]) => {
      const raw = d.raw ?? '';
      const cut = safeCut(raw, at);
      return { raw: raw.slice(0, cut) + ctl.map(encodeURIComponent).join('') + raw.slice(cut), kind: 'control' };
    }),
  );
  // Invalid UTF-8 and stray '%'.
  add(
    4,
    fc.tuple(validText(param), fc.constantFrom(...BAD_ESCAPES), fc.nat()).map(([d, bad, at]) => {
      const raw = d.raw ?? '';
      const cut = safeCut(raw, at);
      return { raw: raw.slice(0, cut) + bad + raw.slice(cut), kind: 'bad-encoding' };
    }),
  );
  // Very long: up to ~100 KB on the wire.
  add(
    1,
    fc
      .tuple(fc.integer({ min: Math.max((s.maxLength ?? 0) + 1, 2_000), max: 100_000 }), fc.constantFrom('a', '%C3%A9', '1', '%00', 'x%2C'))
      .map(([bytes, piece]) => ({
        raw: piece.repeat(Math.max(1, Math.floor(bytes / piece.length))),
        kind: 'very-long',
      })),
  );
  return fc.oneof(...arbs);
}

/** An index into `raw` that splits neither a %XX escape nor the escapes of one UTF-8 character. */
function safeCut(raw: string, at: number): number {
  let cut = at % (raw.length + 1);
  while (cut > 0 && (raw[cut - 1] === '%' || raw[cut - 2] === '%')) cut--;
  while (cut >= 3 && /^%[89ab][0-9a-f]/i.test(raw.slice(cut, cut + 3))) cut -= 3;
  return cut;
}

/** Any value for a parameter: mostly valid, a good share hostile. */
export function valueFor(param: ParamSpec, hostileShare = 45): fc.Arbitrary<Draw> {
  if (hostileShare <= 0) return validText(param);
  if (hostileShare >= 100) return hostileText(param);
  return fc.oneof({ weight: 100 - hostileShare, arbitrary: validText(param) }, { weight: hostileShare, arbitrary: hostileText(param) });
}

/** A path segment for a path parameter (never empty, never a raw '/': those change the route). */
export function segmentFor(param: ParamSpec, hostileShare = 40): fc.Arbitrary<Draw> {
  return valueFor(param, hostileShare)
    .map((d) => ({ ...d, raw: (d.raw ?? '').replace(/\//g, '%2F').replace(/\+/g, '%2B') }))
    .filter((d) => d.raw !== '' && d.raw!.length < 20_000);
}

// ---------------------------------------------------------------------------------------------
// Judging what was sent

const RESERVED = /[:/?#[\]@!$&'()*+,;=]/;

export function decodesCleanly(raw: string): boolean {
  try {
    decodeURIComponent(raw.replace(/\+/g, ' '));
    return true;
  } catch {
    return false;
  }
}

/** Against the schema alone. `unknown` where the spec leaves it open (coercible non-decimal numbers, formats). */
export function judgeSchema(schema: Schema, s: string): Verdict {
  const type = typeOf(schema);
  if (type === 'string') {
    const n = codePoints(s);
    if (schema.minLength !== undefined && n < schema.minLength) return 'invalid';
    if (schema.maxLength !== undefined && n > schema.maxLength) return 'invalid';
    if (schema.pattern && !new RegExp(schema.pattern, 'u').test(s)) return 'invalid';
    if (schema.enum && !schema.enum.includes(s)) return 'invalid';
    return schema.format ? 'unknown' : 'valid';
  }
  if (type === 'integer' || type === 'number') {
    if (s.trim() === '' && s !== '') return 'unknown';
    const n = Number(s);
    if (s === '' || Number.isNaN(n)) return 'invalid';
    if (type === 'integer' && !Number.isInteger(n)) return 'invalid';
    if (schema.minimum !== undefined && n < schema.minimum) return 'invalid';
    if (schema.maximum !== undefined && n > schema.maximum) return 'invalid';
    return /^(0|-?[1-9][0-9]*)$/.test(s) ? 'valid' : 'unknown';
  }
  if (type === 'boolean') return /^(true|false)$/i.test(s) ? 'valid' : 'invalid';
  return 'unknown';
}

/**
 * What the server should make of a query value, given the decoded text (as Node's query-string
 * parser decodes it) and the raw text sent.
 */
export function judge(param: ParamSpec, decoded: string, raw: string | null, formatOk: ReadonlySet<string>): Verdict {
  if (decoded === '' && !param.allowEmptyValue) return 'invalid';
  let verdict = judgeSchema(param.schema, decoded);
  if (
    verdict === 'unknown' &&
    param.schema.format &&
    formatOk.has(decoded) &&
    judgeSchema({ ...param.schema, format: undefined }, decoded) === 'valid'
  ) {
    verdict = 'valid';
  }
  if (verdict !== 'valid' || raw === null) return verdict;
  // Invalid UTF-8 decodes to U+FFFD: accepting that or rejecting it are both defensible.
  if (!decodesCleanly(raw)) return 'unknown';
  // Reserved characters left unencoded where the spec does not allow them (allowReserved false).
  if (!param.allowReserved && RESERVED.test(raw.replace(/%[0-9A-Fa-f]{2}/g, ''))) return 'unknown';
  return 'valid';
}

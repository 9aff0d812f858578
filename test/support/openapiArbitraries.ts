import fc from 'fast-check';

/**
 * fast-check arbitraries built from an OpenAPI document's schemas, for the schema-driven fuzz
 * (test/api/fuzz.test.ts): values the schema allows, and hostile ones it does not.
 */

export type Schema = Record<string, any>;
export interface OpenApiDocument {
  paths: Record<string, Record<string, Schema>>;
  components: { schemas: Record<string, Schema> };
}

/** Strings that have broken parsers, databases and query languages somewhere. */
const HOSTILE_STRINGS: readonly string[] = [
  '',
  ' ',
  'abc\u0000def',
  '\u0000',
  '"abc\u0000def"',
  '\ud800',
  'a\udfffb',
  '\ufffe\uffff',
  'x'.repeat(10_000),
  'word '.repeat(2_000),
  '2147483648',
  '-2147483649',
  '9007199254740992',
  '99999999999999999999',
  '1e308',
  '-1',
  '0',
  '-0',
  '1.5',
  '1e3',
  '0x10',
  '0b1',
  '0o7',
  ' 1',
  '1 ',
  '+1',
  'NaN',
  'Infinity',
  '../../../etc/passwd',
  '..%2f..%2fetc%2fpasswd',
  '%2e%2e',
  '....//',
  "' or 1=1--",
  '"; drop table videos; --',
  "'); select pg_sleep(10); --",
  'a & !b | (c',
  '!(a | b) <-> c:*',
  '"unclosed phrase',
  '""',
  '-',
  '!!!',
  '(((((((((((',
  'a:* & b:A',
  '\\',
  '%',
  '_',
  'null',
  'undefined',
  'true',
  '[]',
  '{}',
  '__proto__',
  'constructor',
  '😀🎉',
  '中文字幕 日本語',
  'e\u0301',
  '\u202eevil',
  '\r\nX-Injected: 1',
  '<script>alert(1)</script>',
  'c:99999999999999999999.9',
  'c:1.99999999999999999999',
  'c:-1.-1',
  'v:abc',
  '0:0',
  'UC0000000000000000000000',
  'dQw4w9WgXcQ',
  '00000000-0000-0000-0000-000000000000',
];

/** Numbers outside every column: the boundaries of int4, int8 and JavaScript's safe integers. */
const HOSTILE_NUMBERS: readonly number[] = [-1, 0, 2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 53 - 1, 2 ** 53, 1e308, -(2 ** 63), 0.5, -0.5];

/** Characters Postgres, URLs or JSON treat specially, to put inside otherwise ordinary text. */
const HOSTILE_CHARACTERS = [
  '\u0000',
  '\ud800',
  '\udfff',
  '\u0001',
  '\ufeff',
  "'",
  '"',
  '\\',
  '%',
  '&',
  '|',
  '!',
  '(',
  ':*',
  '<->',
  '/',
  '..',
  '\n',
];

/** Digit runs that overflow int4, int8, xid8 and doubles, or are negative. */
const HUGE_DIGITS = ['2147483648', '9223372036854775808', '18446744073709551616', '99999999999999999999', '-1', '00000000000000000001'];

/** Ways to spoil a valid value a little: the bugs live next to the valid values. */
const MUTATIONS: Array<(value: string, extra: string) => string> = [
  (value, extra) => `${value.slice(0, value.length >> 1)}${extra}${value.slice(value.length >> 1)}`,
  (value, extra) => `${value}${extra}`,
  (value) => value.repeat(Math.ceil(10_000 / Math.max(1, value.length))),
  (value) => value.toUpperCase(),
  (value) => ` ${value}`,
  (value) => `${value}/../${value}`,
  (value) => (/\d/.test(value) ? value.replace(/\d+/, HUGE_DIGITS[value.length % HUGE_DIGITS.length]!) : `${value}${HUGE_DIGITS[0]}`),
  (value) => value.replace(/\d+(?!.*\d)/, HUGE_DIGITS[3]!),
];

/**
 * The spoils every place of every operation gets in turn (the fuzz's systematic pass): NUL and a
 * lone surrogate inside the valid value, integers past int4 and past 2^53, digit runs past xid8,
 * 10k characters, a negative, hex, SQL, tsquery syntax, nothing, traversal.
 */
export const PROBES: ReadonlyArray<(value: string) => string> = [
  (value) => `${value.slice(0, value.length >> 1)}\u0000${value.slice(value.length >> 1)}`,
  (value) => `${value}\ud800`,
  () => '2147483648',
  () => '9007199254740992',
  (value) => (/\d/.test(value) ? value.replace(/\d+/, '99999999999999999999') : `${value}99999999999999999999`),
  (value) => (/\d/.test(value) ? value.replace(/\d+(?!.*\d)/, '99999999999999999999') : `99999999999999999999${value}`),
  (value) => (value || 'x').repeat(Math.ceil(10_000 / Math.max(1, value.length))),
  () => '-1',
  () => '0x10',
  () => "' or 1=1--",
  () => 'a & !b | (c "d',
  () => '',
  (value) => `${value}/../../etc/passwd`,
];

// Built once: an arbitrary is immutable, and building fast-check's string arbitraries (the reverse map of their
// characters) was a tenth of the fuzz's CPU when every field of every operation built its own.
let hostileStrings: fc.Arbitrary<string> | undefined;
export const hostileString = (): fc.Arbitrary<string> =>
  (hostileStrings ??= fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.string({ maxLength: 8 }), fc.constantFrom(...HOSTILE_CHARACTERS), fc.string({ maxLength: 8 }))
        .map((parts) => parts.join('')),
    },
  ));

/** Something to do to a valid value: spoil it a little (a hostile character inside, huge digits, 10k characters, traversal) or replace it. */
export const spoiler = (): fc.Arbitrary<(value: string) => string> =>
  fc.oneof(
    fc.tuple(fc.integer({ min: 0, max: MUTATIONS.length - 1 }), fc.constantFrom(...HOSTILE_CHARACTERS)).map(
      ([which, extra]) =>
        (value: string) =>
          MUTATIONS[which]!(value, extra),
    ),
    hostileString().map((replacement) => () => replacement),
  );

/** Any JSON value, hostile strings and numbers included: what a body field can hold instead of the right thing. */
let hostileJsonValues: fc.Arbitrary<unknown> | undefined;
export const hostileJson = (): fc.Arbitrary<unknown> =>
  (hostileJsonValues ??= fc.oneof(
    hostileString(),
    fc.constantFrom(...HOSTILE_NUMBERS),
    fc.constantFrom(null, true, false, [], {}),
    fc.jsonValue({ maxDepth: 2 }),
  ));

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * encodeURIComponent that does not throw on a lone surrogate: it becomes the bytes UTF-8 would give
 * its code point (%ED%A0%80 for U+D800), which are invalid UTF-8 — what a hostile client can send.
 */
export function encodeHostile(value: string): string {
  return value
    .split(LONE_SURROGATE)
    .map(encodeURIComponent)
    .reduce((encoded, part, index) => {
      if (index === 0) return part;
      const unit = value.match(LONE_SURROGATE)![index - 1]!.charCodeAt(0);
      const bytes = [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 63), 0x80 | (unit & 63)];
      return `${encoded}${bytes.map((byte) => `%${byte.toString(16).toUpperCase()}`).join('')}${part}`;
    });
}

export function resolveSchema(schema: Schema, document: OpenApiDocument): Schema {
  let resolved = schema;
  for (let hops = 0; typeof resolved.$ref === 'string' && hops < 20; hops++) {
    const name = (resolved.$ref as string).replace('#/components/schemas/', '');
    resolved = document.components.schemas[name] ?? {};
  }
  return resolved;
}

function stringFor(schema: Schema): fc.Arbitrary<string> {
  if (schema.format === 'uuid') return fc.uuid();
  if (typeof schema.pattern === 'string' && schema.pattern !== '\\S') {
    // The patterns of the document are anchored: values that match them pass validation.
    return fc.stringMatching(new RegExp(schema.pattern)).filter((value) => value.length <= (schema.maxLength ?? Infinity));
  }
  const minLength = schema.minLength ?? (schema.pattern === '\\S' ? 1 : 0);
  const maxLength = Math.max(minLength, Math.min(schema.maxLength ?? 40, 40));
  const plain = fc.string({ minLength, maxLength });
  return schema.pattern === '\\S' ? plain.filter((value) => /\S/.test(value)) : plain;
}

function integerFor(schema: Schema): fc.Arbitrary<number> {
  const min = schema.minimum ?? -(2 ** 31);
  const max = schema.maximum ?? 2 ** 31 - 1;
  // fc.integer stays within 32 bits; the boundaries (the schema's, and where column types end) come explicitly.
  const boundaries = [min, max, ...HOSTILE_NUMBERS.filter(Number.isInteger)].filter((value) => value >= min && value <= max);
  return fc.oneof(fc.integer({ min: Math.max(min, -(2 ** 31)), max: Math.min(max, 2 ** 31 - 1) }), fc.constantFrom(...boundaries));
}

/** Values valid against `schema` (as far as the document says: enums, patterns, bounds, required keys). */
export function validArbitrary(schema: Schema, document: OpenApiDocument, depth = 0): fc.Arbitrary<unknown> {
  const resolved = resolveSchema(schema, document);
  const alternatives = resolved.oneOf ?? resolved.anyOf;
  if (Array.isArray(alternatives))
    return fc.oneof(...alternatives.map((alternative: Schema) => validArbitrary(alternative, document, depth + 1)));
  if (Array.isArray(resolved.allOf) && resolved.allOf.length === 1) return validArbitrary(resolved.allOf[0], document, depth + 1);
  if (Array.isArray(resolved.enum)) return fc.constantFrom(...resolved.enum);
  if ('const' in resolved) return fc.constant(resolved.const);
  const type = Array.isArray(resolved.type) ? resolved.type.find((name: string) => name !== 'null') : resolved.type;
  switch (type) {
    case 'string':
      return stringFor(resolved);
    case 'integer':
      return integerFor(resolved);
    case 'number':
      return fc.double({ min: resolved.minimum ?? -1e9, max: resolved.maximum ?? 1e9, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(validArbitrary(resolved.items ?? {}, document, depth + 1), {
        minLength: resolved.minItems ?? 0,
        maxLength: Math.min(resolved.maxItems ?? 4, 4),
      });
    case 'object': {
      if (depth > 4) return fc.constant({});
      const properties: Record<string, Schema> = resolved.properties ?? {};
      const model = Object.fromEntries(
        Object.entries(properties).map(([name, property]) => [name, validArbitrary(property, document, depth + 1)]),
      );
      const record = fc.record(model, { requiredKeys: (resolved.required ?? []).filter((name: string) => name in properties) });
      if (resolved.additionalProperties && typeof resolved.additionalProperties === 'object' && Object.keys(properties).length === 0) {
        const keys = resolved.propertyNames
          ? validArbitrary(resolved.propertyNames, document, depth + 1).map(String)
          : fc.string({ minLength: 1, maxLength: 12 });
        return fc.dictionary(keys, validArbitrary(resolved.additionalProperties, document, depth + 1), { maxKeys: 3 });
      }
      return record;
    }
    default:
      return fc.jsonValue({ maxDepth: 1 });
  }
}

/** An object like `schema` asks for, each field (and sometimes an unknown one) possibly replaced by something hostile. */
export function hostileObject(schema: Schema, document: OpenApiDocument): fc.Arbitrary<unknown> {
  const resolved = resolveSchema(schema, document);
  const alternatives: Schema[] = resolved.oneOf ?? resolved.anyOf ?? [resolved];
  return fc.oneof(
    ...alternatives.map((alternative) => {
      const properties: Record<string, Schema> = resolveSchema(alternative, document).properties ?? {};
      const field = (property: Schema) =>
        fc.oneof({ weight: 1, arbitrary: validArbitrary(property, document, 1) }, { weight: 2, arbitrary: hostileJson() });
      return fc
        .tuple(
          fc.record(Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, field(property)])), {
            requiredKeys: [],
          }),
          fc.option(fc.tuple(fc.constantFrom('unknownField', '__proto__', 'constructor', ''), hostileJson())),
        )
        .map(([record, extra]) => (extra ? { ...record, [extra[0]]: extra[1] } : record));
    }),
  );
}

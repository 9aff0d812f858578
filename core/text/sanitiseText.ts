/**
 * Text from sources made storable: Postgres refuses U+0000 in text and jsonb, and a lone surrogate
 * in JSON text cast to jsonb (records are stored as JSON: `"\ud800"` is invalid input there).
 * Both become U+FFFD, the character Node itself writes for a lone surrogate in UTF-8.
 */
export const UNSTORABLE_CHARACTER = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNSTORABLE = new RegExp(UNSTORABLE_CHARACTER.source, 'g');

/** Substitutions made, by field (`title`, `tags`, `captions.language`, …). */
export type SubstitutionCounts = Record<string, number>;

/** `text` with every NUL and lone surrogate replaced by U+FFFD, and how many were. */
export function sanitiseText(text: string): { text: string; substituted: number } {
  let substituted = 0;
  const clean = text.replace(UNSTORABLE, () => {
    substituted++;
    return '\uFFFD';
  });
  return { text: substituted ? clean : text, substituted };
}

/**
 * Every string inside `value` (objects and arrays walked) sanitised, the substitutions added to
 * `counts` under the dotted field path (array positions left out, so a field counts once however
 * many items held it). Objects without a substitution are returned as they are.
 */
export function sanitiseStrings<T>(value: T, counts: SubstitutionCounts, field = ''): T {
  if (typeof value === 'string') {
    const { text, substituted } = sanitiseText(value);
    if (substituted === 0) return value;
    counts[field || 'value'] = (counts[field || 'value'] ?? 0) + substituted;
    return text as T;
  }
  if (Array.isArray(value)) {
    const items = value.map((item) => sanitiseStrings(item, counts, field));
    return (items.every((item, index) => item === value[index]) ? value : items) as T;
  }
  if (value && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    let copy: Record<string, unknown> | undefined;
    for (const [key, item] of Object.entries(value)) {
      const clean = sanitiseStrings(item, counts, field ? `${field}.${key}` : key);
      if (clean !== item) (copy ??= { ...(value as Record<string, unknown>) })[key] = clean;
    }
    return (copy ?? value) as T;
  }
  return value;
}

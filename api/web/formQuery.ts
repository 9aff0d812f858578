/**
 * A GET form sends every field, those left alone empty: a blank field means the field's default, as if
 * it were not there, so a page's query schema (the API route's own) reads the form as the API reads a URL.
 */
export const withoutBlanks = (value: unknown) =>
  typeof value === 'object' && value !== null
    ? Object.fromEntries(Object.entries(value).filter(([, field]) => typeof field !== 'string' || field.trim() !== ''))
    : value;

/** A link to `path` with these fields, leaving out those unset or at their default (links stay short). */
export function queryHref(path: string, fields: Record<string, unknown>, defaults: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) if (value !== undefined && value !== defaults[name]) params.set(name, String(value));
  const search = params.toString();
  return search ? `${path}?${search}` : path;
}

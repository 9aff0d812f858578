/**
 * A GET form sends every field, those left alone empty: a blank field means the field's default, as if
 * it were not there, so a page's query schema (the API route's own) reads the form as the API reads a URL.
 */
export const withoutBlanks = (value: unknown) =>
  typeof value === 'object' && value !== null ? Object.fromEntries(Object.entries(value).filter(([, field]) => typeof field !== 'string' || field.trim() !== '')) : value;

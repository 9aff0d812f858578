const jsonTextTag = Symbol('jsonText');

/**
 * A value already serialised as JSON (parts of it written by Postgres), sent as these bytes instead of
 * through JSON.stringify: a page of search results is not parsed and serialised again field by field.
 * `T` is the value it stands for, so a route's answer keeps its type.
 */
export interface JsonText<T> {
  [jsonTextTag]: true;
  text: string;
  /** Never set: carries the type the text stands for. */
  value?: T;
}

export const jsonText = <T>(text: string): JsonText<T> => ({ [jsonTextTag]: true, text });

export const isJsonText = (value: unknown): value is JsonText<unknown> =>
  typeof value === 'object' && value !== null && jsonTextTag in value;

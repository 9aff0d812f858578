import type { z } from 'zod';

declare const madeByConstructor: unique symbol;

/**
 * An event as appendEvents stores it. Only an event type's constructor (see defineEvent) makes
 * one: the brand exists for the type checker alone, so a hand-built `{type, payload}` is refused.
 */
export interface TypedEvent<T extends string = string, P = unknown> {
  readonly type: T;
  readonly payload: P;
  readonly [madeByConstructor]: true;
}

export interface EventDefinition<T extends string = string, S extends z.ZodType = z.ZodType> {
  (payload: z.output<S>): TypedEvent<T, z.output<S>>;
  readonly type: T;
  readonly schema: S;
}

/** The events of one kind of stream, documented together (e.g. as SearchEvent in the OpenAPI document). */
export interface EventVocabulary {
  name: string;
  events: ReadonlyArray<{ readonly type: string; readonly schema: z.ZodType }>;
}

/**
 * The constructor of one event type. The payload is parsed by the schema (and stored as given, so
 * the wire format is the caller's JSON) unless `parse` is false: for payloads read as JSON from
 * SQL (VIDEO_JSON, CHANNEL_JSON) in the hot path, where the types alone hold and a test parses them.
 */
export function defineEvent<T extends string, S extends z.ZodType>(
  type: T,
  schema: S,
  options: { parse?: boolean } = {},
): EventDefinition<T, S> {
  const parse = options.parse ?? true;
  const make = (payload: z.output<S>) => {
    if (parse) schema.parse(payload);
    return { type, payload } as TypedEvent<T, z.output<S>>;
  };
  return Object.assign(make, { type, schema });
}

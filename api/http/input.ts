import { AppError } from '../../core/errors.ts';
import { refuseUnstorableText } from '../../core/text/storableText.ts';
import { describeIssues } from './failure.ts';
import { z } from 'zod';

/**
 * A request's params, query, body or form fields as its schema makes them: text Postgres cannot store
 * (a NUL, a lone surrogate) refused first, then the schema, each mistake named (400 INVALID_INPUT).
 * The one parser of routes and pages, so a page never lets through what the API refuses.
 */
export function parseInput(schema: z.ZodType, value: unknown, where: string): unknown {
  refuseUnstorableText(value, where);
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new AppError('INVALID_INPUT', describeIssues(parsed.error, where));
  return parsed.data;
}

/** A query string's parameters: each one the schema reads given once, then parsed as any input. */
export function parseQuery(schema: z.ZodType, query: Record<string, unknown>): unknown {
  refuseRepeatedParameters(schema, query);
  return parseInput(schema, { ...query }, 'query');
}

/** Query-string and path values as the routes accept them, with the messages a caller sees when one is wrong. */

/** The fields of an object schema, also inside a preprocess or transform; undefined for another kind. */
const shapeOf = (schema: z.ZodType): Record<string, unknown> | undefined =>
  schema instanceof z.ZodObject
    ? schema.shape
    : schema instanceof z.ZodPipe
      ? (shapeOf(schema.out as z.ZodType) ?? shapeOf(schema.in as z.ZodType))
      : undefined;

/**
 * Every parameter a route or page reads is given once: a repeated one (`?q=a&q=b`, which the query
 * string parser reads as a list) is refused by name rather than met with its schema's message for a
 * missing value. A parameter the schema does not declare is left to it (unknown, or ignored on a page
 * shared as a link, whose tracking parameters may repeat).
 */
function refuseRepeatedParameters(schema: z.ZodType, query: Record<string, unknown>): void {
  const shape = shapeOf(schema);
  const repeated = Object.keys(query).filter((name) => Array.isArray(query[name]) && (!shape || name in shape));
  if (repeated.length) throw new AppError('INVALID_INPUT', repeated.map((name) => `${name}: give it once`).join('; '));
}

export const flag = z.enum(['true', 'false'], { message: 'expected true or false' }).transform((value) => value === 'true');

/** Digits only: no sign but a minus, no spaces, no hex, exponent or fraction (`0x10`, `1e3`, `+5`, `16.0` are refused, not read as numbers). */
const DECIMAL = /^-?\d+$/;
const decimalOnly = (value: unknown) => (typeof value === 'string' && DECIMAL.test(value) ? Number(value) : value);

/**
 * A whole number from `min` to `max` written in decimal digits; `max` is what its column holds at
 * most. The default, when given, is part of the schema so that the OpenAPI document shows it.
 */
export function wholeNumber(name: string, min: number, max: number, fallback?: number) {
  const expected = `expected a whole number from ${min} to ${max}, in decimal digits`;
  const bounded = z
    .number({ message: expected })
    .int({ message: expected })
    .min(min, { message: `${name} starts at ${min}` })
    .max(max, { message: `at most ${max}` });
  return z.preprocess(decimalOnly, fallback === undefined ? bounded : bounded.default(fallback));
}

/** Query-string and path values as the routes accept them, with the messages a caller sees when one is wrong. */
import { z } from 'zod';

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

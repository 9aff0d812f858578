/** Query-string values as the routes accept them, with the messages a caller sees when one is wrong. */
import { z } from 'zod';

export const flag = z.enum(['true', 'false'], { message: 'expected true or false' }).transform((value) => value === 'true');

export const wholeNumber = (name: string, min: number, max: number) =>
  z.coerce.number({ message: `expected a whole number from ${min} to ${max}` })
    .int({ message: `expected a whole number from ${min} to ${max}` })
    .min(min, { message: `${name} starts at ${min}` })
    .max(max, { message: `at most ${max}` });

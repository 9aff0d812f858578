import type { z } from 'zod';
import { AppError } from '../../core/errors.ts';
import { refuseUnstorableText } from '../../core/text/storableText.ts';
import { describeIssues } from './failure.ts';
import { refuseRepeatedParameters } from './queryParams.ts';

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

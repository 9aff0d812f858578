import { AppError } from '../../core/errors.ts';
import { refuseUnstorableText } from '../../core/text/storableText.ts';
import { describeIssues } from './failure.ts';
import { z } from 'zod';
import type { IncomingMessage } from 'node:http';

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

/** The body's bytes up to `limitBytes`; undefined when there are none. */
async function readBodyBytes(req: IncomingMessage, limitBytes: number): Promise<Buffer | undefined> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > limitBytes) throw tooLarge(limitBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > limitBytes) throw tooLarge(limitBytes);
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    // The client went (or was cut off, see api/server.ts RECEIVE_LIMITS) before its body was in: its
    // failure, not a connection of ours that reset.
    if (error instanceof AppError || !req.destroyed) throw error;
    throw new AppError('INVALID_INPUT', 'the request body broke off before it was complete; send the request again');
  }
  return size === 0 ? undefined : Buffer.concat(chunks);
}

const mediaTypeOf = (req: IncomingMessage) =>
  String(req.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();

/**
 * Reads a JSON body up to `limitBytes`. No body gives undefined; anything but JSON, a body over the
 * limit or malformed JSON is the caller's error, never ours.
 */
export async function readJsonBody(req: IncomingMessage, limitBytes: number): Promise<unknown> {
  const bytes = await readBodyBytes(req, limitBytes);
  if (bytes === undefined) return undefined;
  const type = mediaTypeOf(req);
  if (type !== 'application/json' && !type.endsWith('+json')) {
    throw new AppError(
      'INVALID_INPUT',
      `the request body must be JSON, sent with Content-Type: application/json (got ${type || 'no Content-Type'})`,
      { status: 415 },
    );
  }
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw new AppError('INVALID_INPUT', `the request body is not valid JSON: ${(error as Error).message}`);
  }
}

/** Reads an HTML form's fields (application/x-www-form-urlencoded) up to `limitBytes`; a field sent twice keeps its last value. */
export async function readFormBody(req: IncomingMessage, limitBytes: number): Promise<Record<string, string>> {
  const bytes = await readBodyBytes(req, limitBytes);
  if (bytes === undefined) return {};
  const type = mediaTypeOf(req);
  if (type !== 'application/x-www-form-urlencoded') {
    throw new AppError('INVALID_INPUT', `a form must be sent as application/x-www-form-urlencoded (got ${type || 'no Content-Type'})`, {
      status: 415,
    });
  }
  return Object.fromEntries(new URLSearchParams(bytes.toString('utf8')));
}

/**
 * Reads a form sent as multipart/form-data (a file upload) up to `limitBytes`: its text fields, and
 * its files' bytes by field name (kept in memory, never written anywhere).
 */
export async function readMultipartBody(
  req: IncomingMessage,
  limitBytes: number,
): Promise<{ fields: Record<string, string>; files: Record<string, Buffer> }> {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(String(req.headers['content-type'] ?? ''));
  if (mediaTypeOf(req) !== 'multipart/form-data' || !boundary) {
    throw new AppError('INVALID_INPUT', "a file must be sent as multipart/form-data, as the page's form sends it", { status: 415 });
  }
  const bytes = (await readBodyBytes(req, limitBytes)) ?? Buffer.alloc(0);
  const delimiter = Buffer.from(`\r\n--${boundary[1] ?? boundary[2]}`);
  const fields: Record<string, string> = {};
  const files: Record<string, Buffer> = {};
  // The body starts with the delimiter without its CRLF; each part is headers, a blank line, the content.
  let at = bytes.indexOf(delimiter.subarray(2));
  while (at >= 0) {
    const start = at + (at === 0 ? delimiter.length - 2 : delimiter.length);
    if (bytes.subarray(start, start + 2).toString() === '--') break;
    const next = bytes.indexOf(delimiter, start);
    const headerEnd = bytes.indexOf('\r\n\r\n', start);
    if (next < 0 || headerEnd < 0 || headerEnd > next) throw new AppError('INVALID_INPUT', 'the uploaded form is cut short or malformed');
    const headers = bytes.subarray(start, headerEnd).toString('utf8');
    const name = /name="([^"]*)"/i.exec(headers)?.[1];
    const content = bytes.subarray(headerEnd + 4, next);
    if (name !== undefined) {
      if (/filename="/i.test(headers)) files[name] = content;
      else fields[name] = content.toString('utf8');
    }
    at = next;
  }
  return { fields, files };
}

const tooLarge = (limitBytes: number) =>
  new AppError('INVALID_INPUT', `the request body is larger than the limit of ${limitBytes} bytes`, { status: 413 });

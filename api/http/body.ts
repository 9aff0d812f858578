import type { IncomingMessage } from 'node:http';
import { AppError } from '../../core/errors.ts';

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

const tooLarge = (limitBytes: number) =>
  new AppError('INVALID_INPUT', `the request body is larger than the limit of ${limitBytes} bytes`, { status: 413 });

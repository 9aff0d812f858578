import type { IncomingMessage } from 'node:http';
import { AppError } from '../../core/errors.ts';

/**
 * Reads a JSON body up to `limitBytes`. No body gives undefined; anything but JSON, a body over the
 * limit or malformed JSON is the caller's error, never ours.
 */
export async function readJsonBody(req: IncomingMessage, limitBytes: number): Promise<unknown> {
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
  if (size === 0) return undefined;
  const type = String(req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json' && !type.endsWith('+json')) {
    throw new AppError('INVALID_INPUT', `the request body must be JSON, sent with Content-Type: application/json (got ${type || 'no Content-Type'})`, { status: 415 });
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (error) {
    throw new AppError('INVALID_INPUT', `the request body is not valid JSON: ${(error as Error).message}`);
  }
}

const tooLarge = (limitBytes: number) =>
  new AppError('INVALID_INPUT', `the request body is larger than the limit of ${limitBytes} bytes`, { status: 413 });

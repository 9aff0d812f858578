/**
 * Serves one open file as HTTP does (RFC 9110): validators (ETag, Last-Modified), conditional
 * requests (If-Match, If-Unmodified-Since, If-None-Match, If-Modified-Since, If-Range) and single
 * byte ranges, streamed from disk with backpressure.
 */
import type { ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../../core/errors.ts';
import type { MediaFile } from '../../core/videos/mediaFile.ts';
import { evaluatePreconditions, httpDate, preconditionFailed, seconds, cachingHeaders } from './representation.ts';
import { privateCache, type Exchange } from './route.ts';

/** The bytes to send: a first and last position (inclusive), the whole file, or none that exist. */
type ByteRange = { start: number; end: number } | 'whole' | 'unsatisfiable';

/**
 * Reads a Range header for a file of `size` bytes. Only one range is honoured: a header that is
 * absent, malformed, in another unit or asks for several ranges gets the whole file, as RFC 9110
 * §14.2 allows (a multipart/byteranges answer is something players never ask for).
 */
export function parseRange(header: string | undefined, size: number): ByteRange {
  const specs = /^\s*bytes\s*=(.*)$/i
    .exec(header ?? '')?.[1]
    ?.split(',')
    .map((spec) => spec.trim())
    .filter(Boolean);
  if (specs?.length !== 1) return 'whole';
  const [, first, last] = /^(\d*)-(\d*)$/.exec(specs[0]!) ?? [];
  if (first === undefined || last === undefined || (first === '' && last === '')) return 'whole';
  if (first === '') {
    // bytes=-n: the last n bytes.
    const length = Number(last);
    return length === 0 || size === 0 ? 'unsatisfiable' : { start: Math.max(0, size - length), end: size - 1 };
  }
  const start = Number(first);
  const end = last === '' ? Infinity : Number(last);
  if (end < start) return 'whole';
  return start >= size ? 'unsatisfiable' : { start, end: Math.min(end, size - 1) };
}

/** The request headers sendFile reads, for the OpenAPI document. */
export const fileRequestHeaders = {
  Range: 'one byte range: bytes=a-b, bytes=a- or bytes=-n (the last n bytes); several ranges get the whole file',
  'If-Range': 'an ETag or Last-Modified of the copy the range continues; another file gets the whole file (200)',
  'If-None-Match': 'ETags of copies the client has: 304 when one is current',
  'If-Modified-Since': 'without If-None-Match: 304 when the file is no newer',
  'If-Match': 'ETags the file must have: 412 otherwise',
  'If-Unmodified-Since': 'without If-Match: 412 when the file is newer',
};

/** If-Range: the range holds only while the client's copy is the current one (a strong ETag or the exact Last-Modified). */
function rangeStillValid(ifRange: string | undefined, file: MediaFile): boolean {
  if (ifRange === undefined) return true;
  const value = ifRange.trim();
  if (value.startsWith('"') || value.startsWith('W/')) return value === file.etag;
  return httpDate(value) === seconds(file.modifiedAt.getTime());
}

/** Whether a failed pipeline only means the client went away. */
const clientGone = (error: unknown, res: ServerResponse) =>
  res.destroyed || (error as NodeJS.ErrnoException)?.code === 'ERR_STREAM_PREMATURE_CLOSE';

/**
 * Answers a GET or HEAD for `file` and closes it: 200, 206 with one range, 304 (counting nothing), or
 * an error thrown for the JSON envelope (412, 416 with `Content-Range: bytes *\/size`).
 */
export async function sendFile({ req, res, countRequest, waiveRequest }: Exchange, file: MediaFile): Promise<void> {
  let streaming = false;
  try {
    const validatorHeaders = {
      ETag: file.etag,
      'Last-Modified': file.modifiedAt.toUTCString(),
      'Accept-Ranges': 'bytes',
      // Keyed answers: no shared cache may keep them; a client revalidates (a free 304) before reuse.
      ...cachingHeaders(res, privateCache, false),
    };
    const outcome = evaluatePreconditions(req, file);
    if (outcome === 'precondition-failed') throw preconditionFailed('the file', validatorHeaders);
    if (outcome === 'not-modified') {
      waiveRequest();
      res.writeHead(304, validatorHeaders);
      res.end();
      return;
    }
    const ifRange = req.headers['if-range'];
    // A repeated If-Range names no one copy: it never matches.
    const range = rangeStillValid(Array.isArray(ifRange) ? ifRange.join(', ') : ifRange, file)
      ? parseRange(req.headers.range, file.size)
      : 'whole';
    if (range === 'unsatisfiable') {
      throw new AppError('INVALID_INPUT', `the range ${req.headers.range} lies outside the file's ${file.size} bytes`, {
        status: 416,
        headers: { 'Content-Range': `bytes */${file.size}`, 'Accept-Ranges': 'bytes' },
      });
    }
    const { start, end } = range === 'whole' ? { start: 0, end: file.size - 1 } : range;
    await countRequest();
    res.writeHead(range === 'whole' ? 200 : 206, {
      ...validatorHeaders,
      'Content-Type': file.contentType,
      'Content-Length': end - start + 1,
      'Content-Disposition': `inline; filename="${file.fileName}"`,
      ...(range === 'whole' ? {} : { 'Content-Range': `bytes ${start}-${end}/${file.size}` }),
    });
    if (req.method === 'HEAD' || end < start) {
      res.end();
      return;
    }
    streaming = true;
    // The stream closes the file when it ends, fails or is destroyed (a client that leaves).
    await pipeline(file.handle.createReadStream({ start, end }), res).catch((error: unknown) => {
      if (!clientGone(error, res)) throw error;
    });
  } finally {
    if (!streaming) await file.handle.close();
  }
}

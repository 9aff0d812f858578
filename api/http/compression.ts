/**
 * Content codings (RFC 9110 §8.4, §12.5.3): brotli or gzip as the request's Accept-Encoding prefers,
 * for text answers of at least COMPRESS_MIN_BYTES. Media files, zips and event streams are never coded.
 */
import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { remembered } from '../../core/remembered.ts';
import { brotliCompress, constants, createBrotliCompress, createGzip, gzip, type BrotliOptions } from 'node:zlib';

export type Coding = 'br' | 'gzip' | 'identity';

/** Below this many bytes a coded body saves less than its headers and the CPU cost: sent as is. */
const COMPRESS_MIN_BYTES = 1024;

/**
 * Brotli at quality 5 (zlib's default is 11, meant for files compressed once): for answers compressed
 * on every request it is within a few per cent of 11's size at a fraction of its CPU (see the
 * subtitles-bulk benchmark). gzip keeps zlib's default level 6.
 */
const BROTLI: BrotliOptions = {
  params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT },
};

/** Text media types: JSON, text/*, HTML, XML, subtitles. text/event-stream is excluded: each event must reach the client when written. */
export const isCompressible = remembered((contentType: string): boolean => {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return (
    type !== 'text/event-stream' &&
    (type.startsWith('text/') || /^application\/(.+\+)?(json|xml)$/.test(type) || type === 'application/x-subrip')
  );
}, 100);

/**
 * The coding to send for an Accept-Encoding header: the one of br and gzip with the highest q-value
 * (br on a tie, as it is smaller), identity when neither is acceptable or the header is absent. `*`
 * stands for every coding the header does not name; q=0 refuses one. A header that refuses identity
 * too still gets identity, as RFC 9110 §12.5.3 allows, rather than a 406 with no content.
 */
export function negotiateCoding(header: string | string[] | undefined): Coding {
  if (header === undefined) return 'identity';
  return preferredCoding(Array.isArray(header) ? header.join(',') : header);
}

/** Clients send a few headers, each on every request: each worked out once. */
const preferredCoding = remembered((header: string): Coding => {
  const weights = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name, ...parameters] = part.split(';').map((piece) => piece.trim().toLowerCase());
    if (!name) continue;
    const q = parameters.map((parameter) => /^q=([01](?:\.\d{0,3})?)$/.exec(parameter)?.[1]).find((value) => value !== undefined);
    weights.set(name === 'x-gzip' ? 'gzip' : name, q === undefined ? 1 : Number(q));
  }
  const weight = (coding: string) => weights.get(coding) ?? weights.get('*') ?? 0;
  const best = (['br', 'gzip'] as const).reduce<Coding>(
    (chosen, coding) => (weight(coding) > (chosen === 'identity' ? 0 : weight(chosen)) ? coding : chosen),
    'identity',
  );
  return best;
}, 1_000);

/** The coding this request gets for a body of `contentType` (identity for types that are never coded). */
export const codingFor = (req: IncomingMessage, contentType: string): Coding =>
  isCompressible(contentType) ? negotiateCoding(req.headers['accept-encoding']) : 'identity';

const compressors = { br: (body: Buffer) => promisify(brotliCompress)(body, BROTLI), gzip: (body: Buffer) => promisify(gzip)(body) };

/** Whether a body of `bytes` is sent in `coding` (small bodies stay as they are). */
export const isCoded = (coding: Coding, bytes: number) => coding !== 'identity' && bytes >= COMPRESS_MIN_BYTES;

/** The body in `coding`, compressed on libuv's thread pool so the event loop keeps serving; small bodies stay as they are. */
export async function encodeBody(body: Buffer, coding: Coding): Promise<{ body: Buffer; coded: boolean }> {
  if (coding === 'identity' || body.length < COMPRESS_MIN_BYTES) return { body, coded: false };
  return { body: await compressors[coding](body), coded: true };
}

/**
 * Where a streamed answer (the bulk JSON) writes its pieces: the response itself, or a compressor
 * piped into it, destroyed when the client leaves. Its length is unknown, so it is coded whatever its size.
 */
export function streamSink(res: ServerResponse, coding: Coding): Writable {
  if (coding === 'identity') return res;
  const compressor = coding === 'br' ? createBrotliCompress(BROTLI) : createGzip();
  compressor.pipe(res);
  res.once('close', () => compressor.destroy());
  return compressor;
}

/** Resolves when the sink can take more (or is gone): the backpressure of a streamed answer. */
export async function drained(sink: Writable): Promise<void> {
  if (!sink.writableNeedDrain || sink.destroyed) return;
  await Promise.race([once(sink, 'drain'), once(sink, 'close')]);
}

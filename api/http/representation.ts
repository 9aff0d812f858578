/**
 * How an answer is sent: plain JSON and error envelopes (sendJson, sendError), and an answer with a
 * body that may be cached: its validators (ETag, Last-Modified) and If-None-Match → 304,
 * which counts nothing; Cache-Control and Vary; and its content coding (below).
 *
 * A coded answer is another representation, so it gets its own strong ETag (RFC 9110 §8.8.3): the
 * content's tag with -br or -gzip before the closing quote. The suffix follows the coding the request
 * negotiates, also for a body too small to be coded, so a tag is known before the body is made (a
 * stored hash) and always names the same bytes.
 */
import type { ServerResponse, IncomingMessage } from 'node:http';
import { type ErrorCode, AppError } from '../../core/errors.ts';
import type { CachePolicy, Exchange } from './route.ts';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { remembered } from '../../core/remembered.ts';
import { brotliCompress, constants, createBrotliCompress, createGzip, gzip, type BrotliOptions } from 'node:zlib';
import { createHash } from 'node:crypto';

export const JSON_TYPE = 'application/json; charset=utf-8';

/** Adds header names to Vary, keeping those another layer set (CORS's Origin, Accept-Encoding). */
export function addVary(res: ServerResponse, names: readonly string[]): void {
  const vary = res.getHeader('Vary');
  if (vary === undefined) {
    if (names.length) res.setHeader('Vary', names.join(', '));
    return;
  }
  const present = String(vary)
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const added = names.filter((name) => !present.some((other) => other === '*' || other.toLowerCase() === name.toLowerCase()));
  if (added.length) res.setHeader('Vary', [...present, ...added].join(', '));
}

/** The request headers that say who an API caller is (its key); the website's visitor is said by the session cookie. */
export const API_CALLER_HEADERS: readonly string[] = ['X-API-Key', 'Authorization'];
export const PAGE_CALLER_HEADERS: readonly string[] = ['Cookie'];

/** What an answer nobody may keep says: errors, writes, reads without validators. */
const NOT_STORED = 'private, no-store';

/**
 * Before any work, for a request whose answer may depend on its caller: Vary names the headers that say
 * who the caller is, and `private, no-store` stands until the answer says otherwise (a read with an
 * ETag: `private, no-cache`; a page everybody may keep: `public`). So an answer that says nothing of
 * its own (an error, a redirect, a stream or file a handler writes itself) is kept by no cache.
 */
export function privateByDefault(res: ServerResponse, callerHeaders: readonly string[]): void {
  res.setHeader('Cache-Control', NOT_STORED);
  addVary(res, callerHeaders);
}

/**
 * The caching headers of a policy. Private answers depend on the caller (its data, its tier's access):
 * no shared cache stores them and a browser revalidates before each reuse (privateByDefault has named the
 * caller's headers in Vary). Public ones are the same for everybody and may be kept for maxAgeSeconds.
 * Without a policy, nobody keeps the answer. Vary is set on the response at once (merged with what is
 * there); Cache-Control is returned, to go with the 200 or 304 only, never with an error (a 429) that
 * replaces it.
 */
export function cachingHeaders(res: ServerResponse, policy: CachePolicy | undefined, compressible: boolean): Record<string, string> {
  if (compressible) addVary(res, ['Accept-Encoding']);
  if (!policy) return { 'Cache-Control': NOT_STORED };
  return { 'Cache-Control': policy.scope === 'private' ? 'private, no-cache' : `public, max-age=${policy.maxAgeSeconds}` };
}

/** The ETag of the content's `coding` representation. */
const codedTag = (etag: string, coding: Coding) => (coding === 'identity' ? etag : `${etag.slice(0, -1)}-${coding}"`);

export interface AnswerOptions {
  contentType: string;
  /** Who may keep it and how long; without one the answer has no validators (writes, reads that change with every call). */
  cache?: CachePolicy | undefined;
  /** The content's strong ETag when known before the body (a stored hash); else a hash of the body. */
  etag?: string;
  /** When the content last changed, for If-Modified-Since (crawlers send it). */
  modifiedAt?: Date;
}

/** Coded bodies this large are kept by their strong ETag (which names exactly those bytes): the OpenAPI document, large sitemaps. */
const KEEP_CODED_BYTES = 64 * 1024;
const KEPT_CODED = 8;
const keptCoded = new Map<string, Buffer>();

/**
 * encodeBody, but a large body with a tag is coded once per process: brotli takes about 20 ms for
 * the 190 kB OpenAPI document, fetched by every generated client, and the same tag is the same bytes.
 */
async function encodeTagged(body: Buffer, coding: Coding, etag: string | undefined): Promise<{ body: Buffer; coded: boolean }> {
  if (etag === undefined || coding === 'identity' || body.length < KEEP_CODED_BYTES) return encodeBody(body, coding);
  const kept = keptCoded.get(etag);
  if (kept) return { body: kept, coded: true };
  const encoded = await encodeBody(body, coding);
  if (keptCoded.size >= KEPT_CODED) keptCoded.delete(keptCoded.keys().next().value!);
  keptCoded.set(etag, encoded.body);
  return encoded;
}

export interface PreparedAnswer {
  /** Counts the request (429 replaces the answer when refused), codes the body and sends it. */
  send(body: string | Buffer, headers?: Record<string, string>, status?: number): Promise<void>;
}

/**
 * Decides an answer's headers before its body. With an ETag, a request whose If-None-Match (or
 * If-Modified-Since) names the current version is answered 304 here, counts nothing, and undefined is
 * returned: the caller makes no body and charges nothing.
 */
export function prepareAnswer({ req, res, countRequest, waiveRequest }: Exchange, options: AnswerOptions): PreparedAnswer | undefined {
  const coding = codingFor(req, options.contentType);
  const headers = cachingHeaders(res, options.cache, isCompressible(options.contentType));
  if (options.etag) {
    headers.ETag = codedTag(options.etag, coding);
    if (options.modifiedAt) headers['Last-Modified'] = options.modifiedAt.toUTCString();
    const outcome = evaluatePreconditions(req, { etag: headers.ETag, modifiedAt: options.modifiedAt });
    if (outcome === 'precondition-failed') throw preconditionFailed('the answer', { ETag: headers.ETag });
    if (outcome === 'not-modified') {
      waiveRequest();
      res.writeHead(304, headers);
      res.end();
      return undefined;
    }
  }
  return {
    async send(body, extra = {}, status = 200) {
      await countRequest();
      const length = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
      // A body sent as text goes out in one write with the headers (Node joins them); a Buffer takes a writev of two.
      const encoded = isCoded(coding, length)
        ? await encodeTagged(Buffer.isBuffer(body) ? body : Buffer.from(body), coding, status === 200 ? headers.ETag : undefined)
        : { body, coded: false };
      res.writeHead(status, {
        ...headers,
        'Content-Type': options.contentType,
        'Content-Length': encoded.coded ? encoded.body.length : length,
        ...(encoded.coded ? { 'Content-Encoding': coding } : {}),
        ...extra,
      });
      res.end(req.method === 'HEAD' ? undefined : encoded.body);
    },
  };
}

/** Sends a body made before its validators: a cacheable one is tagged by its hash, and 304 when the client has it. */
export async function sendAnswer(
  exchange: Exchange,
  body: string | Buffer,
  options: AnswerOptions & { status?: number; headers?: Record<string, string> },
): Promise<void> {
  const cacheable = options.cache !== undefined && (options.status ?? 200) === 200;
  await prepareAnswer(exchange, {
    ...options,
    cache: cacheable ? options.cache : undefined,
    etag: cacheable ? (options.etag ?? entityTag(body)) : undefined,
  })?.send(body, options.headers, options.status);
}

/** A JSON answer as it is, without validators or coding (MCP's answers, errors). */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': JSON_TYPE, 'Content-Length': Buffer.byteLength(payload), ...headers });
  res.end(payload);
}

export function sendError(
  res: ServerResponse,
  status: number,
  code: ErrorCode,
  message: string,
  extra: { headers?: Record<string, string>; details?: unknown } = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // An error is never kept, by any cache: it is one caller's (a 429, a 403), and the next request may succeed.
  sendJson(
    res,
    status,
    { error: { code, message, ...(extra.details === undefined ? {} : { details: extra.details }) } },
    {
      'Cache-Control': NOT_STORED,
      ...extra.headers,
    },
  );
}

/**
 * Content codings (RFC 9110 §8.4, §12.5.3): brotli or gzip as the request's Accept-Encoding prefers,
 * for text answers of at least COMPRESS_MIN_BYTES. Media files, zips and event streams are never coded.
 */

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
const isCoded = (coding: Coding, bytes: number) => coding !== 'identity' && bytes >= COMPRESS_MIN_BYTES;

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

/**
 * Validators and conditional requests (RFC 9110 §8.8, §13) for every cacheable read: files
 * (api/http/sendFile.ts) and the answers above.
 */

/** What a representation is validated by: a strong ETag and, where the content has a time, when it last changed. */
export interface Validators {
  etag: string;
  modifiedAt?: Date;
}

/** A strong ETag of these bytes: 144 bits of their SHA-256, as a quoted base64url string. */
export const entityTag = (content: string | Buffer) => `"${createHash('sha256').update(content).digest('base64url').slice(0, 24)}"`;

const entityTags = (header: string) => header.split(',').map((tag) => tag.trim());
/** If-None-Match compares weakly (§13.1.2): W/"x" matches "x". */
const weakMatch = (header: string, etag: string) => entityTags(header).some((tag) => tag === '*' || tag.replace(/^W\//, '') === etag);
const strongMatch = (header: string, etag: string) => entityTags(header).some((tag) => tag === '*' || tag === etag);
/** HTTP dates have whole seconds; a time is compared at that precision. */
export const seconds = (time: number) => Math.floor(time / 1000);
export const httpDate = (header: string | undefined): number | undefined => {
  const time = header === undefined ? NaN : Date.parse(header);
  return Number.isNaN(time) ? undefined : seconds(time);
};

export type Outcome = 'send' | 'not-modified' | 'precondition-failed';

/** RFC 9110 §13.2.2: the preconditions in their order of evaluation; the dates only where the content has a time. */
export function evaluatePreconditions(req: IncomingMessage, validators: Validators): Outcome {
  const modified = validators.modifiedAt && seconds(validators.modifiedAt.getTime());
  const { 'if-match': ifMatch, 'if-none-match': ifNoneMatch } = req.headers;
  if (ifMatch !== undefined) {
    if (!strongMatch(ifMatch, validators.etag)) return 'precondition-failed';
  } else {
    const unmodifiedSince = httpDate(req.headers['if-unmodified-since']);
    if (unmodifiedSince !== undefined && modified !== undefined && modified > unmodifiedSince) return 'precondition-failed';
  }
  if (ifNoneMatch !== undefined) return weakMatch(ifNoneMatch, validators.etag) ? 'not-modified' : 'send';
  const modifiedSince = httpDate(req.headers['if-modified-since']);
  return modifiedSince !== undefined && modified !== undefined && modified <= modifiedSince ? 'not-modified' : 'send';
}

/** 412: If-Match or If-Unmodified-Since named another version of `what`. */
export const preconditionFailed = (what: string, headers: Record<string, string>) =>
  new AppError('INVALID_INPUT', `${what} is no longer the one If-Match or If-Unmodified-Since names; read it again`, {
    status: 412,
    headers,
  });

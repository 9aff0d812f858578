/**
 * How an answer is sent: plain JSON and error envelopes (sendJson, sendError), and an answer with a
 * body that may be cached: its validators (ETag, Last-Modified) and If-None-Match → 304,
 * which counts nothing; Cache-Control and Vary; and its content coding (api/http/compression.ts).
 *
 * A coded answer is another representation, so it gets its own strong ETag (RFC 9110 §8.8.3): the
 * content's tag with -br or -gzip before the closing quote. The suffix follows the coding the request
 * negotiates, also for a body too small to be coded, so a tag is known before the body is made (a
 * stored hash) and always names the same bytes.
 */
import type { ServerResponse } from 'node:http';
import type { ErrorCode } from '../../core/errors.ts';
import type { Coding } from './compression.ts';
import { codingFor, encodeBody, isCoded, isCompressible } from './compression.ts';
import { entityTag, evaluatePreconditions, preconditionFailed } from './conditional.ts';
import type { CachePolicy, Exchange } from './route.ts';

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

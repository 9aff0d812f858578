/**
 * The ways out of the process. One GET to an upstream (see upstream.ts), for the sources, subtitle
 * fetchers and probes: every hop's origin is checked against the upstream's, redirects are followed
 * by hand (each target checked the same way), the addresses a name resolves to are checked at connect
 * time (so a rebinding resolver cannot slip past a check made earlier), and the body is read up to the
 * upstream's size cap. A refusal is a RefusedRequest, never retried. And one POST to a URL someone
 * configured (a webhook receiver, the time-stamping authority): outboundPost.
 */
import { type Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { type Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { sourceErrors, sourceRequests } from '../metrics.ts';
import { DefiniteError } from './httpErrors.ts';
import { isPrivateAddress } from './privateAddress.ts';
import type { Lookup, Upstream } from './upstream.ts';

/** Redirects followed at most per request (the platform needs one or two). */
const MAX_REDIRECTS = 5;

/** A request the outbound rules did not let out, or an answer they did not let in: definite, never retried. */
export class RefusedRequest extends DefiniteError {
  constructor(
    readonly origin: string,
    readonly reason: string,
  ) {
    super(`refused a request to ${origin}: ${reason}`, 0);
    this.name = 'RefusedRequest';
  }
}

/** An origin outside the upstream's, or why its addresses are refused; undefined when the request may go. */
function refusalOf(upstream: Upstream, url: URL): string | undefined {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `${url.protocol} is not http or https`;
  if (!upstream.origins.has(url.origin))
    return `not an origin of the configured ${upstream.kind} upstream (${[...upstream.origins.keys()].join(', ')})`;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) && !upstream.origins.get(url.origin)!.anyAddress && isPrivateAddress(host)) return `${host} is not a public address`;
  return undefined;
}

export class PrivateAddressError extends Error {}

/** dns.lookup that fails on a private address, for origins that must be public (webhook receivers too). */
function publicOnlyLookup(lookup: Lookup): LookupFunction {
  return (hostname, options, callback) =>
    lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const refused = addresses.find((entry) => isPrivateAddress(entry.address));
      if (refused) return callback(new PrivateAddressError(`${hostname} resolves to ${refused.address}, not a public address`), '', 0);
      // net.connect asks for every address when it tries them in turn (autoSelectFamily).
      if (options.all) return (callback as unknown as (error: null, all: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
}

function send(upstream: Upstream, url: URL, headers: Record<string, string>, signal: AbortSignal): Promise<IncomingMessage> {
  const { anyAddress } = upstream.origins.get(url.origin)!;
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const outgoing = request(
      url,
      {
        headers: { 'Accept-Encoding': 'gzip, deflate, br', ...headers },
        signal,
        ...(anyAddress ? {} : { lookup: publicOnlyLookup(upstream.lookup) }),
      },
      resolve,
    );
    outgoing.on('error', (error) => reject(error instanceof PrivateAddressError ? new RefusedRequest(url.origin, error.message) : error));
    outgoing.end();
  });
}

/** The body, decompressed, up to `maxBytes`; a larger one is refused (and its connection dropped). */
async function readBody(response: IncomingMessage, origin: string, maxBytes: number): Promise<Buffer> {
  const declared = Number(response.headers['content-length']);
  const tooLarge = () => new RefusedRequest(origin, `the answer is larger than ${maxBytes} bytes`);
  if (!response.headers['content-encoding'] && declared > maxBytes) {
    response.destroy();
    throw tooLarge();
  }
  const encoding = String(response.headers['content-encoding'] ?? '').toLowerCase();
  const decoded =
    encoding === 'gzip'
      ? response.pipe(createGunzip())
      : encoding === 'deflate'
        ? response.pipe(createInflate())
        : encoding === 'br'
          ? response.pipe(createBrotliDecompress())
          : response;
  // Errors of the compressed stream surface on the decoder's iteration.
  if (decoded !== response) response.on('error', (error) => decoded.destroy(error));
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of decoded as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      response.destroy();
      throw tooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

const REDIRECT = new Set([301, 302, 303, 307, 308]);

interface OutboundAnswer {
  status: number;
  body: Buffer;
  date?: string;
  contentType?: string;
}

/** GET `url` from `upstream`, redirects followed within its origins: the final status, body, Date and Content-Type headers; counted by source and status (core/metrics.ts). */
export async function outboundGet(
  upstream: Upstream,
  url: string,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<OutboundAnswer> {
  let status = 'none';
  try {
    const answer = await followRedirects(upstream, url, headers, signal);
    status = String(answer.status);
    return answer;
  } finally {
    const labels = { source: upstream.kind, status };
    sourceRequests.inc(labels);
    if (status === 'none' || Number(status) >= 400) sourceErrors.inc(labels);
  }
}

async function followRedirects(
  upstream: Upstream,
  url: string,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<OutboundAnswer> {
  let target = new URL(url);
  for (let hop = 0; ; hop++) {
    const refusal = refusalOf(upstream, target);
    if (refusal) throw new RefusedRequest(target.origin, refusal);
    const response = await send(upstream, target, headers, signal);
    const location = response.headers.location;
    if (REDIRECT.has(response.statusCode ?? 0) && location) {
      response.resume();
      if (hop === MAX_REDIRECTS) throw new RefusedRequest(target.origin, `more than ${MAX_REDIRECTS} redirects`);
      target = new URL(location, target);
      continue;
    }
    return {
      status: response.statusCode ?? 0,
      body: await readBody(response, target.origin, upstream.maxBytes),
      date: response.headers.date,
      contentType: response.headers['content-type'],
    };
  }
}

export interface PostOptions {
  headers: Record<string, string>;
  body: Uint8Array | string;
  /** Ends the exchange, the answer's body included. */
  signal: AbortSignal;
  /** The most of the answer read. */
  maxBytes: number;
  /**
   * Refuse private addresses (an address in the URL before sending, the addresses its name resolves to
   * at connect time) with a PrivateAddressError, resolving names with this; absent, any address may be
   * asked (the operator's own URL).
   */
  publicOnly?: Lookup;
  /** Keep-alive connections to reuse: a kept one the receiver closed before answering is tried once more on a fresh one. */
  agents?: { http: HttpAgent; https: HttpsAgent };
}

export interface PostAnswer {
  status: number;
  /** A redirect's target: redirects are never followed (so never to another host); the caller says what a 3xx means. */
  location: string | undefined;
  /** The answer's body (decompressed); undefined when it was larger than maxBytes (dropped with its connection) or cut off. */
  body: Buffer | undefined;
}

/** POSTs to `url` (http or https) once: a timeout over the whole exchange, the answer read up to a cap, no redirect followed. */
export async function outboundPost(url: URL, options: PostOptions): Promise<PostAnswer> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`${url.protocol} is not http or https`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (options.publicOnly && isIP(host) && isPrivateAddress(host)) throw new PrivateAddressError(`${host} is not a public address`);
  const response = await postOnce(url, options).catch((error: { staleConnection?: boolean }) => {
    if (error.staleConnection) return postOnce(url, options);
    throw error;
  });
  const body = await readBody(response, url.origin, options.maxBytes).catch(() => undefined);
  return { status: response.statusCode ?? 0, location: response.headers.location, body };
}

function postOnce(url: URL, { headers, body, signal, publicOnly, agents }: PostOptions): Promise<IncomingMessage> {
  const https = url.protocol === 'https:';
  return new Promise((resolve, reject) => {
    const outgoing = (https ? httpsRequest : httpRequest)(
      url,
      {
        method: 'POST',
        headers: { 'Content-Length': String(typeof body === 'string' ? Buffer.byteLength(body) : body.length), ...headers },
        signal,
        ...(agents ? { agent: https ? agents.https : agents.http } : {}),
        ...(publicOnly ? { lookup: publicOnlyLookup(publicOnly) } : {}),
      },
      resolve,
    );
    outgoing.on('error', (error: NodeJS.ErrnoException) =>
      reject(Object.assign(error, { staleConnection: outgoing.reusedSocket && error.code === 'ECONNRESET' })),
    );
    outgoing.end(body);
  });
}

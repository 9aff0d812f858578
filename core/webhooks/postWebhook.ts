/**
 * One delivery attempt: a POST to a receiver through the outbound guard's rules
 * (core/sources/outboundRequest.ts): public addresses only unless WEBHOOK_ALLOW_PRIVATE (checked at
 * connect time, so a name that resolves elsewhere later is refused then), redirects never followed
 * (a 3xx is a failure), a timeout over the whole exchange, and the answer read only up to a cap.
 */
import { lookup as dnsLookup } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { PrivateAddressError, publicOnlyLookup, readBody } from '../sources/outboundRequest.ts';
import { isPrivateAddress } from '../sources/privateAddress.ts';
import type { Lookup } from '../sources/upstream.ts';

/** A receiver has this long to answer, body included; a hanging one holds a worker no longer. */
const WEBHOOK_TIMEOUT_MS = 10_000;
/** The most of an answer read: only its status matters, the start of a failure's body is kept as its error. */
const ANSWER_CAP_BYTES = 64 * 1024;
/** How much of a failed answer's body the delivery log keeps. */
const ERROR_EXCERPT_CHARS = 200;

export interface Receivers {
  /** Keep-alive connections, reused across deliveries to the same receiver. */
  http: HttpAgent;
  https: HttpsAgent;
  allowPrivate: boolean;
  lookup: Lookup;
}

export const webhookReceivers = (allowPrivate: boolean, lookup: Lookup = dnsLookup): Receivers => ({
  http: new HttpAgent({ keepAlive: true, maxSockets: 32 }),
  https: new HttpsAgent({ keepAlive: true, maxSockets: 32 }),
  allowPrivate,
  lookup,
});

export interface AttemptOutcome {
  /** The answer's status; null when none came (refused, timed out, connection failed). */
  status: number | null;
  durationMs: number;
  /** Null when delivered (2xx). */
  error: string | null;
}

function send(receivers: Receivers, url: URL, headers: Record<string, string>, body: string, signal: AbortSignal) {
  const https = url.protocol === 'https:';
  return new Promise<IncomingMessage>((resolve, reject) => {
    const outgoing = (https ? httpsRequest : httpRequest)(
      url,
      {
        method: 'POST',
        agent: https ? receivers.https : receivers.http,
        headers: { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)), ...headers },
        signal,
        ...(receivers.allowPrivate ? {} : { lookup: publicOnlyLookup(receivers.lookup) }),
      },
      resolve,
    );
    outgoing.on('error', (error: NodeJS.ErrnoException) =>
      reject(Object.assign(error, { staleConnection: outgoing.reusedSocket && error.code === 'ECONNRESET' })),
    );
    outgoing.end(body);
  });
}

/**
 * `send`, once more on a fresh connection when a kept-alive one turns out closed by the receiver (idle
 * past its keep-alive time) before any answer: nothing was delivered, so it is no attempt of its own.
 */
const sendFresh = (receivers: Receivers, url: URL, headers: Record<string, string>, body: string, signal: AbortSignal) =>
  send(receivers, url, headers, body, signal).catch((error: { staleConnection?: boolean }) => {
    if (error.staleConnection) return send(receivers, url, headers, body, signal);
    throw error;
  });

/** Why no answer came, as the owner reads it in the delivery log. */
function failureOf(error: unknown, signal: AbortSignal): string {
  if (signal.aborted) return `no answer within ${WEBHOOK_TIMEOUT_MS / 1000} s`;
  if (error instanceof PrivateAddressError) return `refused: ${error.message} (WEBHOOK_ALLOW_PRIVATE is off)`;
  const { code, message } = error as NodeJS.ErrnoException;
  return code ? `${code}: ${message}` : message;
}

/** POSTs `body` to `url`; never throws: every way it can go is an outcome for the delivery log. */
export async function postWebhook(
  receivers: Receivers,
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<AttemptOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const target = new URL(url);
  const host = target.hostname.replace(/^\[|\]$/g, '');
  if (!receivers.allowPrivate && isIP(host) && isPrivateAddress(host))
    return { status: null, durationMs: 0, error: `refused: ${host} is not a public address (WEBHOOK_ALLOW_PRIVATE is off)` };
  const signal = AbortSignal.timeout(WEBHOOK_TIMEOUT_MS);
  try {
    const response = await sendFresh(receivers, target, headers, body, signal);
    const status = response.statusCode ?? 0;
    // An answer larger than the cap is dropped with its connection; its status still counts.
    const answer = await readBody(response, target.origin, ANSWER_CAP_BYTES).catch(() => Buffer.alloc(0));
    if (status >= 200 && status < 300) return { status, durationMs: elapsed(), error: null };
    const excerpt = answer
      .toString('utf8', 0, ERROR_EXCERPT_CHARS * 4)
      .slice(0, ERROR_EXCERPT_CHARS)
      .trim();
    const redirect =
      status >= 300 && status < 400
        ? ` (redirects are not followed${response.headers.location ? `: to ${response.headers.location}` : ''})`
        : '';
    return { status, durationMs: elapsed(), error: `answered ${status}${redirect}${excerpt ? `: ${excerpt}` : ''}` };
  } catch (error) {
    return { status: null, durationMs: elapsed(), error: failureOf(error, signal) };
  }
}

/**
 * One delivery attempt: a POST to a receiver through the outbound guard's rules
 * (outboundPost of core/sources/outboundRequest.ts): public addresses only unless WEBHOOK_ALLOW_PRIVATE (checked at
 * connect time, so a name that resolves elsewhere later is refused then), redirects never followed
 * (a 3xx is a failure), a timeout over the whole exchange, and the answer read only up to a cap.
 */
import { lookup as dnsLookup } from 'node:dns';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { outboundPost, PrivateAddressError } from '../sources/outboundRequest.ts';
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
  const signal = AbortSignal.timeout(WEBHOOK_TIMEOUT_MS);
  try {
    const {
      status,
      location,
      body: answer,
    } = await outboundPost(new URL(url), {
      headers: { 'Content-Type': 'application/json', ...headers },
      body,
      signal,
      maxBytes: ANSWER_CAP_BYTES,
      agents: receivers,
      ...(receivers.allowPrivate ? {} : { publicOnly: receivers.lookup }),
    });
    // An answer larger than the cap is dropped with its connection; its status still counts.
    if (status >= 200 && status < 300) return { status, durationMs: elapsed(), error: null };
    const excerpt = (answer ?? Buffer.alloc(0))
      .toString('utf8', 0, ERROR_EXCERPT_CHARS * 4)
      .slice(0, ERROR_EXCERPT_CHARS)
      .trim();
    const redirect = status >= 300 && status < 400 ? ` (redirects are not followed${location ? `: to ${location}` : ''})` : '';
    return { status, durationMs: elapsed(), error: `answered ${status}${redirect}${excerpt ? `: ${excerpt}` : ''}` };
  } catch (error) {
    return { status: null, durationMs: elapsed(), error: failureOf(error, signal) };
  }
}

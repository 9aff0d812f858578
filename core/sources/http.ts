import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import pRetry, { AbortError } from 'p-retry';
import { DefiniteError, TransientError } from './httpErrors.ts';
import { outboundGet, RefusedRequest } from './outboundRequest.ts';
import type { Upstream } from './upstream.ts';

export interface FetchOptions {
  timeoutMs?: number;
  retries?: number;
  /** First backoff delay; grows by a factor of 2 up to maxDelayMs. */
  minDelayMs?: number;
  maxDelayMs?: number;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Largest body read (decompressed); default the upstream's cap. */
  maxBytes?: number;
  /**
   * Says whether an answer that looks final is really transient: a bot check or "try again later"
   * page served with 200, or an API's quota error served with 403. Defaults to a bot-check test.
   */
  isTransient?: (status: number, body: string) => boolean;
}

const BOT_CHECK =
  /Sign in to confirm you(?:'|’|&#39;)re not a bot|unusual traffic from your computer|Our systems have detected unusual traffic/i;
export const looksLikeBotCheck = (body: string) => BOT_CHECK.test(body);

/** One attempt of a request as fetchText reports it to an observer (see observeAttempts). */
export type AttemptOutcome =
  /** A success or a definite answer: the server is there. */
  | { answered: true }
  /** A transient failure: `attempt` failed attempts of this request so far; `nextTryAt` unless it has no tries left. */
  | { answered: false; error: Error; attempt: number; nextTryAt?: Date };

const attemptObserver = new AsyncLocalStorage<(outcome: AttemptOutcome) => void>();

/**
 * Runs `work` with `observe` told of every attempt of every request made inside it, however deep in
 * a source: how a crawl step hears that a source is retrying (or answering again) without every
 * source passing a callback down through each of its calls.
 */
export function observeAttempts<T>(observe: (outcome: AttemptOutcome) => void, work: () => Promise<T>): Promise<T> {
  return attemptObserver.run(observe, work);
}

/** An answer a source gave, as it came (the body decoded from any transfer coding): what evidence keeps. */
export interface RawAnswer {
  url: string;
  status: number;
  contentType: string | null;
  body: Buffer;
  answeredAt: Date;
}

const answerRecorder = new AsyncLocalStorage<(answer: RawAnswer) => void>();

/**
 * Runs `work` with `record` given every answer (a success or a definite refusal) of every request
 * made inside it: how a probe keeps what the platform said without each source handing it back.
 */
export function recordAnswers<T>(record: (answer: RawAnswer) => void, work: () => Promise<T>): Promise<T> {
  return answerRecorder.run(record, work);
}

/** p-retry's randomised exponential backoff (factor 2), computed here so the next try's time can be told before waiting for it. */
const backoffDelay = (attempt: number, minDelayMs: number, maxDelayMs: number) =>
  Math.min(maxDelayMs, Math.round((Math.random() + 1) * minDelayMs * 2 ** (attempt - 1)));

/**
 * GET from an upstream (outboundRequest.ts: its origins only, redirects checked, addresses checked,
 * the size capped) with a timeout per attempt and exponential backoff between attempts (p-retry).
 * Transient failures are retried; definite ones, refusals included, are thrown at once. Returns
 * the response body as `read` makes it of the bytes.
 */
async function fetchBody<B>(
  upstream: Upstream,
  url: string,
  options: FetchOptions,
  read: (bytes: Buffer) => B,
  isTransient: (status: number, body: B) => boolean,
): Promise<{ status: number; body: B; answeredAt?: Date }> {
  const { timeoutMs = 15_000, retries = 3, minDelayMs = 500, maxDelayMs = 8_000 } = options;
  const limited = options.maxBytes === undefined ? upstream : { ...upstream, maxBytes: options.maxBytes };
  const observe = attemptObserver.getStore();
  const record = answerRecorder.getStore();
  return pRetry(
    async () => {
      const signal = options.signal ? AbortSignal.any([options.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
      let response: { status: number; body: Buffer; date?: string; contentType?: string };
      try {
        // The body is read inside: one that stalls after the headers is a timeout like any other.
        response = await outboundGet(
          limited,
          url,
          { 'User-Agent': 'afterimage (+https://github.com/afterimage)', ...options.headers },
          signal,
        );
      } catch (error) {
        if (error instanceof RefusedRequest) throw new AbortError(error);
        if (options.signal?.aborted) throw new AbortError(options.signal.reason ?? new Error('aborted'));
        const reason = signal.aborted ? `no answer within ${timeoutMs} ms` : (error as Error).message;
        throw new TransientError(`${new URL(url).host}: ${reason}`);
      }
      const { status } = response;
      if (status === 429 || status >= 500) {
        throw new TransientError(`${new URL(url).host} answered ${status}`, status);
      }
      const body = read(response.body);
      if (isTransient(status, body)) {
        throw new TransientError(
          `${new URL(url).host} answered ${status} with a transient refusal (bot check, quota or "try again later")`,
          status,
        );
      }
      observe?.({ answered: true });
      record?.({
        url,
        status,
        contentType: response.contentType ?? null,
        body: response.body,
        answeredAt: answeredAt(response.date) ?? new Date(),
      });
      if (status >= 400) {
        throw new AbortError(
          new DefiniteError(`${new URL(url).host} answered ${status}`, status, response.body.subarray(0, 4096).toString('utf8')),
        );
      }
      return { status, body, answeredAt: answeredAt(response.date) };
    },
    {
      retries,
      // The backoff is waited for in onFailedAttempt, where the next try's time is known.
      minTimeout: 0,
      signal: options.signal,
      async onFailedAttempt({ error, attemptNumber, retriesLeft }) {
        if (retriesLeft === 0) return observe?.({ answered: false, error, attempt: attemptNumber });
        const delayMs = backoffDelay(attemptNumber, minDelayMs, maxDelayMs);
        observe?.({ answered: false, error, attempt: attemptNumber, nextTryAt: new Date(Date.now() + delayMs) });
        // Aborted while waiting: p-retry rejects with what this throws, the signal's reason as before.
        await sleep(delayMs, undefined, options.signal ? { signal: options.signal } : {}).catch(() => {
          throw options.signal?.reason ?? new Error('aborted');
        });
      },
    },
  );
}

/**
 * When the server says it answered (its Date header): a cache's copy keeps the time its origin
 * made it. Never later than now; undefined when absent or unreadable.
 */
function answeredAt(date: string | undefined): Date | undefined {
  const at = date ? Date.parse(date) : Number.NaN;
  return Number.isNaN(at) ? undefined : new Date(Math.min(at, Date.now()));
}

/** fetchBody as text; an answer isTransient says is a refusal in disguise (by default a bot check) is retried. */
export const fetchText = (
  upstream: Upstream,
  url: string,
  options: FetchOptions = {},
): Promise<{ status: number; body: string; answeredAt?: Date }> =>
  fetchBody(upstream, url, options, (bytes) => bytes.toString('utf8'), options.isTransient ?? ((_status, body) => looksLikeBotCheck(body)));

/** fetchBody as bytes (an image): only the status tells a transient answer. */
export const fetchBytes = (
  upstream: Upstream,
  url: string,
  options: Omit<FetchOptions, 'isTransient'> = {},
): Promise<{ status: number; body: Buffer }> =>
  fetchBody(
    upstream,
    url,
    options,
    (bytes) => bytes,
    () => false,
  );

function parsesAsJson(body: string): boolean {
  try {
    JSON.parse(body);
    return true;
  } catch {
    return false;
  }
}

/** fetchText for JSON APIs: a success whose body is not JSON (a proxy's error page, a cut body) is retried too. */
export async function fetchJson<T = unknown>(upstream: Upstream, url: string, options: FetchOptions = {}): Promise<T> {
  const isTransient = (status: number, body: string) =>
    (options.isTransient ? options.isTransient(status, body) : looksLikeBotCheck(body)) || (status < 400 && !parsesAsJson(body));
  const { body } = await fetchText(upstream, url, { ...options, isTransient, headers: { Accept: 'application/json', ...options.headers } });
  return JSON.parse(body) as T;
}

import pRetry, { AbortError } from 'p-retry';

/** A failure worth retrying later: rate limits, server errors, timeouts, network faults, bot checks. */
export class TransientError extends Error {
  constructor(message: string, readonly status?: number) {
    super(message);
    this.name = 'TransientError';
  }
}

/** A definite answer that retrying will not change (404, 403 without a bot check, bad request). */
export class DefiniteError extends Error {
  constructor(message: string, readonly status: number, readonly body = '') {
    super(message);
    this.name = 'DefiniteError';
  }
}

export interface FetchOptions {
  timeoutMs?: number;
  retries?: number;
  /** First backoff delay; grows by a factor of 2 up to maxDelayMs. */
  minDelayMs?: number;
  maxDelayMs?: number;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /**
   * Says whether an answer that looks final is really transient: a bot check or "try again later"
   * page served with 200, or an API's quota error served with 403. Defaults to a bot-check test.
   */
  isTransient?: (status: number, body: string) => boolean;
}

const BOT_CHECK = /Sign in to confirm you(?:'|’|&#39;)re not a bot|unusual traffic from your computer|Our systems have detected unusual traffic/i;
export const looksLikeBotCheck = (body: string) => BOT_CHECK.test(body);

/**
 * GET with a timeout per attempt and exponential backoff between attempts (p-retry). Transient
 * failures are retried; definite ones are thrown at once. Returns the response body as text.
 */
export async function fetchText(url: string, options: FetchOptions = {}): Promise<{ status: number; body: string; headers: Headers }> {
  const { timeoutMs = 15_000, retries = 3, minDelayMs = 500, maxDelayMs = 8_000 } = options;
  return pRetry(
    async () => {
      const signal = options.signal ? AbortSignal.any([options.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
      let response: Response;
      let body: string;
      try {
        response = await fetch(url, { headers: { 'User-Agent': 'afterimage (+https://github.com/afterimage)', ...options.headers }, signal });
        // Inside the try: a body that stalls after the headers is a timeout like any other.
        body = await response.text();
      } catch (error) {
        if (options.signal?.aborted) throw new AbortError(options.signal.reason ?? new Error('aborted'));
        const reason = (error as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : (error as Error).message;
        throw new TransientError(`${new URL(url).host}: ${reason}`);
      }
      if (response.status === 429 || response.status >= 500) {
        throw new TransientError(`${new URL(url).host} answered ${response.status}`, response.status);
      }
      if (options.isTransient ? options.isTransient(response.status, body) : looksLikeBotCheck(body)) {
        throw new TransientError(`${new URL(url).host} answered ${response.status} with a transient refusal (bot check, quota or "try again later")`, response.status);
      }
      if (response.status >= 400) throw new AbortError(new DefiniteError(`${new URL(url).host} answered ${response.status}`, response.status, body.slice(0, 4096)));
      return { status: response.status, body, headers: response.headers };
    },
    { retries, minTimeout: minDelayMs, maxTimeout: maxDelayMs, factor: 2, randomize: true, signal: options.signal },
  );
}

function parsesAsJson(body: string): boolean {
  try {
    JSON.parse(body);
    return true;
  } catch {
    return false;
  }
}

/** fetchText for JSON APIs: a success whose body is not JSON (a proxy's error page, a cut body) is retried too. */
export async function fetchJson<T = unknown>(url: string, options: FetchOptions = {}): Promise<T> {
  const isTransient = (status: number, body: string) =>
    (options.isTransient ? options.isTransient(status, body) : looksLikeBotCheck(body)) || (status < 400 && !parsesAsJson(body));
  const { body } = await fetchText(url, { ...options, isTransient, headers: { Accept: 'application/json', ...options.headers } });
  return JSON.parse(body) as T;
}

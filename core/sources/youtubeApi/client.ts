/**
 * Calls to the YouTube Data API v3: the key in the `key` query parameter (never in an error
 * message), quota and rate-limit answers told from refusals, and the quota units spent counted.
 */
import { fetchJson, type FetchOptions } from '../http.ts';
import { DefiniteError, TransientError } from '../httpErrors.ts';
import { RefusedRequest } from '../outboundRequest.ts';
import { upstreamFor } from '../upstream.ts';
import { isTransientApiError, parseApiError } from '../youtubeApiParse.ts';

type Endpoint = 'channels' | 'search' | 'playlistItems' | 'videos';

const QUOTA_COST: Record<Endpoint, number> = { channels: 1, search: 100, playlistItems: 1, videos: 1 };
/** The API's largest page and the most ids one videos.list / channels.list call takes. */
export const PAGE_SIZE = 50;

export interface ApiClient {
  /** One `{endpoint}.list` call; its parameters without a value are left out. */
  call(endpoint: Endpoint, params: Record<string, string | undefined>, signal?: AbortSignal): Promise<unknown>;
  /** Quota units the calls made so far cost (retries not counted), as the API bills them. */
  readonly quotaUnitsUsed: number;
}

function joinSignals(...signals: Array<AbortSignal | undefined>): AbortSignal | undefined {
  const present = signals.filter((signal): signal is AbortSignal => signal !== undefined);
  if (present.length <= 1) return present[0];
  return AbortSignal.any(present);
}

/** Removes the key from any text: as itself, and as the value of a `key=` query parameter. */
const redact = (apiKey: string, text: string) =>
  text
    .split(apiKey)
    .join('***')
    .replace(/([?&]key=)[^&\s"'#]*/gi, '$1***');

/** The error a failed call is reported as: its endpoint, status and the API's own reason, the key redacted. */
function describe(apiKey: string, error: unknown, endpoint: Endpoint, last: { status: number; body: string } | undefined): Error {
  const where = `YouTube Data API ${endpoint}.list`;
  // A refusal names the origin only, never the URL with its key.
  if (error instanceof RefusedRequest) return error;
  const status = error instanceof TransientError || error instanceof DefiniteError ? error.status : undefined;
  const info = last && status === last.status ? parseApiError(last.body) : undefined;
  const explained = info ? `${info.reasons[0] ? `${info.reasons[0]}: ` : ''}${info.message ?? info.status ?? 'no message'}` : undefined;
  if (error instanceof DefiniteError) {
    return new DefiniteError(redact(apiKey, `${where} answered ${error.status}${explained ? ` (${explained})` : ''}`), error.status);
  }
  if (error instanceof TransientError) {
    return new TransientError(redact(apiKey, `${where}: ${explained ?? error.message}`), error.status);
  }
  // Anything else that escaped the retries (a body that stalled past the timeout, a reset while
  // reading it) is a network fault: worth trying again later.
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return new TransientError(redact(apiKey, `${where}: ${message}`));
}

export function createApiClient(apiKey: string, baseUrl: string, fetchOptions: Omit<FetchOptions, 'isTransient'>): ApiClient {
  let quotaUnitsUsed = 0;
  const upstream = upstreamFor('youtube_api', [baseUrl]);

  async function call(endpoint: Endpoint, params: Record<string, string | undefined>, signal?: AbortSignal): Promise<unknown> {
    const url = new URL(`${baseUrl}/${endpoint}`);
    for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
    url.searchParams.set('key', apiKey);
    let last: { status: number; body: string } | undefined;
    const joined = joinSignals(signal, fetchOptions.signal);
    const callOptions: FetchOptions = {
      ...fetchOptions,
      // Keeps the error body (fetchText drops it) so that the API's reason and message can be told.
      isTransient: (status, body) => {
        if (status >= 400) last = { status, body };
        return isTransientApiError(status, body);
      },
    };
    if (joined) callOptions.signal = joined;
    else delete callOptions.signal;
    quotaUnitsUsed += QUOTA_COST[endpoint];
    try {
      return await fetchJson(upstream, url.toString(), callOptions);
    } catch (error) {
      if (joined?.aborted) throw error;
      throw describe(apiKey, error, endpoint, last);
    }
  }

  return {
    call,
    get quotaUnitsUsed() {
      return quotaUnitsUsed;
    },
  };
}

/** How the platform's watch pages (and timedtext) are requested: by the caption fetcher and the status probe alike. */
import type { FetchOptions } from './http.ts';

export function watchPageFetchOptions(fetchOptions?: Omit<FetchOptions, 'signal' | 'isTransient'>): FetchOptions {
  return {
    timeoutMs: 15_000,
    retries: 2,
    ...fetchOptions,
    // Skips the consent interstitial some regions get, and asks for English messages and track names.
    headers: { 'Accept-Language': 'en-US,en;q=0.8', Cookie: 'CONSENT=YES+cb; SOCS=CAI', ...fetchOptions?.headers },
    // A watch page carries i18n strings of every message, bot checks included: judge the player response, not the text.
    isTransient: () => false,
  };
}

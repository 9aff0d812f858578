import { observeAttempts } from '../sources/http.ts';
import { TransientError } from '../sources/httpErrors.ts';

/** A request to a source failed and is tried again (search:progress `retry`). */
export interface SourceRetry {
  /** Failed attempts of that request so far. */
  attempt: number;
  error: string;
  nextTryAt: string;
  /** When the source is given up on if nothing answers before. */
  giveUpAt: string;
}

/**
 * Runs calls to a source (`work`, given the signal that stops them), reports each failed request
 * that will be tried again, and stops them all once the source has answered nothing for `budgetMs`
 * (an answer, even a definite refusal, starts the wait again). A source that is down or timing out
 * holds its caller that long at most, instead of its requests' whole retry schedule; a slow source
 * that keeps answering is never cut off. The stop is a TransientError, so a source that already
 * has partial results (the Wayback walk) hands them back as after any transient failure: `gaveUp`
 * says it was stopped.
 */
export async function watchSource<T>(
  source: string,
  budgetMs: number,
  onRetry: (retry: SourceRetry) => void,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<{ result: T; gaveUp?: Error }> {
  const controller = new AbortController();
  let lastError: string | undefined;
  let giveUpAt = 0;
  let timer: NodeJS.Timeout | undefined;
  const restart = () => {
    clearTimeout(timer);
    giveUpAt = Date.now() + budgetMs;
    timer = setTimeout(() => {
      const why = lastError ? `; last error: ${lastError}` : '';
      controller.abort(new TransientError(`${source} gave no answer for ${budgetMs / 1000} s${why}`));
    }, budgetMs);
  };
  restart();
  try {
    const result = await observeAttempts(
      (outcome) => {
        if (outcome.answered) return restart();
        lastError = outcome.error.message;
        if (outcome.nextTryAt)
          onRetry({
            attempt: outcome.attempt,
            error: lastError,
            nextTryAt: outcome.nextTryAt.toISOString(),
            giveUpAt: new Date(giveUpAt).toISOString(),
          });
      },
      () => work(controller.signal),
    );
    return controller.signal.aborted ? { result, gaveUp: controller.signal.reason as Error } : { result };
  } catch (error) {
    // Whatever a stopped call failed with, the reason is that the source answered nothing.
    throw controller.signal.aborted ? controller.signal.reason : error;
  } finally {
    clearTimeout(timer);
  }
}

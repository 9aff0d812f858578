import { runSavedQueries, type SavedQueryDeps } from '../../core/watchlists/savedQueries.ts';
import { defineTask } from '../defineTask.ts';

/**
 * Re-runs the saved queries and logs their new matches (see runSavedQueries): queued, one job for a
 * burst, when a crawl or an import stored videos. A query whose search failed makes the job fail
 * after the others ran, so graphile-worker's retry runs it again.
 */
export function runSavedQueriesTask(deps: SavedQueryDeps) {
  return defineTask('run_saved_queries', async (_payload, helpers) => {
    const { queries, newMatches, failed } = await runSavedQueries(deps);
    if (newMatches) helpers.logger.info('saved queries found new matches', { queries, newMatches });
    if (failed) throw new Error(`${failed} of ${queries} saved queries failed; they run again with this job's retry`);
  });
}

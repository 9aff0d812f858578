import type { Sql } from '../../core/db/database.ts';
import type { Logger } from '../../core/log.ts';
import type { VideoSource } from '../../core/sources/types.ts';
import { keepSourceAnswers, keepSubtitleAnswers } from '../../core/status/keepObservations.ts';
import { fetchSubtitles } from '../../core/subtitles/fetchSubtitles.ts';
import type { SubtitleSource } from '../../core/subtitles/sources.ts';
import { refreshTranscript } from '../../core/subtitles/transcript.ts';
import { failVideoLookup, lookUpPendingVideo } from '../../core/subtitles/videoLookups.ts';
import { defineTask } from '../defineTask.ts';

export interface FetchSubtitlesDeps {
  sql: Sql;
  log: Logger;
  subtitleSources: SubtitleSource[];
  /** Where a video asked for but not stored is looked up (the crawl's configured sources). */
  videoSources: VideoSource[];
}

/**
 * Fetches one video's subtitles from every subtitle source (job key `subtitles:<videoId>`, so
 * repeated requests join one job); a video not stored but asked for (a pending lookup) is first
 * looked up in the video sources and stored. A source failing transiently makes graphile-worker
 * retry the job with backoff (what was found is kept); the last attempt records the failure on the
 * transcript (or the lookup) and ends the job successfully, so the key is free for the next request.
 */
export function fetchSubtitlesTask(deps: FetchSubtitlesDeps) {
  return defineTask('fetch_subtitles', async ({ videoId }, helpers) => {
    const finalAttempt = helpers.job.attempts >= helpers.job.max_attempts;
    const log = deps.log.child({ task: 'fetch_subtitles', videoId, attempt: helpers.job.attempts });
    try {
      const lookup = await lookUpPendingVideo(deps.sql, deps.videoSources, videoId, {
        log,
        finalAttempt,
        signal: helpers.abortSignal,
        keepAnswers: keepSourceAnswers,
      });
      if (lookup === 'failed') return;
      const report = await fetchSubtitles(deps.sql, deps.subtitleSources, videoId, {
        log,
        finalAttempt,
        signal: helpers.abortSignal,
        keepAnswers: keepSubtitleAnswers,
      });
      if (!report) return; // the video is not (or no longer) stored
      log.debug('subtitles fetched', {
        found: report.found,
        stored: report.stored.length,
        tracks: report.tracks.length,
        transcript: report.transcript.state,
      });
      if (report.retry)
        throw new Error(
          `subtitle sources failed, will retry: ${report.problems
            .filter((problem) => problem.transient)
            .map((problem) => `${problem.source}: ${problem.message}`)
            .join('; ')}`,
        );
    } catch (error) {
      if (!finalAttempt || helpers.abortSignal?.aborted) throw error;
      log.warn('subtitle fetch failed on its last attempt', { err: error });
      const failure = (error as Error).message ?? String(error);
      await deps.sql.begin((tx) => refreshTranscript(tx, videoId, { checked: true, failure }));
      await failVideoLookup(deps.sql, videoId, failure);
    }
  });
}

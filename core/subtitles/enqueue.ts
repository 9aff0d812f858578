/**
 * Queuing subtitle fetches (the fetch_subtitles task). One job per video at a time: the job key
 * `subtitles:<videoId>` with graphile-worker's unsafe_dedupe mode makes a second request join the
 * job that is queued or already running instead of starting another. The task never ends failed
 * (its last attempt records the failure and succeeds), so a dead job never holds the key.
 */
import type { Queryable } from '../db/database.ts';
import { enqueueMany } from '../jobs/enqueue.ts';
import { markTranscriptsPending } from './transcript.ts';
import { requestVideoLookup } from './videoLookups.ts';

const FETCH_SUBTITLES_ATTEMPTS = 3;
/**
 * Fetches a crawl asks for run after every job of higher priority (crawl steps, what callers asked
 * for). Not in a named queue: graphile-worker starts the next job of a queue only at its next poll
 * (2 s), which would make a crawl's thousands of fetches take hours.
 */
export const CRAWL_SUBTITLES_PRIORITY = 10;

const subtitlesJobKey = (videoId: string) => `subtitles:${videoId}`;

export interface EnqueueOptions {
  /** graphile-worker priority: lower runs first (default 0). */
  priority?: number;
  /** A named queue runs its jobs one at a time (default none: in parallel). */
  queueName?: string;
}

/**
 * Queues a fetch for each video (joining one already queued or running) and marks its transcript
 * pending, inside the caller's transaction. Answers the job ids.
 */
export async function enqueueSubtitleFetch(tx: Queryable, videoIds: readonly string[], options: EnqueueOptions = {}): Promise<string[]> {
  const ids = [...new Set(videoIds)];
  if (ids.length === 0) return [];
  const jobIds = await queueFetchJobs(tx, ids, options);
  await markTranscriptsPending(tx, ids);
  return jobIds;
}

/**
 * Queues the fetch of a video that is not stored: its job looks the video up first (see
 * lookUpPendingVideo). Answers whether a new lookup started; false when the caller joins one that
 * is pending (the job is queued again all the same: it joins the one there is).
 */
export async function enqueueVideoLookup(tx: Queryable, videoId: string): Promise<boolean> {
  const started = await requestVideoLookup(tx, videoId);
  await queueFetchJobs(tx, [videoId], {});
  return started;
}

function queueFetchJobs(tx: Queryable, videoIds: string[], options: EnqueueOptions): Promise<string[]> {
  return enqueueMany(
    tx,
    'fetch_subtitles',
    videoIds.map((videoId) => ({ videoId })),
    {
      queueName: options.queueName,
      maxAttempts: FETCH_SUBTITLES_ATTEMPTS,
      jobKey: (payload) => subtitlesJobKey(payload.videoId),
      priority: options.priority ?? 0,
      jobKeyMode: 'unsafe_dedupe',
    },
  );
}

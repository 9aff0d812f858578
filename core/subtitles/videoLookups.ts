/**
 * Lookups of videos not stored yet, asked for by an on-demand subtitle fetch (table video_lookups,
 * sql/018_video_lookups.sql): pending while the fetch_subtitles job asks the sources, failed (and
 * why) when none knew the video; gone once it is stored, when its transcript takes over.
 */
import type { Queryable, Sql } from '../db/database.ts';
import type { Logger } from '../log.ts';
import type { SourceName, VideoRecord, VideoSource } from '../sources/types.ts';
import { upsertChannel, upsertVideos } from '../videos/upsertVideos.ts';
import { lookupFailure, lookUpVideo } from './lookUpVideo.ts';
import { markTranscriptsPending } from './transcript.ts';

export interface VideoLookup {
  state: 'pending' | 'failed';
  error: string | null;
  requestedAt: Date;
  checkedAt: Date | null;
}

export async function readVideoLookup(sql: Queryable, videoId: string): Promise<VideoLookup | undefined> {
  const [row] = await sql<VideoLookup[]>`
    select state, error, requested_at as "requestedAt", checked_at as "checkedAt" from video_lookups where video_id = ${videoId}`;
  return row;
}

/** Records a request to look the video up: true when a lookup starts, false when one is already pending. */
export async function requestVideoLookup(tx: Queryable, videoId: string): Promise<boolean> {
  const started = await tx`
    insert into video_lookups as l (video_id, state) values (${videoId}, 'pending')
    on conflict (video_id) do update set state = 'pending', error = null, requested_at = now(), checked_at = null
    where l.state <> 'pending'
    returning video_id`;
  return started.length > 0;
}

/** Ends a pending lookup as failed (nothing when none is pending). */
export async function failVideoLookup(sql: Queryable, videoId: string, error: string): Promise<void> {
  await sql`update video_lookups set state = 'failed', error = ${error}, checked_at = now() where video_id = ${videoId} and state = 'pending'`;
}

/**
 * Keeps the answers behind what the stored record decided, in the transaction that stored it
 * (keepSourceAnswers of core/status/keepObservations.ts, which sits above core/subtitles: the task passes it).
 */
type KeepSourceAnswers = (
  tx: Queryable,
  source: SourceName,
  records: readonly VideoRecord[],
  stored: Awaited<ReturnType<typeof upsertVideos>>,
) => Promise<void>;

export interface LookupOptions {
  log: Logger;
  keepAnswers: KeepSourceAnswers;
  /** The job's last attempt: sources failing transiently end the lookup failed instead of being asked again. */
  finalAttempt: boolean;
  signal?: AbortSignal;
}

/**
 * The fetch job's first step for a video with a pending lookup: asks the sources and stores the
 * video with its channel when one knows it, with the answer it was read from (its transcript pending: the fetch goes on), else
 * records why not. Throws, for the job to be retried, when a source failed transiently and this is
 * not the last attempt. Answers whether the video is stored now; 'not_asked' without a pending lookup.
 */
export async function lookUpPendingVideo(
  sql: Sql,
  sources: readonly VideoSource[],
  videoId: string,
  options: LookupOptions,
): Promise<'stored' | 'failed' | 'not_asked'> {
  const lookup = await readVideoLookup(sql, videoId);
  if (lookup?.state !== 'pending') return 'not_asked';
  const result = await lookUpVideo(sources, videoId, options.signal);
  if (!result.found) {
    const failure = lookupFailure(result);
    if (!options.finalAttempt && result.problems.some((problem) => problem.transient))
      throw new Error(`video lookup will be retried: ${failure}`);
    options.log.info('no source knows the video', { asked: result.asked, problems: result.problems.length });
    await failVideoLookup(sql, videoId, failure);
    return 'failed';
  }
  const { source, sighting } = result.found;
  await sql.begin(async (tx) => {
    await upsertChannel(tx, sighting.channel, options.log);
    const stored = await upsertVideos(tx, source, [sighting.video], options.log);
    await options.keepAnswers(tx, source, [sighting.video], stored);
    await tx`delete from video_lookups where video_id = ${videoId}`;
    await markTranscriptsPending(tx, [videoId]);
  });
  options.log.info('video found and stored', { source, channelId: sighting.channel.channelId });
  return 'stored';
}

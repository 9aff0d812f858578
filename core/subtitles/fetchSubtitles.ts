/**
 * One fetch of a video's subtitles (the body of the fetch_subtitles task): ask every source, store
 * every track found (a new version only when its content changed), choose the transcript again,
 * and tell running crawls of the video's channel with search:caption_info, all in one transaction.
 */
import { archiveFileCheck } from '../archives/archiveRoots.ts';
import type { Queryable, Sql } from '../db/database.ts';
import { AppError } from '../errors.ts';
import { appendEvents, crawlStream } from '../events/events.ts';
import { captionInfoOf } from '../events/searchEvents.ts';
import type { Logger } from '../log.ts';
import { DefiniteError } from '../sources/httpErrors.ts';
import type { KeptAnswer } from '../sources/keptAnswer.ts';
import type { WaybackCapture } from '../sources/types.ts';
import { localPath } from '../videos/localPath.ts';
import { VIDEO_JSON, type VideoObject } from '../videos/videoObject.ts';
import type { SubtitleSource, SubtitleVideo } from './sources.ts';
import { insertTrack, prepareTrack, type PreparedTrack } from './store.ts';
import { refreshTranscript, type TranscriptInfo } from './transcript.ts';
import { latestTracks, type TrackInfo } from './tracks.ts';

export interface SourceProblem {
  source: string;
  message: string;
  /** Worth trying again later (network, rate limit, bot check); otherwise a definite answer or unreadable content. */
  transient: boolean;
}

export interface FetchReport {
  videoId: string;
  /** Tracks the sources gave that hold cues. */
  found: number;
  /** New versions stored by this fetch. */
  stored: TrackInfo[];
  /** The newest version of every track of the video after the fetch. */
  tracks: TrackInfo[];
  transcript: TranscriptInfo;
  problems: SourceProblem[];
  /** A source failed transiently and this was not the last attempt: the job should be retried. */
  retry: boolean;
}

/** Keeps the answers new versions were read from as their evidence (core/status/keepObservations.ts), in the transaction that stored them. */
type KeepTrackAnswers = (tx: Queryable, kept: KeptTrackAnswer[]) => Promise<void>;

/** A new version and the answer it was read from; a Wayback capture's with its timestamp and CDX digest. */
interface KeptTrackAnswer {
  track: TrackInfo;
  answer: KeptAnswer;
  wayback?: WaybackCapture['wayback'];
}

export interface FetchSubtitlesOptions {
  log: Logger;
  keepAnswers?: KeepTrackAnswers;
  /** The job's last attempt: transient failures are recorded (transcript failed) instead of retried. */
  finalAttempt: boolean;
  signal?: AbortSignal;
}

/** The video and its archive files, without those under a removed archive root (core/archives/). */
async function loadVideo(sql: Sql, videoId: string): Promise<SubtitleVideo | undefined> {
  const [row] = await sql<SubtitleVideo[]>`
    select v.video_id as "videoId", v.channel_id as "channelId", v.language, v.video_file_url as "videoFileUrl",
      array(select path from archive_roots order by path) as "archiveRoots",
      coalesce((select array_agg(s.evidence_url) from video_sources s where s.video_id = v.video_id and s.source = 'archive' and s.evidence_url is not null), '{}') as "archiveEvidence"
    from videos v where v.video_id = ${videoId}`;
  if (!row) return undefined;
  const readable = await archiveFileCheck(sql);
  const inUse = (url: string) => readable(localPath(url) ?? '');
  return {
    ...row,
    archiveEvidence: row.archiveEvidence.filter(inUse),
    videoFileUrl: row.videoFileUrl && inUse(row.videoFileUrl) ? row.videoFileUrl : null,
  };
}

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Fetches, stores and announces one video's subtitles. Undefined when the video is unknown. */
export async function fetchSubtitles(
  sql: Sql,
  sources: readonly SubtitleSource[],
  videoId: string,
  options: FetchSubtitlesOptions,
): Promise<FetchReport | undefined> {
  const video = await loadVideo(sql, videoId);
  if (!video) return undefined;
  const problems: SourceProblem[] = [];
  const prepared: Array<{ ready: PreparedTrack; kept: Omit<KeptTrackAnswer, 'track'> | undefined }> = [];
  for (const source of sources) {
    options.signal?.throwIfAborted();
    let fetched: Awaited<ReturnType<typeof source.fetchTracks>>;
    try {
      fetched = await source.fetchTracks(video, options.signal);
    } catch (error) {
      if (options.signal?.aborted) throw error;
      const transient = !(error instanceof DefiniteError);
      problems.push({ source: source.name, message: describe(error), transient });
      options.log.warn('subtitle source failed', { videoId, source: source.name, transient, err: error });
      continue;
    }
    for (const problem of fetched.problems) {
      problems.push({ source: source.name, ...problem });
      options.log.warn('subtitle track could not be read; the other tracks are kept', { videoId, source: source.name, ...problem });
    }
    for (const track of fetched.tracks) {
      try {
        const ready = prepareTrack({ videoId, ...track });
        if (ready)
          prepared.push({ ready, kept: track.answer && { answer: track.answer, ...(track.wayback ? { wayback: track.wayback } : {}) } });
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        problems.push({
          source: source.name,
          message: `${track.language} (${track.kind}) from ${track.originUrl}: ${error.message}`,
          transient: false,
        });
      }
    }
  }
  const transientFailure = problems.filter((problem) => problem.transient);
  const retry = transientFailure.length > 0 && !options.finalAttempt;
  const failure = transientFailure.length
    ? transientFailure.map((problem) => `${problem.source}: ${problem.message}`).join('; ')
    : undefined;

  return sql.begin(async (tx) => {
    const stored: TrackInfo[] = [];
    const answered: KeptTrackAnswer[] = [];
    for (const { ready, kept } of prepared) {
      const outcome = await insertTrack(tx, ready);
      if (!outcome.created) continue;
      stored.push(outcome.track);
      if (kept) answered.push({ track: outcome.track, ...kept });
    }
    await options.keepAnswers?.(tx, answered);
    // Finished unless a source is to be asked again; a failure counts only when nothing was found.
    const { transcript } = await refreshTranscript(
      tx,
      videoId,
      retry ? { checked: false } : { checked: true, ...(failure ? { failure } : {}) },
    );
    const tracks = await latestTracks(tx, [videoId]);
    if (tracks.length > 0) {
      const crawls = await tx<{ id: string }[]>`select id::text from crawls where channel_id = ${video.channelId} and status = 'running'`;
      if (crawls.length) {
        const [row] = await tx<{ video: VideoObject }[]>`
          select ${tx.unsafe(VIDEO_JSON)} as video from videos v join channels c on c.channel_id = v.channel_id where v.video_id = ${videoId}`;
        for (const crawl of crawls) await appendEvents(tx, crawlStream(crawl.id), [captionInfoOf([row!.video])]);
      }
    }
    return { videoId, found: prepared.length, stored, tracks, transcript, problems, retry };
  });
}

import type { Logger } from '../log.ts';
import { DefiniteError } from '../sources/http.ts';
import type { ChannelRecord, VideoRecord, VideoSource } from '../sources/types.ts';
import type { Crawl } from './loadCrawl.ts';

/** A step stores at least this many videos before handing over to the next step's job... */
const BATCH_VIDEOS = 500;
/** ...unless this much time has passed, so no job runs long. */
const JOB_BUDGET_MS = 3_000;

export interface Batch {
  /** What the source says of the channel now (first page of a source only). */
  channel?: ChannelRecord;
  videos: VideoRecord[];
  /** Where the source goes on; absent when it ended. */
  next?: string;
  /** How far through the source, 0..1, when it knows. */
  progress?: number;
  /** Why the source failed (definitely, or on the step's last attempt): the crawl goes on without it. */
  failure?: string;
}

/**
 * Reads one batch of a source's videos for a crawl step: source pages until the batch is full, the
 * source ends, or the time budget is spent (one page of archive look-ups). A transient failure
 * throws, so graphile-worker retries the step with backoff, except on the last attempt.
 */
export async function fetchBatch(crawl: Crawl, source: VideoSource, from: { cursor?: string; lastAttempt: boolean }, log: Logger): Promise<Batch> {
  const stored: ChannelRecord = { channelId: crawl.channelId, title: crawl.channelTitle || undefined };
  let channel: ChannelRecord | undefined;
  try {
    if (from.cursor === undefined) channel = await source.resolveChannel({ kind: 'channelId', channelId: crawl.channelId });
    const cursor = from.cursor ?? (crawl.kind === 'archive_page' ? (crawl.archiveCursor ?? undefined) : undefined);
    return { ...(channel ? { channel } : {}), ...(await gather(source, channel ?? stored, cursor)) };
  } catch (error) {
    if (!from.lastAttempt && !(error instanceof DefiniteError)) throw error;
    log.warn('source failed during crawl; continuing with the next source', { crawlId: crawl.id, source: source.name, err: error });
    return { ...(channel ? { channel } : {}), videos: [], failure: (error as Error).message };
  }
}

/** A full crawl reads one page of archive look-ups; "continue" pages through the rest. */
export const readsOnePage = (source: VideoSource) => source.name === 'wayback';

async function gather(source: VideoSource, channel: ChannelRecord, cursor: string | undefined) {
  const started = Date.now();
  const videos: VideoRecord[] = [];
  let next = cursor;
  let progress: number | undefined;
  do {
    const page = await source.listVideos(channel, next);
    videos.push(...page.videos);
    next = page.next;
    progress = page.progress;
  } while (next && !readsOnePage(source) && videos.length < BATCH_VIDEOS && Date.now() - started < JOB_BUDGET_MS);
  return { videos, ...(next ? { next } : {}), ...(progress === undefined ? {} : { progress }) };
}

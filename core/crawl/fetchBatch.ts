import type { Logger } from '../log.ts';
import { DefiniteError } from '../sources/httpErrors.ts';
import type { ChannelRecord, VideoRecord, VideoSource } from '../sources/types.ts';
import type { Crawl } from './loadCrawl.ts';
import { watchSource, type SourceRetry } from './watchSource.ts';

/** A step stores at least this many videos before handing over to the next step's job... */
const BATCH_VIDEOS = 500;
/** ...unless this much time has passed, so no job runs long. */
const JOB_BUDGET_MS = 3_000;
/** The archive cursor of a look-up that failed before its first page: "continue" starts it again. */
const ARCHIVE_START = '';

export interface Batch {
  /** What the source says of the channel now (first page of a source only). */
  channel?: ChannelRecord;
  videos: VideoRecord[];
  /** Where the source goes on; absent when it ended. After a failure: where the archive's look-ups can be asked again. */
  next?: string;
  /** How far through the source, 0..1, when it knows. */
  progress?: number;
  /** Why the source failed, or that it answered nothing for the wait budget: the crawl goes on without it. */
  failure?: string;
}

/** How long a step waits on a source that answers nothing, and who hears of its retries. */
interface SourceWait {
  budgetMs: number;
  onRetry: (retry: SourceRetry) => void;
}

/**
 * Reads one batch of a source's videos for a crawl step: source pages until the batch is full, the
 * source ends, or the time budget is spent (one page of archive look-ups). A source that fails, or
 * answers nothing for the wait budget, ends its part of the crawl with `failure` and what it
 * found until then; nothing is thrown, so no job retry holds a worker on a source that is down.
 */
export async function fetchBatch(
  crawl: Crawl,
  source: VideoSource,
  from: { cursor?: string },
  wait: SourceWait,
  log: Logger,
): Promise<Batch> {
  const stored: ChannelRecord = { channelId: crawl.channelId, title: crawl.channelTitle || undefined };
  // An archive-page crawl starts where the last one stopped ('' for ARCHIVE_START: the beginning).
  const batch: Batch = {
    videos: [],
    ...pick(from.cursor ?? (crawl.kind === 'archive_page' ? crawl.archiveCursor || undefined : undefined)),
  };
  try {
    const { gaveUp } = await watchSource(source.name, wait.budgetMs, wait.onRetry, async (signal) => {
      if (from.cursor === undefined) {
        const channel = await source.resolveChannel({ kind: 'channelId', channelId: crawl.channelId }, signal);
        if (channel) batch.channel = channel;
      }
      await gather(source, batch.channel ?? stored, batch, signal);
    });
    if (gaveUp) throw gaveUp;
    return batch;
  } catch (error) {
    log.warn('source failed during crawl; continuing with the next source', { crawlId: crawl.id, source: source.name, err: error });
    const { next, ...found } = batch;
    // The archive's look-ups are kept where they stopped (at their start if they never got going), so
    // a later continue asks again; a definite refusal is final.
    const retryAt = readsOnePage(source) && !(error instanceof DefiniteError) ? (next ?? ARCHIVE_START) : undefined;
    return { ...found, ...pick(retryAt), failure: (error as Error).message };
  }
}

const pick = (next: string | undefined) => (next === undefined ? {} : { next });

/** A full crawl reads one page of archive look-ups; "continue" pages through the rest. */
export const readsOnePage = (source: VideoSource) => source.name === 'wayback';

/** Pages of the source into `batch`, so a failure part-way keeps what came before it and where it stopped. */
async function gather(source: VideoSource, channel: ChannelRecord, batch: Batch, signal: AbortSignal): Promise<void> {
  const started = Date.now();
  do {
    const page = await source.listVideos(channel, batch.next, signal);
    batch.videos.push(...page.videos);
    if (page.next === undefined) delete batch.next;
    else batch.next = page.next;
    if (page.progress !== undefined) batch.progress = page.progress;
  } while (batch.next !== undefined && !readsOnePage(source) && batch.videos.length < BATCH_VIDEOS && Date.now() - started < JOB_BUDGET_MS);
}

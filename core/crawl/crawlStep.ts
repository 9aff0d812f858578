/**
 * One step of a crawl, as the crawl_channel job runs it: load the crawl, fetch a batch of one
 * source's videos, store it with its events, and queue the next step or end the crawl (search:complete
 * with its totals, or search:error), in one transaction.
 */
import type { Queryable, Sql } from '../db/database.ts';
import { appendEvents, crawlStream } from '../events/events.ts';
import { announcesCaptions, captionInfoOf, searchEvents, type CrawlTotals, type SearchEvent } from '../events/searchEvents.ts';
import { enqueue } from '../jobs/enqueue.ts';
import type { JobPayload } from '../jobs/registry.ts';
import type { Logger } from '../log.ts';
import { videosCrawled } from '../metrics.ts';
import { DefiniteError } from '../sources/httpErrors.ts';
import { keepSourceAnswers } from '../status/keepObservations.ts';
import type { ChannelRecord, VideoRecord, VideoSource } from '../sources/types.ts';
import { CRAWL_SUBTITLES_PRIORITY, enqueueSubtitleFetch } from '../subtitles/enqueue.ts';
import { languageTag } from '../text/languageTag.ts';
import { upsertChannel, upsertVideos } from '../videos/upsertVideos.ts';
import { CHANNEL_JSON, type ChannelObject } from '../videos/videoObject.ts';
import { enqueueWaybackThumbnails } from '../videos/waybackThumbnails.ts';
import { retryProgress, type SourceRetry, watchSource } from './watchSource.ts';

export interface CrawlDeps {
  sql: Sql;
  sources: VideoSource[];
  log: Logger;
  /** SOURCE_WAIT_BUDGET_MS: how long a step waits on a source that answers nothing. */
  sourceWaitBudgetMs: number;
}

/** The sources a crawl walks, in order: every configured one for a full crawl, only the archive for a "continue" page. */
const planFor = (kind: Crawl['kind'], sources: VideoSource[]) =>
  kind === 'full' ? sources : sources.filter((source) => source.name === 'wayback');

/**
 * One step of a crawl (a crawl_channel job): a batch of one source's videos, stored with their
 * events and the next step's job in one transaction, so a crash repeats the step and nothing
 * else. A source's failures do not fail the step (see fetchBatch); a step failing on its last
 * attempt (the database, say) ends the crawl with search:error.
 */
export async function crawlStep(deps: CrawlDeps, job: JobPayload<'crawl_channel'>, attempt: { last: boolean }): Promise<void> {
  try {
    await step(deps, job);
  } catch (error) {
    if (attempt.last) await failCrawl(deps.sql, job.crawlId, error);
    throw error;
  }
}

async function step(deps: CrawlDeps, job: JobPayload<'crawl_channel'>): Promise<void> {
  const crawl = await loadCrawl(deps.sql, job.crawlId);
  if (!crawl || crawl.status !== 'running' || !isQueued(crawl, job)) return;
  const plan = planFor(crawl.kind, deps.sources);
  const source = plan[job.step];
  if (!source) {
    await deps.sql.begin((tx) => finishCrawl(tx, crawl));
    return;
  }
  const onRetry = retryProgress(deps.sql, deps.log, crawl.id, source.name);
  const wait = { budgetMs: deps.sourceWaitBudgetMs, onRetry };
  const batch = await fetchBatch(crawl, source, job.cursor === undefined ? {} : { cursor: job.cursor }, wait, deps.log);
  // The retry events go before the batch's, in the stream's order too.
  await onRetry.flushed();
  await deps.sql.begin((tx) => storeBatch(tx, crawl, { plan, index: job.step, cursor: job.cursor }, batch, deps.log));
  videosCrawled.inc({ source: source.name }, batch.videos.length);
}

interface Crawl {
  id: string;
  kind: 'full' | 'archive_page';
  status: string;
  archiveCursor: string | null;
  channelId: string;
  channelTitle: string;
  /** The key of the step queued next (crawlStepKey); null for crawls queued before it was kept. */
  queuedStep: string | null;
}

/** A crawl with its channel's stored title (what the sources are asked with). */
async function loadCrawl(sql: Queryable, crawlId: string): Promise<Crawl | undefined> {
  const [crawl] = await sql<Crawl[]>`
    select cr.id::text, cr.kind, cr.status, cr.archive_cursor as "archiveCursor", cr.channel_id as "channelId", ch.title as "channelTitle",
      cr.queued_step as "queuedStep"
    from crawls cr join channels ch on ch.channel_id = cr.channel_id where cr.id = ${crawlId}`;
  return crawl;
}

/**
 * Whether `step` is the crawl's queued step. A step whose job runs again after its transaction
 * committed (a worker lost before graphile-worker marked the job done) is not: it already ran.
 */
const isQueued = (crawl: Pick<Crawl, 'queuedStep'>, step: { step: number; cursor?: string | undefined }) =>
  crawl.queuedStep === null || crawl.queuedStep === crawlStepKey(step.step, step.cursor);

/** What names a step of a crawl: the `step`th source of its plan, from `cursor` (its start when absent). */
const crawlStepKey = (step: number, cursor?: string) => `${step}:${cursor ?? ''}`.slice(0, 500);

/**
 * Queues a step of a crawl (the crawl_channel task) and records it as the crawl's queued step,
 * the one step storeBatch accepts next.
 */
export async function queueCrawlStep(tx: Queryable, crawlId: string, step: number, cursor?: string): Promise<void> {
  const key = crawlStepKey(step, cursor);
  await tx`update crawls set queued_step = ${key} where id = ${crawlId}`;
  await enqueue(
    tx,
    'crawl_channel',
    { crawlId, step, ...(cursor === undefined ? {} : { cursor }) },
    {
      // A step queued twice (a repeated transaction) runs once.
      jobKey: `crawl:${crawlId}:${key}`,
      maxAttempts: 5,
    },
  );
}

/** A step stores at least this many videos before handing over to the next step's job... */
const BATCH_VIDEOS = 500;
/** ...unless this much time has passed, so no job runs long. */
const JOB_BUDGET_MS = 3_000;
/** The archive cursor of a look-up that failed before its first page: "continue" starts it again. */
const ARCHIVE_START = '';

interface Batch {
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
async function fetchBatch(crawl: Crawl, source: VideoSource, from: { cursor?: string }, wait: SourceWait, log: Logger): Promise<Batch> {
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
const readsOnePage = (source: VideoSource) => source.name === 'wayback';

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

/**
 * Unchanged videos of the batch that announce captions no fetch was ever asked for (stored before
 * their captions could be fetched: an older import, a source that was not configured). A fetch
 * that failed or found nothing is not asked again on every crawl.
 */
async function neverFetched(tx: Queryable, batch: Batch, changed: readonly { videoId: string }[]): Promise<string[]> {
  const changedIds = new Set(changed.map((video) => video.videoId));
  const announcing = batch.videos
    .filter((record) => record.captions?.length && !changedIds.has(record.videoId))
    .map((record) => record.videoId);
  if (announcing.length === 0) return [];
  const rows = await tx<{ videoId: string }[]>`
    select v.video_id as "videoId" from videos v left join transcripts t on t.video_id = v.video_id
    where v.video_id = any(${announcing}) and not v.has_subtitles and coalesce(t.requested_at, t.checked_at) is null`;
  return rows.map((row) => row.videoId);
}

/**
 * Videos of the batch with subtitles stored that announce a caption track neither announced before
 * nor stored: a language added after their subtitles were fetched. Read before the batch is stored,
 * which adds the track to what was announced, so each new track asks for one fetch.
 */
async function newlyAnnouncedTracks(tx: Queryable, batch: Batch): Promise<string[]> {
  // A language no track could be stored under (not a BCP 47 tag as parseTrackName writes it) is never fetched.
  const tracks = batch.videos.flatMap((record) =>
    (record.captions ?? [])
      .filter((track) => languageTag(track.language) === track.language)
      .map((track) => ({ videoId: record.videoId, ...track })),
  );
  if (tracks.length === 0) return [];
  const rows = await tx<{ videoId: string }[]>`
    select distinct v.video_id as "videoId"
    from unnest(${tracks.map((track) => track.videoId)}::text[], ${tracks.map((track) => track.language)}::text[], ${tracks.map((track) => track.kind)}::text[])
      as announced (video_id, language, kind)
    join videos v on v.video_id = announced.video_id
    where v.has_subtitles
      and not v.caption_languages @> jsonb_build_array(jsonb_build_object('language', announced.language, 'kind', announced.kind))
      and not exists (select from subtitle_tracks t where t.video_id = v.video_id and t.language = announced.language and t.kind = announced.kind)`;
  return rows.map((row) => row.videoId);
}

/**
 * Stores a step's batch in the caller's transaction, unless the step ran before: the refreshed channel, the videos and their
 * events (channel_update, progress, video, caption_info), subtitle fetches for captions announced
 * but not stored yet (new tracks of videos with subtitles included), thumbnail fetches for the videos
 * the Wayback found, the crawl's totals, then the
 * next step's job or the crawl's end.
 */
async function storeBatch(
  tx: Queryable,
  crawl: Crawl,
  step: { plan: VideoSource[]; index: number; cursor?: string | undefined },
  batch: Batch,
  log: Logger,
): Promise<void> {
  // Locked first, in startSearch's order (the channel, then its crawl), so a search joining this crawl
  // cannot deadlock with it: of two runs of one step (a repeat after a lost worker), the second finds
  // the next step queued.
  await tx`select from channels where channel_id = ${crawl.channelId} for no key update`;
  const [current] = await tx<{ totals: CrawlTotals; queuedStep: string | null; status: string }[]>`
    select totals, queued_step as "queuedStep", status from crawls where id = ${crawl.id} for update`;
  if (current!.status !== 'running' || !isQueued(current!, { step: step.index, cursor: step.cursor })) {
    log.info('crawl step already stored by an earlier run; nothing written', { crawlId: crawl.id, step: step.index });
    return;
  }
  const source = step.plan[step.index]!;
  const events: SearchEvent[] = [];
  if (batch.channel) {
    await upsertChannel(tx, batch.channel, log);
    const [updated] = await tx<
      { channel: ChannelObject }[]
    >`select ${tx.unsafe(CHANNEL_JSON)} as channel from channels c where c.channel_id = ${crawl.channelId}`;
    events.push(searchEvents.channelUpdate(updated!.channel));
  }
  const withNewTracks = await newlyAnnouncedTracks(tx, batch);
  const stored = await upsertVideos(tx, source.name, batch.videos, log.child({ crawlId: crawl.id }));
  await keepSourceAnswers(tx, source.name, batch.videos, stored);
  const { changed, inserted } = stored;
  // A failed source is done for this crawl: its `next` only says where a later continue may ask again.
  const sourceDone = batch.next === undefined || readsOnePage(source) || batch.failure !== undefined;
  const percent = Math.round(((step.index + (sourceDone ? 1 : (batch.progress ?? 0))) / step.plan.length) * 100);
  const progress = searchEvents.progress({
    stage: source.name,
    percent,
    videosInBatch: batch.videos.length,
    ...(batch.failure ? { warning: batch.failure } : {}),
  });
  // Each step is a milestone of the stream (it commits videos), and the crawl's latest progress.
  events.push(progress);
  for (const video of changed) events.push(searchEvents.video(video));
  const withCaptions = changed.filter(announcesCaptions);
  // Captions announced but not stored yet: fetched in the background, after crawl steps and what callers asked for.
  const toFetch = [
    ...withCaptions.filter((video) => !video.hasSubtitles).map((video) => video.videoId),
    ...(await neverFetched(tx, batch, changed)),
    ...withNewTracks,
  ];
  if (toFetch.length) await enqueueSubtitleFetch(tx, toFetch, { priority: CRAWL_SUBTITLES_PRIORITY });
  if (source.name === 'wayback') {
    await enqueueWaybackThumbnails(
      tx,
      batch.videos.filter((video) => video.archiveUrl).map((video) => video.videoId),
    );
  }
  if (withCaptions.length) events.push(captionInfoOf(withCaptions));
  await appendEvents(tx, crawlStream(crawl.id), events);

  const totals = addBatch(current!.totals, source.name, {
    videos: batch.videos.length,
    inserted,
    changed: changed.length,
    ...(batch.failure ? { failure: batch.failure } : {}),
  });
  await tx`
    update crawls set totals = ${JSON.stringify(totals)}::text::jsonb, progress = ${JSON.stringify(progress.payload)}::text::jsonb
      ${readsOnePage(source) ? tx`, next_archive_cursor = ${batch.next ?? null}` : tx``}
    where id = ${crawl.id}`;

  if (!sourceDone) await queueCrawlStep(tx, crawl.id, step.index, batch.next);
  else if (step.index + 1 < step.plan.length) await queueCrawlStep(tx, crawl.id, step.index + 1);
  else await finishCrawl(tx, crawl);
}

/** How a crawl ends (search:complete with its totals, or search:error), and the totals its steps add up to get there. */

type Failure = { code: string; message: string };

/**
 * Ends a crawl with search:complete, its totals, the sources that failed and whether "continue" has
 * more to load (an archive cursor left), or with search:error when it failed or when every source
 * it asked failed (then nothing could be searched at all).
 */
export async function finishCrawl(tx: Queryable, crawl: { id: string; channelId: string }, failed?: Failure): Promise<void> {
  const [current] = await tx<{ totals: CrawlTotals; morePages: boolean }[]>`
    select totals, next_archive_cursor is not null as "morePages" from crawls where id = ${crawl.id}`;
  const totals = current?.totals ?? {};
  const sources = Object.entries(totals.sources ?? {});
  const failedSources = sources
    .flatMap(([source, counts]) => (counts.error ? [{ source, error: counts.error }] : []))
    .sort((a, b) => a.source.localeCompare(b.source));
  const error =
    failed ??
    (sources.length > 0 && failedSources.length === sources.length
      ? {
          code: 'SERVICE_UNAVAILABLE',
          message: `every source failed: ${failedSources.map((failure) => `${failure.source}: ${failure.error}`).join('; ')}`,
          failedSources,
        }
      : undefined);
  await tx`
    update crawls set status = ${error ? 'error' : 'complete'}, finished_at = now(), error = ${error ? JSON.stringify(error) : null}::text::jsonb
    where id = ${crawl.id}`;
  await appendEvents(tx, crawlStream(crawl.id), [
    error
      ? searchEvents.error(error)
      : searchEvents.complete({ channelId: crawl.channelId, totals, failedSources, morePages: current?.morePages ?? false }),
  ]);
  // The words of what the crawl stored join the did-you-mean vocabulary now, not at the crontab's next
  // run, and the saved queries look for it. One job key each: crawls finishing together join the job
  // still queued (a running one is not joined).
  if (sources.some(([, counts]) => counts.changed > 0)) {
    await enqueue(tx, 'refresh_search_words', {}, { jobKey: 'refresh_search_words' });
    await enqueue(tx, 'run_saved_queries', {}, { jobKey: 'run_saved_queries' });
  }
}

/** A step out of attempts: the crawl ends with search:error instead of staying "running" for ever. */
async function failCrawl(sql: Sql, crawlId: string, error: unknown): Promise<void> {
  await sql.begin(async (tx) => {
    const [crawl] = await tx<{ id: string; channelId: string; status: string }[]>`
      select id::text, channel_id as "channelId", status from crawls where id = ${crawlId} for update`;
    if (crawl?.status === 'running')
      await finishCrawl(tx, crawl, { code: 'INTERNAL_ERROR', message: `the crawl failed: ${(error as Error).message}` });
  });
}

export interface BatchCounts {
  /** Videos the source listed in this step. */
  videos: number;
  /** Of them, stored for the first time. */
  inserted: number;
  /** Of them, stored or changed (sent as search:video). */
  changed: number;
  /** The source failed in this step. */
  failure?: string;
}

/** The crawl's totals with one step's batch of `source` added (an earlier error of the source stays unless replaced). */
export function addBatch(totals: CrawlTotals, source: string, batch: BatchCounts): CrawlTotals {
  const before = totals.sources?.[source];
  return {
    ...totals,
    videos: (totals.videos ?? 0) + batch.videos,
    new: (totals.new ?? 0) + batch.inserted,
    sources: {
      ...totals.sources,
      [source]: {
        ...before,
        videos: (before?.videos ?? 0) + batch.videos,
        changed: (before?.changed ?? 0) + batch.changed,
        ...(batch.failure ? { error: batch.failure } : {}),
      },
    },
  };
}

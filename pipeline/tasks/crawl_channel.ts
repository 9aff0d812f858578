import type { Task } from 'graphile-worker';
import { z } from 'zod';
import type { Queryable, Sql } from '../../core/db/database.ts';
import { appendEvents, crawlStream } from '../../core/events/events.ts';
import type { Logger } from '../../core/log.ts';
import { DefiniteError } from '../../core/sources/http.ts';
import type { ChannelRecord, VideoRecord, VideoSource } from '../../core/sources/types.ts';
import { CRAWL_SUBTITLES_PRIORITY, enqueueSubtitleFetch } from '../../core/subtitles/enqueue.ts';
import { upsertChannel } from '../../core/videos/upsertChannel.ts';
import { upsertVideos } from '../../core/videos/upsertVideos.ts';
import { CHANNEL_JSON } from '../../core/videos/videoObject.ts';

const payloadSchema = z.object({
  crawlId: z.coerce.string().regex(/^\d+$/),
  step: z.number().int().min(0),
  cursor: z.string().optional(),
});

/** A job stores at least this many videos before handing over to the next page job... */
const BATCH_VIDEOS = 500;
/** ...unless this much time has passed, so no job runs long. */
const JOB_BUDGET_MS = 3_000;

interface CrawlRow { id: string; kind: 'full' | 'archive_page'; status: string; archiveCursor: string | null; channelId: string; channelTitle: string }

export interface CrawlDeps { sql: Sql; sources: VideoSource[]; log: Logger }

/** The sources a crawl walks, in order: every configured one for a full crawl, only the archive for a "continue" page. */
const planFor = (kind: CrawlRow['kind'], sources: VideoSource[]) => (kind === 'full' ? sources : sources.filter((source) => source.name === 'wayback'));

async function addStep(tx: Queryable, crawlId: string, step: number, cursor?: string) {
  await tx`
    select graphile_worker.add_job('crawl_channel', ${JSON.stringify({ crawlId, step, cursor })}::text::json,
      job_key => ${`crawl:${crawlId}:${step}:${cursor ?? ''}`.slice(0, 512)}, max_attempts => 5)`;
}

/**
 * Ends a crawl with search:complete and its totals, or with search:error when it failed or when
 * every source it asked failed (then nothing could be searched at all).
 */
async function finish(tx: Queryable, crawl: CrawlRow, failed?: { code: string; message: string }) {
  const [current] = await tx<{ totals: { sources?: Record<string, { error?: string }> } }[]>`select totals from crawls where id = ${crawl.id}`;
  const sources = Object.entries(current?.totals.sources ?? {});
  const error =
    failed ??
    (sources.length > 0 && sources.every(([, totals]) => totals.error)
      ? { code: 'SERVICE_UNAVAILABLE', message: `every source failed: ${sources.map(([name, totals]) => `${name}: ${totals.error}`).join('; ')}` }
      : undefined);
  await tx`
    update crawls set status = ${error ? 'error' : 'complete'}, finished_at = now(), error = ${error ? JSON.stringify(error) : null}::text::jsonb
    where id = ${crawl.id}`;
  await appendEvents(tx, crawlStream(crawl.id), [
    error ? { type: 'search:error', payload: error } : { type: 'search:complete', payload: { channelId: crawl.channelId, totals: current?.totals ?? {} } },
  ]);
}

/** Fetches source pages until a batch is full, the source ends, or the time budget is spent. */
async function gather(source: VideoSource, channel: ChannelRecord, cursor: string | undefined, onePage: boolean) {
  const started = Date.now();
  const videos: VideoRecord[] = [];
  let next = cursor;
  let progress: number | undefined;
  do {
    const page = await source.listVideos(channel, next);
    videos.push(...page.videos);
    next = page.next;
    progress = page.progress;
  } while (next && !onePage && videos.length < BATCH_VIDEOS && Date.now() - started < JOB_BUDGET_MS);
  return { videos, next, progress };
}

/**
 * One step of a crawl: a batch of one source's videos, stored with their events and the next
 * step's job in one transaction, so a crash repeats the step and nothing else.
 */
export function crawlChannelTask(deps: CrawlDeps): Task {
  const step = crawlStep(deps);
  return async (rawPayload, helpers) => {
    const payload = payloadSchema.parse(rawPayload);
    try {
      await step(payload, helpers);
    } catch (error) {
      // Out of attempts: the crawl ends with search:error instead of staying "running" for ever.
      if (helpers.job.attempts >= helpers.job.max_attempts) {
        await deps.sql.begin(async (tx) => {
          const [crawl] = await tx<CrawlRow[]>`select id::text, channel_id as "channelId", status from crawls where id = ${payload.crawlId} for update`;
          if (crawl?.status === 'running') await finish(tx, crawl, { code: 'INTERNAL_ERROR', message: `the crawl failed: ${(error as Error).message}` });
        });
      }
      throw error;
    }
  };
}

function crawlStep(deps: CrawlDeps) {
  return async (payload: z.infer<typeof payloadSchema>, helpers: Parameters<Task>[1]) => {
    const [crawl] = await deps.sql<CrawlRow[]>`
      select cr.id::text, cr.kind, cr.status, cr.archive_cursor as "archiveCursor", cr.channel_id as "channelId", ch.title as "channelTitle"
      from crawls cr join channels ch on ch.channel_id = cr.channel_id where cr.id = ${payload.crawlId}`;
    if (!crawl || crawl.status !== 'running') return;
    const stream = crawlStream(crawl.id);
    const plan = planFor(crawl.kind, deps.sources);
    const source = plan[payload.step];
    if (!source) {
      await deps.sql.begin((tx) => finish(tx, crawl));
      return;
    }
    const firstPage = payload.cursor === undefined;
    const cursor = payload.cursor ?? (crawl.kind === 'archive_page' ? crawl.archiveCursor ?? undefined : undefined);
    const channel: ChannelRecord = { channelId: crawl.channelId, title: crawl.channelTitle || undefined };
    // A full crawl reads one page of archive look-ups; "continue" pages through the rest.
    const onePage = source.name === 'wayback';

    let result: Awaited<ReturnType<typeof gather>> | undefined;
    let failure: string | undefined;
    let refreshed: ChannelRecord | undefined;
    try {
      if (firstPage) refreshed = await source.resolveChannel({ kind: 'channelId', channelId: crawl.channelId });
      result = await gather(source, refreshed ?? channel, cursor, onePage);
    } catch (error) {
      const lastAttempt = helpers.job.attempts >= helpers.job.max_attempts;
      if (!lastAttempt && !(error instanceof DefiniteError)) throw error; // transient: graphile-worker retries with backoff
      failure = (error as Error).message;
      deps.log.warn('source failed during crawl; continuing with the next source', { crawlId: crawl.id, source: source.name, err: error });
    }

    await deps.sql.begin(async (tx) => {
      const events: Array<{ type: string; payload: unknown }> = [];
      if (refreshed) {
        await upsertChannel(tx, refreshed);
        const [updated] = await tx<{ channel: unknown }[]>`select ${tx.unsafe(CHANNEL_JSON)} as channel from channels c where c.channel_id = ${crawl.channelId}`;
        events.push({ type: 'search:channel_update', payload: updated!.channel });
      }
      const { changed, inserted } = result ? await upsertVideos(tx, source.name, result.videos) : { changed: [], inserted: 0 };
      const sourceDone = !result?.next || onePage;
      const isLastStep = payload.step + 1 >= plan.length;
      const percent = Math.round(((payload.step + (sourceDone ? 1 : (result?.progress ?? 0))) / plan.length) * 100);
      events.push({ type: 'search:progress', payload: { stage: source.name, percent, videosInBatch: result?.videos.length ?? 0, ...(failure ? { warning: failure } : {}) } });
      for (const video of changed) events.push({ type: 'search:video', payload: video });
      const withCaptions = changed.filter((video) => video.captions.length > 0 || video.hasSubtitles);
      // Captions announced but none stored yet: fetched in the background, after crawl steps and what callers asked for.
      const toFetch = withCaptions.filter((video) => !video.hasSubtitles).map((video) => video.videoId);
      if (toFetch.length) await enqueueSubtitleFetch(tx, toFetch, { priority: CRAWL_SUBTITLES_PRIORITY });
      if (withCaptions.length) {
        events.push({ type: 'search:caption_info', payload: { videos: withCaptions.map((video) => ({ videoId: video.videoId, hasSubtitles: video.hasSubtitles, captions: video.captions })) } });
      }
      await appendEvents(tx, stream, events);
      await tx`
        update crawls set totals = jsonb_set(jsonb_set(jsonb_set(totals,
            '{videos}', to_jsonb(coalesce((totals->>'videos')::int, 0) + ${result?.videos.length ?? 0})),
            '{new}', to_jsonb(coalesce((totals->>'new')::int, 0) + ${inserted})),
            '{sources}', coalesce(totals->'sources', '{}') || jsonb_build_object(${source.name}::text,
              coalesce(totals->'sources'->${source.name}, '{}') || jsonb_build_object(
                'videos', coalesce((totals->'sources'->${source.name}->>'videos')::int, 0) + ${result?.videos.length ?? 0},
                'changed', coalesce((totals->'sources'->${source.name}->>'changed')::int, 0) + ${changed.length}
              ) || ${failure ? JSON.stringify({ error: failure }) : '{}'}::text::jsonb))
          ${onePage ? tx`, next_archive_cursor = ${result?.next ?? null}` : tx``}
        where id = ${crawl.id}`;
      if (!sourceDone) await addStep(tx, crawl.id, payload.step, result!.next);
      else if (!isLastStep) await addStep(tx, crawl.id, payload.step + 1);
      else await finish(tx, crawl);
    });
  };
}

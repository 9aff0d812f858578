import type { Queryable } from '../db/database.ts';
import { appendEvents, crawlStream } from '../events/events.ts';
import { announcesCaptions, captionInfoOf, searchEvents, type CrawlTotals, type SearchEvent } from '../events/searchEvents.ts';
import type { Logger } from '../log.ts';
import type { VideoSource } from '../sources/types.ts';
import { CRAWL_SUBTITLES_PRIORITY, enqueueSubtitleFetch } from '../subtitles/enqueue.ts';
import { languageTag } from '../text/languageTag.ts';
import { upsertChannel } from '../videos/upsertChannel.ts';
import { upsertVideos } from '../videos/upsertVideos.ts';
import { enqueueWaybackThumbnails } from '../videos/waybackThumbnails.ts';
import { CHANNEL_JSON, type ChannelObject } from '../videos/videoObject.ts';
import { readsOnePage, type Batch } from './fetchBatch.ts';
import { finishCrawl } from './finishCrawl.ts';
import { isQueued, type Crawl } from './loadCrawl.ts';
import { queueCrawlStep } from './queueStep.ts';
import { addBatch } from './totals.ts';

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
export async function storeBatch(
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
  const { changed, inserted } = await upsertVideos(tx, source.name, batch.videos, log.child({ crawlId: crawl.id }));
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

/**
 * The events of a channel search stream (`crawl:<id>` in the event log, read over SSE). The
 * schemas document the stream (OpenAPI) and their constructors are the only way to write one.
 */
import { z } from 'zod';
import { channelObject, videoObject, type VideoObject } from '../videos/videoObject.ts';
import { defineEvent, type EventVocabulary } from './defineEvent.ts';

const count = z.number().int().min(0);

/** What a crawl found, in all and per source (crawls.totals). */
const crawlTotals = z.object({
  videos: count.optional().describe('videos the sources listed'),
  new: count.optional().describe('videos stored for the first time'),
  sources: z
    .record(z.string(), z.object({ videos: count, changed: count, error: z.string().optional().describe('why the source failed') }))
    .optional()
    .describe('by source name'),
});
export type CrawlTotals = z.infer<typeof crawlTotals>;

const captionInfo = videoObject.pick({ videoId: true, hasSubtitles: true, captions: true });

const failedSources = z
  .array(z.object({ source: z.string(), error: z.string().describe('why it failed, or that it gave no answer for SOURCE_WAIT_BUDGET_MS') }))
  .describe(
    'the sources that failed during this crawl; what they would have found is missing (a later continue or recrawl asks them again)',
  );

export const searchEvents = {
  channelResolved: defineEvent(
    'search:channel_resolved',
    channelObject.describe('the channel as stored when the stream opens (first event)'),
    { parse: false },
  ),
  channelUpdate: defineEvent('search:channel_update', channelObject.describe('the channel after a source refreshed it'), { parse: false }),
  progress: defineEvent(
    'search:progress',
    z.object({
      stage: z.string().describe('the source a crawl step read, or "database" for the stored part'),
      percent: z.number().int().min(0).max(100),
      videosInBatch: count.optional().describe('videos the step read'),
      videos: count.optional().describe("the session's stored videos, those sent before a reconnect included (database stage)"),
      warning: z.string().optional().describe('the source failed; the crawl goes on with the next one'),
      retry: z
        .object({
          attempt: z.number().int().min(1).describe("the request's failed attempts so far"),
          error: z.string(),
          nextTryAt: z.iso.datetime().describe('when the request is tried again'),
          giveUpAt: z.iso.datetime().describe('when the crawl goes on without the source if it answers nothing before'),
        })
        .optional()
        .describe('a request to the source failed and is tried again (the step waits for it)'),
    }),
  ),
  video: defineEvent('search:video', videoObject.describe('a video stored or changed'), { parse: false }),
  videoBatch: defineEvent(
    'search:video_batch',
    z.object({ videos: z.array(videoObject) }).describe('the search:video events that follow it, in one event (no id)'),
    { parse: false },
  ),
  captionInfo: defineEvent(
    'search:caption_info',
    z.object({ videos: z.array(captionInfo) }).describe('captions announced and whether subtitles are stored'),
    { parse: false },
  ),
  statusChange: defineEvent(
    'search:status_change',
    z.object({
      videoId: z.string(),
      previousStatus: videoObject.shape.status.nullable(),
      status: videoObject.shape.status,
      reason: videoObject.shape.statusReason,
      since: z.iso.datetime(),
    }),
  ),
  complete: defineEvent(
    'search:complete',
    z
      .object({
        channelId: z.string(),
        totals: crawlTotals,
        failedSources,
        morePages: z
          .boolean()
          .describe('POST /api/search/:sessionId/continue has a further archive page to load (or an archive look-up to try again)'),
        reason: z.string().optional().describe('why a continue found nothing to load'),
      })
      .describe('the crawl ended (last event)'),
  ),
  error: defineEvent(
    'search:error',
    z
      .object({
        code: z.string().describe('SERVICE_UNAVAILABLE: every source failed; INTERNAL_ERROR: the crawl failed'),
        message: z.string(),
        failedSources: failedSources.optional().describe('SERVICE_UNAVAILABLE: each source and why it failed'),
      })
      .describe('the crawl failed (last event)'),
  ),
};

export type SearchEvent = ReturnType<(typeof searchEvents)[keyof typeof searchEvents]>;

export const searchEventVocabulary: EventVocabulary = { name: 'SearchEvent', events: Object.values(searchEvents) };

/** Whether a video has caption news for clients: captions announced, or subtitles stored. */
export const announcesCaptions = (video: VideoObject) => video.captions.length > 0 || video.hasSubtitles;

/** search:caption_info of these videos (the only place its payload is built). */
export const captionInfoOf = (videos: readonly VideoObject[]) =>
  searchEvents.captionInfo({
    videos: videos.map((video) => ({ videoId: video.videoId, hasSubtitles: video.hasSubtitles, captions: video.captions })),
  });

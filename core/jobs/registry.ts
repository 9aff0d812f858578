/**
 * Every graphile-worker task and the payload its jobs carry: the one list that enqueue checks
 * against, that the tasks parse with (pipeline/defineTask.ts), and that the worker's task list and
 * crontab are typed by. SQL that queues jobs (sql/010_search_sync.sql) is checked against it by a test.
 */
import { z } from 'zod';
import { VIDEO_ID } from '../youtube/channelQuery.ts';

/** Videos one check_status job probes: one videos.list call. */
export const CHECK_BATCH = 50;
/** Gone videos one link_reuploads job looks for re-uploads of. */
const REUPLOAD_BATCH = 500;

// Crontab jobs carry graphile-worker's `_cron` note, which these tasks ignore.
const noPayload = z.object({});
const videoIds = (max: number) => z.object({ videoIds: z.array(z.string().regex(VIDEO_ID)).min(1).max(max) });

export const jobPayloads = {
  cleanup: noPayload,
  crawl_channel: z.object({ crawlId: z.string().regex(/^\d+$/), step: z.number().int().min(0), cursor: z.string().optional() }),
  fetch_subtitles: z.object({ videoId: z.string().regex(VIDEO_ID) }),
  fetch_thumbnail: z.object({ videoId: z.string().regex(VIDEO_ID) }),
  generate_summary: z.object({ summaryId: z.string().regex(/^\d+$/) }),
  generate_stenogram: z.object({ stenogramId: z.string().regex(/^\d+$/) }),
  reconcile_stenograms: noPayload,
  check_status: videoIds(CHECK_BATCH),
  schedule_status_checks: noPayload,
  link_reuploads: videoIds(REUPLOAD_BATCH),
  recrawl_channels: noPayload,
  refresh_search_words: noPayload,
  run_saved_queries: noPayload,
  // Queued by the videos triggers (sql/010_search_sync.sql) with an empty payload; one job key joins them all.
  index_videos: z.strictObject({}),
  // Queued by the changes trigger (sql/045_watchlists.sql) the same way.
  fan_out_changes: z.strictObject({}),
  // The due webhook deliveries of one shard of endpoints (core/webhooks/deliveryJob.ts); one job key per shard.
  deliver_webhooks: z.object({ shard: z.int().min(0).max(15) }),
} satisfies Record<string, z.ZodType>;

export type TaskName = keyof typeof jobPayloads;
export type JobPayload<T extends TaskName> = z.output<(typeof jobPayloads)[T]>;

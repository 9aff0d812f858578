import { z } from 'zod';

/** What is known of a stored video: checking (not verified yet), live, deleted, or re-uploaded (deleted, its content living on under another id). */
export const videoStatus = z.enum(['checking', 'live', 'deleted', 're-uploaded']);

/** Why a deleted or re-uploaded video is gone (videos.status_reason). */
export const statusReason = z.enum([
  'private',
  'removed_by_uploader',
  'terms_of_service',
  'copyright',
  'account_terminated',
  'blocked_in_region',
  'unknown',
]);
export type StatusReason = z.infer<typeof statusReason>;

/** Who can observe a video's availability: the status probes and the sources. */
export const statusObserver = z.enum(['youtube_api', 'watch_page', 'yt_dlp', 'archive', 'wayback']);

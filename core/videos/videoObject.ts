import { z } from 'zod';
import { isoTimestamp } from '../db/isoTimestamp.ts';
import { reasonTextSql } from './statusWording.ts';
import { statusObserver, statusReason, videoStatus } from './videoStatus.ts';

/** A video as events and search results show it (camelCase, as the hosted service's clients expect). */
export const videoObject = z.object({
  videoId: z.string(),
  title: z.string().nullable(),
  description: z.string().nullable(),
  channelId: z.string(),
  channelTitle: z.string().nullable(),
  duration: z.number().int().nullable().describe('seconds'),
  viewCount: z.number().int().nullable(),
  uploadDate: z.string().nullable().describe('YYYY-MM-DD'),
  status: videoStatus.describe('checking: not verified yet'),
  statusReason: statusReason.nullable().describe('why a deleted or re-uploaded video is gone'),
  reasonText: z.string().nullable().describe('statusReason as the pages word it, e.g. "removed after a copyright claim"'),
  statusSince: z.string().describe('when the status last changed (ISO 8601): the time of the observation that changed it'),
  statusConfirmedAt: z
    .string()
    .nullable()
    .describe('when a probe or source last observed what status says (ISO 8601); null while checking'),
  statusConfirmedBy: statusObserver.nullable().describe('the probe or source of that observation'),
  metadataCompleteness: z.enum(['full', 'id_only']).describe('id_only: not even a title is known (a deleted video only listed by id)'),
  reuploadedAs: z.string().nullable().describe('the video id a re-uploaded video lives on as'),
  reuploadOf: z.string().nullable().describe('the deleted video this one re-uploads'),
  thumbnailUrl: z.string().nullable(),
  archiveUrl: z.string().nullable().describe('a Wayback capture URL with its 14-digit timestamp'),
  videoFileUrl: z
    .string()
    .nullable()
    .describe(
      'non-empty when an archived media file exists: /api/videos/<videoId>/file serves a file of the local archive (root-relative, like every URL of this API); a remote copy keeps its own URL',
    ),
  thumbnailFileUrl: z
    .string()
    .nullable()
    .describe(
      'non-null when this server keeps a thumbnail of the video (from a local archive or a Wayback capture): /api/videos/<videoId>/thumbnail serves it, ?w=160, 320 or 640 pixels wide',
    ),
  hasVideo: z.boolean(),
  hasSubtitles: z.boolean(),
  hasSummary: z.boolean(),
  tags: z.array(z.string()),
  language: z.string().nullable(),
  captions: z.array(z.object({ language: z.string(), kind: z.enum(['manual', 'auto', 'translated']) })),
  sources: z.array(z.enum(['archive', 'youtube_api', 'wayback'])).describe('which sources have seen the video'),
});
export type VideoObject = z.infer<typeof videoObject>;

/** A channel as search streams show it (search:channel_resolved, search:channel_update). */
export const channelObject = z.object({
  channelId: z.string(),
  channelTitle: z.string(),
  channelUrl: z.string(),
  handle: z.string().nullable(),
  avatarUrl: z.string().nullable(),
  bannerUrl: z.string().nullable(),
  description: z.string().nullable(),
  subscriberCount: z.number().int().nullable(),
  country: z.string().nullable(),
  videoCount: z.number().int().nullable(),
  channelStatus: z.enum(['live', 'deleted']),
  aliases: z.array(z.string()).describe('former names'),
});
export type ChannelObject = z.infer<typeof channelObject>;

/** The SQL select list that yields a VideoObject as json from `videos v` joined with `channels c`. */
export const VIDEO_JSON = `json_build_object(
  'videoId', v.video_id, 'title', v.title, 'description', v.description, 'channelId', v.channel_id,
  'channelTitle', nullif(c.title, ''), 'duration', v.duration_seconds, 'viewCount', v.view_count,
  'uploadDate', to_char(v.upload_date, 'YYYY-MM-DD'), 'status', v.status, 'statusReason', v.status_reason,
  'reasonText', ${reasonTextSql('v.status_reason')},
  'statusSince', ${isoTimestamp('v.status_since')},
  'statusConfirmedAt', (select ${isoTimestamp('k.confirmed_at')} from video_checks k where k.video_id = v.video_id),
  'statusConfirmedBy', (select k.confirmed_by from video_checks k where k.video_id = v.video_id),
  'metadataCompleteness', case when v.title is null then 'id_only' else 'full' end,
  'reuploadedAs', v.reuploaded_as, 'reuploadOf', v.reupload_of, 'thumbnailUrl', v.thumbnail_url,
  'archiveUrl', v.archive_url,
  'videoFileUrl', case when v.video_file_url like 'file:%' then '/api/videos/' || v.video_id || '/file' else nullif(v.video_file_url, '') end,
  'thumbnailFileUrl', case when exists (select from video_thumbnails t where t.video_id = v.video_id) then '/api/videos/' || v.video_id || '/thumbnail' end,
  'hasVideo', v.has_video,
  'hasSubtitles', v.has_subtitles, 'hasSummary', v.has_summary, 'tags', to_json(v.tags), 'language', v.language,
  'captions', v.caption_languages,
  'sources', coalesce((select json_agg(s.source order by s.source) from video_sources s where s.video_id = v.video_id), '[]'))`;

/** The SQL select list that yields a channel as json from `channels c` (the `channel` that search streams send). */
export const CHANNEL_JSON = `json_build_object(
  'channelId', c.channel_id, 'channelTitle', c.title,
  'channelUrl', 'https://www.youtube.com/' || coalesce(c.handle, 'channel/' || c.channel_id),
  'handle', c.handle, 'avatarUrl', c.avatar_url, 'bannerUrl', c.banner_url, 'description', c.description,
  'subscriberCount', c.subscriber_count, 'country', c.country, 'videoCount', c.video_count,
  'channelStatus', c.channel_status, 'aliases', to_json(c.aliases))`;

/** What a source says of a channel and of its videos, stored: the channel's row (upsertChannel), the videos' (upsertVideos). */
import type { Queryable } from '../db/database.ts';
import type { Logger, LogFields } from '../log.ts';
import type { ChannelRecord, SourceName, VideoRecord } from '../sources/types.ts';
import { keepArchiveThumbnails } from './keepArchiveThumbnails.ts';
import { recordSightings } from './recordSightings.ts';
import { VIDEO_JSON, type VideoObject } from './videoObject.ts';
import { sanitiseStrings, type SubstitutionCounts } from '../text/sanitiseText.ts';

/**
 * Records what a source says of a channel: known fields overwrite, unknown ones keep what we had.
 * A handle now used by this channel is taken from any channel that had it before. Its text is
 * sanitised first (storableRecords), logged on `log` when it needed it.
 */
export async function upsertChannel(sql: Queryable, record: ChannelRecord, log?: Logger): Promise<void> {
  const channel = storableRecords([record], { of: 'channel', channelId: record.channelId }, log)[0]!;
  if (channel.handle) {
    await sql`update channels set handle = null where lower(handle) = lower(${channel.handle}) and channel_id <> ${channel.channelId}`;
  }
  await sql`
    insert into channels as c (channel_id, title, handle, custom_url, description, avatar_url, banner_url, subscriber_count, video_count, country, channel_status)
    values (${channel.channelId}, ${channel.title ?? ''}, ${channel.handle ?? null}, ${channel.customUrl ?? null}, ${channel.description ?? null},
      ${channel.avatarUrl ?? null}, ${channel.bannerUrl ?? null}, ${channel.subscriberCount ?? null}, ${channel.videoCount ?? null},
      ${channel.country ?? null}, ${channel.channelStatus ?? 'live'})
    on conflict (channel_id) do update set
      title = coalesce(nullif(excluded.title, ''), c.title),
      handle = coalesce(excluded.handle, c.handle),
      custom_url = coalesce(excluded.custom_url, c.custom_url),
      description = coalesce(excluded.description, c.description),
      avatar_url = coalesce(excluded.avatar_url, c.avatar_url),
      banner_url = coalesce(excluded.banner_url, c.banner_url),
      subscriber_count = coalesce(excluded.subscriber_count, c.subscriber_count),
      video_count = coalesce(excluded.video_count, c.video_count),
      country = coalesce(excluded.country, c.country),
      channel_status = case when ${channel.channelStatus ?? null}::text is null then c.channel_status else excluded.channel_status end`;
}

/** How much a source's metadata is trusted: the platform's own API over a local archive over old captures. */
const sourceRank: Record<SourceName, number> = { youtube_api: 3, archive: 2, wayback: 1 };

/** Keeps a field from the better source; a worse source only fills what is missing. */
const ranked = (column: string) =>
  `${column} = case when excluded.metadata_rank >= v.metadata_rank then coalesce(excluded.${column}, v.${column}) else coalesce(v.${column}, excluded.${column}) end`;

const MERGE = ['title', 'description', 'duration_seconds', 'view_count', 'upload_date', 'thumbnail_url', 'language']
  .map(ranked)
  .join(',\n      ');

/**
 * Stores a batch of one source's videos in one round of statements (call inside a transaction),
 * keeps the thumbnail files an archive names (keepArchiveThumbnails), records the source's sighting
 * of each (video_sources, and what it saw of availability, at the time it saw it: recordSightings), and returns the videos that are new or changed, as
 * VideoObjects, in the batch's order, and those whose status the source decided (`statusDecided`: a new video it saw gone, a
 * sighting that changed the status), whose evidence the caller keeps (core/status/keepObservations.ts). Unchanged rows produce nothing (see skip_unchanged_update).
 * The records' text is sanitised first (storableRecords), logged on `log` when it needed it.
 */
export async function upsertVideos(
  sql: Queryable,
  source: SourceName,
  records: VideoRecord[],
  log?: Logger,
): Promise<{ changed: VideoObject[]; inserted: number; statusDecided: string[] }> {
  // One row per video: an upsert may not touch the same row twice in one statement.
  records = storableRecords([...new Map(records.map((record) => [record.videoId, record])).values()], { source, of: 'videos' }, log);
  if (records.length === 0) return { changed: [], inserted: 0, statusDecided: [] };
  const rows = records.map((record) => ({
    video_id: record.videoId,
    channel_id: record.channelId,
    title: record.title ?? null,
    description: record.description ?? null,
    duration_seconds: record.durationSeconds ?? null,
    view_count: record.viewCount ?? null,
    upload_date: record.uploadDate ?? null,
    thumbnail_url: record.thumbnailUrl ?? null,
    archive_url: record.archiveUrl ?? null,
    video_file_url: record.videoFileUrl ?? null,
    tags: record.tags ?? null,
    language: record.language ?? null,
    status: record.availability === 'live' ? 'live' : record.availability === 'deleted' ? 'deleted' : 'checking',
    // Sources say a video is gone, never why: the status probes find the reason.
    status_reason: record.availability === 'deleted' ? 'unknown' : null,
    observed_at: record.observedAt ?? null,
    caption_languages: record.captions ?? [],
    evidence_url: record.evidenceUrl ?? record.archiveUrl ?? null,
  }));
  const json = JSON.stringify(rows);
  await sql`
    insert into channels (channel_id) select distinct channel_id from jsonb_to_recordset(${json}::text::jsonb) as x(channel_id text)
    on conflict (channel_id) do nothing`;
  const touched = await sql<{ videoId: string; inserted: boolean }[]>`
    insert into videos as v (video_id, channel_id, title, description, duration_seconds, view_count, upload_date, thumbnail_url,
      archive_url, video_file_url, tags, language, status, status_reason, status_source, status_evidence, status_since, caption_languages, metadata_rank)
    select video_id, channel_id, title, description, duration_seconds, view_count, upload_date, thumbnail_url,
      archive_url, video_file_url, coalesce(tags, '{}'), language, status, status_reason, ${source}, evidence_url,
      -- A new video's first status holds since the source saw it (the history's first row says when).
      case when status = 'checking' then now() else least(coalesce(observed_at, now()), now()) end, caption_languages, ${sourceRank[source]}
    from jsonb_to_recordset(${json}::text::jsonb) as x(video_id text, channel_id text, title text, description text, duration_seconds integer,
      view_count bigint, upload_date date, thumbnail_url text, archive_url text, video_file_url text, tags text[], language text,
      status text, status_reason text, evidence_url text, observed_at timestamptz, caption_languages jsonb)
    on conflict (video_id) do update set
      ${sql.unsafe(MERGE)},
      tags = case when excluded.metadata_rank >= v.metadata_rank and cardinality(excluded.tags) > 0 then excluded.tags else v.tags end,
      archive_url = coalesce(excluded.archive_url, v.archive_url),
      video_file_url = coalesce(excluded.video_file_url, v.video_file_url),
      caption_languages = (
        select coalesce(jsonb_agg(distinct entry), '[]') from jsonb_array_elements(v.caption_languages || excluded.caption_languages) as entry
      ),
      -- A stored video's status changes by what recordSightings makes of the source's sighting, below.
      metadata_rank = greatest(v.metadata_rank, excluded.metadata_rank)
    returning v.video_id as "videoId", (xmax = 0) as inserted`;
  if (source === 'archive') await keepArchiveThumbnails(sql, records);
  await sql`
    insert into video_sources as s (video_id, source, evidence_url)
    select video_id, ${source}, evidence_url from jsonb_to_recordset(${json}::text::jsonb) as x(video_id text, evidence_url text)
    on conflict (video_id, source) do update set last_seen_at = now(), evidence_url = coalesce(excluded.evidence_url, s.evidence_url)`;
  const sightings = records.flatMap(({ videoId, availability, observedAt, evidenceUrl, archiveUrl }) =>
    availability === 'live' || availability === 'deleted'
      ? [{ videoId, availability, observedAt: observedAt ?? null, evidence: evidenceUrl ?? archiveUrl ?? null }]
      : [],
  );
  const statusChanged = await recordSightings(sql, source, sightings);
  const seenGone = new Set(records.filter((record) => record.availability === 'deleted').map((record) => record.videoId));
  const statusDecided = [
    ...new Set([...touched.filter((row) => row.inserted && seenGone.has(row.videoId)).map((row) => row.videoId), ...statusChanged]),
  ];
  const changedIds = [...new Set([...touched.map((row) => row.videoId), ...statusChanged])];
  if (changedIds.length === 0) return { changed: [], inserted: 0, statusDecided };
  const order = new Map(records.map((record, index) => [record.videoId, index]));
  const changed = await sql<{ video: VideoObject }[]>`
    select ${sql.unsafe(VIDEO_JSON)} as video from videos v join channels c on c.channel_id = v.channel_id
    where v.video_id = any(${changedIds})`;
  return {
    changed: changed.map((row) => row.video).sort((a, b) => (order.get(a.videoId) ?? 0) - (order.get(b.videoId) ?? 0)),
    inserted: touched.filter((row) => row.inserted).length,
    statusDecided,
  };
}

/**
 * Source records as they can be stored: every string sanitised (sanitiseText), once, on the way
 * into the database. A batch that needed it is logged once, with the substitutions by field.
 */
function storableRecords<T>(records: readonly T[], context: LogFields, log?: Logger): T[] {
  const substitutions: SubstitutionCounts = {};
  const clean = records.map((record) => sanitiseStrings(record, substitutions));
  if (Object.keys(substitutions).length) {
    log?.warn('source text sanitised: NUL and lone surrogates stored as U+FFFD', { ...context, records: records.length, substitutions });
  }
  return clean;
}

import type { Queryable } from '../db/database.ts';
import type { VideoRecord } from '../sources/types.ts';

/**
 * Records the thumbnail files an archive keeps beside its videos (video_thumbnails, source 'archive'):
 * a reference to the file, as for media files; its bytes stay in the archive. A video stored again
 * without a thumbnail keeps the one recorded (a flat-playlist dump names no files).
 */
export async function keepArchiveThumbnails(sql: Queryable, records: readonly VideoRecord[]): Promise<void> {
  const kept = records.filter((record) => record.thumbnailFileUrl?.startsWith('file:'));
  if (kept.length === 0) return;
  await sql`
    insert into video_thumbnails as t (video_id, source, file_url)
    select video_id, 'archive', file_url
    from unnest(${kept.map((record) => record.videoId)}::text[], ${kept.map((record) => record.thumbnailFileUrl!)}::text[]) as x(video_id, file_url)
    on conflict (video_id, source) do update set file_url = excluded.file_url, fetched_at = now()
    where t.file_url is distinct from excluded.file_url`;
}

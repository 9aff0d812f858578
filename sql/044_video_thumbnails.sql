-- The thumbnails this server keeps of a video, one per source, served resized by
-- GET /api/videos/:videoId/thumbnail. An archive's thumbnail (the .jpg/.webp/.png yt-dlp writes beside
-- the .info.json) is kept as a reference to that file, as media files are (videos.video_file_url): the
-- archive holds the bytes, and removing its root stops serving it. A thumbnail read from a Wayback
-- capture has no file of its own: its bytes are kept here (a few tens of kB), with their hash, size
-- and when they were fetched. The archive's wins when both are kept.
create table video_thumbnails (
  video_id text not null references videos (video_id) on delete cascade,
  source text not null check (source in ('archive', 'wayback')),
  -- archive: the file:// URL the scan recorded.
  file_url text,
  -- wayback: the image's bytes, their sha-256 (hex), dimensions, and the capture they came from.
  bytes bytea,
  content_hash text,
  width integer check (width > 0),
  height integer check (height > 0),
  capture_url text,
  fetched_at timestamptz not null default now(),
  primary key (video_id, source),
  check (
    source = 'archive' and file_url like 'file:%' and bytes is null
    or source = 'wayback' and file_url is null and bytes is not null and content_hash is not null and width is not null and height is not null
  )
);

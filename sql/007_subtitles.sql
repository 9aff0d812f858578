-- Subtitles: every version of every caption track of a video, and one transcript per video.

-- A track is (video, language, kind); each distinct content of it is a version, numbered from 1 in
-- the order it was first stored. A version is never changed: content that differs is a new row.
create table subtitle_tracks (
  id bigint generated always as identity primary key,
  video_id text not null references videos (video_id) on delete cascade,
  -- As the platform names tracks: en, en-US, pt-BR, zh-Hans, en-orig, en-uYU-mmqFLq8 (named manual tracks).
  language text not null check (language ~ '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$'),
  -- manual: made by a person; auto: speech recognition; translated: machine translation of another track.
  kind text not null check (kind in ('manual', 'auto', 'translated')),
  -- Where this version was first found: the local yt-dlp archive, the platform's caption tracks, a Wayback capture.
  source text not null check (source in ('archive', 'youtube', 'wayback')),
  -- The format it was fetched in; the content below is normalised whatever it was.
  format text not null check (format in ('vtt', 'srt', 'srv1', 'srv2', 'srv3', 'json3')),
  version integer not null check (version >= 1),
  -- Normalised cues (core/subtitles parse()): [{startMs, endMs, text, speakerChange?}], roll-up removed.
  cues jsonb not null check (jsonb_typeof(cues) = 'array'),
  cue_count integer not null check (cue_count >= 0),
  -- UTF-8 bytes of the cues' text: what bulk downloads are limited by, known before the cues are read.
  text_bytes integer not null check (text_bytes >= 0),
  -- End of the last cue.
  duration_ms integer not null check (duration_ms >= 0),
  -- Size of the file or answer as fetched.
  original_bytes integer not null check (original_bytes >= 0),
  -- SHA-256 (hex) of the normalised cues: the same words at the same times are the same version.
  content_hash text not null check (content_hash ~ '^[0-9a-f]{64}$'),
  -- The file (file://…), timedtext URL (signature parameters dropped) or Wayback capture it came from.
  origin_url text,
  fetched_at timestamptz not null default now(),
  -- Last time a fetch found this content again.
  last_seen_at timestamptz not null default now(),
  unique (video_id, language, kind, content_hash),
  unique (video_id, language, kind, version)
);

-- The newest version of each track (the highest version number).
create view latest_subtitle_tracks as
  select distinct on (video_id, language, kind) *
  from subtitle_tracks
  order by video_id, language, kind, version desc;

-- One transcript per video: the track summaries and stenograms build on. No row is state 'none'.
create table transcripts (
  video_id text primary key references videos (video_id) on delete cascade,
  -- none: nothing found (yet); pending: a fetch is queued or running; completed: track_id is the
  -- transcript; failed: the last fetch failed (error says why) and no track is known.
  state text not null default 'none' check (state in ('none', 'pending', 'completed', 'failed')),
  -- The chosen version: the best manual track, else auto (else translated); in the video's language,
  -- else English, else the first language; always the newest version of that track.
  track_id bigint references subtitle_tracks (id) on delete set null,
  error text,
  -- When a fetch was last asked for, and when one last finished.
  requested_at timestamptz,
  checked_at timestamptz,
  updated_at timestamptz not null default now(),
  check (state <> 'completed' or track_id is not null)
);

-- videos.has_subtitles is true exactly when a track is stored; videos.caption_languages lists every
-- stored (language, kind) besides what sources announced. Kept here, so no writer can forget it.
create function refresh_video_subtitles() returns trigger language plpgsql as $$
declare
  target text := coalesce(new.video_id, old.video_id);
begin
  update videos v set
    has_subtitles = exists (select 1 from subtitle_tracks t where t.video_id = target),
    caption_languages = (
      select coalesce(jsonb_agg(distinct entry), '[]')
      from (
        select entry from jsonb_array_elements(v.caption_languages) as entry
        union
        select jsonb_build_object('language', t.language, 'kind', t.kind) from subtitle_tracks t where t.video_id = target
      ) entries
    )
  where v.video_id = target;
  return null;
end $$;
create trigger subtitle_tracks_refresh_video after insert or delete on subtitle_tracks
  for each row execute function refresh_video_subtitles();

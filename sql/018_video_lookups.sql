-- On-demand subtitle fetches of videos not stored yet (POST /api/subtitles/:videoId/fetch): the
-- fetch_subtitles job first asks the configured sources for the video. A row exists while the
-- lookup is pending and stays when it failed (what GET /api/subtitles/:videoId/status reports);
-- it is deleted when a source knew the video, which is then stored and has a transcript row.
create table video_lookups (
  video_id text primary key check (video_id ~ '^[A-Za-z0-9_-]{11}$'),
  state text not null check (state in ('pending', 'failed')),
  -- Why it failed: which sources were asked and what they answered.
  error text,
  requested_at timestamptz not null default now(),
  checked_at timestamptz,
  check ((state = 'failed') = (error is not null))
);

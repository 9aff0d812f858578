-- Evidence: what a source actually answered, kept for every observation that decided or confirmed
-- something (a suspicion, a status change, a later probe confirming a gone video), so a video's record
-- can be exported and checked by anyone. Routine answers that change nothing are counted, not kept.
create table evidence_observations (
  id bigint generated always as identity primary key,
  video_id text not null references videos (video_id),
  -- youtube_api, watch_page, yt_dlp, wayback.
  source text not null,
  -- The exact request, with secrets (an API key) removed.
  request_url text not null,
  -- When the source answered (its Date header when it sent one), and when it was kept.
  observed_at timestamptz not null,
  recorded_at timestamptz not null default now(),
  http_status integer,
  content_type text,
  -- What the observation decided: a first "gone" (suspected), the change it made (status_change),
  -- or a later answer agreeing with a gone status (confirmation).
  decided text not null check (decided in ('suspected', 'status_change', 'confirmation')),
  -- The one-line reading of the answer the history shows ("ERROR: Video unavailable …").
  said text not null,
  -- The history row it led to: set on the change itself, and on the suspicion the change confirmed.
  status_history_id bigint references video_status_history (id),
  -- A Wayback capture's timestamp and the CDX digest of its body.
  wayback_timestamp text check (wayback_timestamp ~ '^[0-9]{14}$'),
  cdx_digest text,
  -- SHA-256 (hex) and size of the raw body as the source sent it (decoded from any transfer coding).
  body_sha256 text not null check (body_sha256 ~ '^[0-9a-f]{64}$'),
  body_size integer not null check (body_size >= 0),
  body_gzip bytea not null
);
create index evidence_observations_video on evidence_observations (video_id, id);
create index evidence_observations_history on evidence_observations (status_history_id) where status_history_id is not null;
-- EVIDENCE_RETENTION_DAYS drops the oldest first.
create index evidence_observations_recorded on evidence_observations (recorded_at);

-- Definite answers that changed nothing (a live video still live): counted per video, not kept.
alter table video_checks add column unkept_observations integer not null default 0;

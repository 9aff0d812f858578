-- Private AI stenograms: one per owner and video. The row holds the metadata (api-spec §2.4) and
-- the Markdown's hash; the Markdown itself is in the stenogram store (DATA_DIR/stenograms or S3).

create table stenograms (
  id bigint generated always as identity primary key,
  owner_id uuid not null references users (id) on delete cascade,
  video_id text not null references videos (video_id) on delete cascade,
  -- The key whose daily quota paid for the generation (apiStenogramsPerDay is counted per key), and
  -- the quota bucket it was charged in, so a generation that fails before writing anything is refunded there.
  api_key_id uuid references api_keys (id) on delete set null,
  charged_window_start timestamptz,
  -- generating: a job is writing it; generated: the Markdown is stored; failed: error says why (a new request starts over).
  status text not null default 'generating' check (status in ('generating', 'generated', 'failed')),
  error text,
  -- The caller's language hint (ISO 639-1/639-2), and the language of the text.
  requested_language text check (requested_language ~ '^[a-z]{2,3}$'),
  language text check (language ~ '^[a-z]{2,3}$'),
  -- The video's title and channel name when it was generated (the stenogram's own record of them).
  title text,
  channel_title text,
  llm_model text,
  prompt_tokens integer check (prompt_tokens >= 0),
  completion_tokens integer check (completion_tokens >= 0),
  speakers integer check (speakers >= 0),
  paragraphs integer check (paragraphs >= 0),
  words integer check (words >= 0),
  chunks integer check (chunks >= 0),
  fallback_chunks integer check (fallback_chunks >= 0),
  bytes integer check (bytes >= 0),
  content_sha256 text check (content_sha256 ~ '^[0-9a-f]{64}$'),
  transcript_track_id bigint references subtitle_tracks (id) on delete set null,
  transcript_language text,
  transcript_kind text,
  transcript_version integer,
  requested_at timestamptz not null default now(),
  generated_at timestamptz,
  updated_at timestamptz not null default now(),
  unique (owner_id, video_id),
  check (status <> 'generated' or (content_sha256 is not null and bytes is not null and language is not null
    and llm_model is not null and generated_at is not null)),
  check (status <> 'failed' or error is not null)
);
-- The owner's list, newest first.
create index stenograms_owner_latest on stenograms (owner_id, requested_at desc, id desc);

-- AI summaries: one public summary per video and one private summary per owner and video, the
-- counts that the browse lists read, and videos.has_summary kept true exactly while a public
-- summary is ready.

create table summaries (
  id bigint generated always as identity primary key,
  video_id text not null references videos (video_id) on delete cascade,
  -- The video's channel, copied so that the channel counts stay right when the video row is gone.
  channel_id text not null references channels (channel_id),
  -- Who asked for it. A private summary is its owner's alone; a public one remembers who asked.
  owner_id uuid references users (id) on delete cascade,
  private boolean not null default false,
  status text not null default 'generating' check (status in ('generating', 'ready', 'failed')),
  error text,
  title text,
  tldr text,
  -- [{text, startSeconds}], in the order of the video.
  key_points jsonb check (key_points is null or jsonb_typeof(key_points) = 'array'),
  detailed_summary text,
  tags text[] not null default '{}',
  language text check (language ~ '^[a-z]{2,3}$'),
  -- The LLM's model name, or the offline generator's (afterimage-extractive-1).
  llm_model text,
  prompt_tokens integer check (prompt_tokens >= 0),
  completion_tokens integer check (completion_tokens >= 0),
  -- The transcript version it was built from (the track row may go; its description stays).
  transcript_track_id bigint references subtitle_tracks (id) on delete set null,
  transcript_language text,
  transcript_kind text,
  transcript_version integer,
  requested_at timestamptz not null default now(),
  generated_at timestamptz,
  updated_at timestamptz not null default now(),
  check (not private or owner_id is not null),
  check (status <> 'ready' or (title is not null and tldr is not null and key_points is not null
    and detailed_summary is not null and language is not null and llm_model is not null and generated_at is not null)),
  check (status <> 'failed' or error is not null)
);
create unique index summaries_public_per_video on summaries (video_id) where not private;
create unique index summaries_private_per_owner on summaries (owner_id, video_id) where private;
-- The browse lists: public ready summaries, newest first, by tag, channel or language.
create index summaries_public_latest on summaries (generated_at desc, id desc) where status = 'ready' and not private;
-- Tags with the language (btree_gin, sql/013): a tag in one language intersects two posting lists instead of
-- reading every summary with the tag; a tag alone uses the same index.
create index summaries_public_tags on summaries using gin (tags, language) where status = 'ready' and not private;
create index summaries_public_language on summaries (language, generated_at desc, id desc) where status = 'ready' and not private;
create index summaries_public_channel on summaries (channel_id, generated_at desc, id desc) where status = 'ready' and not private;

-- How many public ready summaries each language, tag and channel has: the tag cloud and the language
-- and channel lists read these rows instead of counting every summary. A tag has a row per language
-- and one across all languages (language '').
create table summary_facets (
  facet text not null check (facet in ('language', 'tag', 'channel')),
  language text not null default '',
  value text not null,
  count integer not null check (count >= 0),
  primary key (facet, language, value)
);
create index summary_facets_by_count on summary_facets (facet, language, count desc, value);

create function summary_facet_rows(s summaries) returns table (facet text, language text, value text)
language sql immutable as $$
  select 'language', '', s.language
  union all select 'tag', s.language, tag from unnest(s.tags) as tag
  union all select 'tag', '', tag from unnest(s.tags) as tag
  union all select 'channel', '', s.channel_id
$$;

create function maintain_summary_counts() returns trigger language plpgsql as $$
begin
  if tg_op in ('UPDATE', 'DELETE') and old.status = 'ready' and not old.private then
    update summary_facets f set count = f.count - 1
    from summary_facet_rows(old) r
    where f.facet = r.facet and f.language = r.language and f.value = r.value;
    delete from summary_facets where count = 0;
  end if;
  if tg_op in ('INSERT', 'UPDATE') and new.status = 'ready' and not new.private then
    insert into summary_facets as f (facet, language, value, count)
    select distinct r.facet, r.language, r.value, 1 from summary_facet_rows(new) r
    order by 1, 2, 3
    on conflict (facet, language, value) do update set count = f.count + 1;
  end if;
  -- videos.has_summary: true exactly while the video's public summary is ready.
  update videos v set has_summary = exists (select 1 from summaries s where s.video_id = v.video_id and s.status = 'ready' and not s.private)
  where v.video_id in (select old.video_id where tg_op <> 'INSERT' union select new.video_id where tg_op <> 'DELETE')
    and v.has_summary is distinct from exists (select 1 from summaries s where s.video_id = v.video_id and s.status = 'ready' and not s.private);
  return null;
end $$;
create trigger summaries_counts after insert or update or delete on summaries
  for each row execute function maintain_summary_counts();

-- Channels and videos as the sources describe them, and which source saw each video when.

create table channels (
  channel_id text primary key check (channel_id ~ '^UC[A-Za-z0-9_-]{22}$'),
  title text not null default '',
  handle text check (handle ~ '^@[^\s/]{3,30}$'),
  custom_url text,
  description text,
  avatar_url text,
  banner_url text,
  subscriber_count bigint check (subscriber_count >= 0),
  video_count integer check (video_count >= 0),
  country text,
  channel_status text not null default 'live' check (channel_status in ('live', 'deleted')),
  -- Former titles, newest last: a channel that renamed itself stays findable by its old name.
  aliases text[] not null default '{}',
  first_seen_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index channels_handle_unique on channels (lower(handle));

create function remember_channel_alias() returns trigger language plpgsql as $$
begin
  if old.title <> '' and new.title is distinct from old.title and not (old.title = any(new.aliases)) then
    new.aliases := array_append(new.aliases, old.title);
  end if;
  return new;
end $$;
create trigger channels_remember_alias before update of title on channels
  for each row execute function remember_channel_alias();

create table videos (
  video_id text primary key check (video_id ~ '^[A-Za-z0-9_-]{11}$'),
  channel_id text not null references channels (channel_id),
  title text,
  description text,
  duration_seconds integer check (duration_seconds >= 0),
  view_count bigint check (view_count >= 0),
  upload_date date,
  thumbnail_url text,
  archive_url text,
  video_file_url text,
  tags text[] not null default '{}',
  language text,
  -- checking: not verified yet; the status model and its history come with status tracking.
  status text not null default 'checking' check (status in ('checking', 'live', 'deleted', 're-uploaded')),
  has_subtitles boolean not null default false,
  has_summary boolean not null default false,
  caption_languages jsonb not null default '[]',
  -- Rank of the source whose metadata the row holds: a better source overwrites, a worse one only fills gaps.
  metadata_rank smallint not null default 0,
  first_seen_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index videos_channel_upload on videos (channel_id, upload_date desc nulls last, video_id);

create table video_sources (
  video_id text not null references videos (video_id) on delete cascade,
  source text not null check (source in ('archive', 'youtube_api', 'wayback')),
  first_seen_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  evidence_url text,
  primary key (video_id, source)
);

-- An upsert that changes nothing is skipped, so `returning` lists only rows that really changed
-- (and only those produce events); a real change stamps updated_at.
create function skip_unchanged_update() returns trigger language plpgsql as $$
begin
  if new is not distinct from old then
    return null;
  end if;
  new.updated_at := now();
  return new;
end $$;
create trigger videos_skip_unchanged before update on videos for each row execute function skip_unchanged_update();
create trigger channels_skip_unchanged before update on channels for each row execute function skip_unchanged_update();

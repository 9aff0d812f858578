-- Tiers, their feature flags and their limits are data: operators change them without a release.

create table tiers (
  name text primary key check (name in ('anonymous', 'registered', 'plus', 'pro')),
  rank smallint not null unique,
  display_name text not null,
  api_access boolean not null,
  max_key_scope smallint not null check (max_key_scope between 1 and 4),
  updated_at timestamptz not null default now()
);

create table feature_definitions (
  name text primary key check (name ~ '^[a-z][A-Za-z]+$'),
  description text not null
);

create table tier_features (
  tier text not null references tiers (name) on update cascade on delete cascade,
  feature text not null references feature_definitions (name) on update cascade on delete cascade,
  enabled boolean not null,
  primary key (tier, feature)
);

-- sliding: a rolling window of window_seconds; utc_day: a calendar day that resets at midnight UTC.
create table limit_definitions (
  name text primary key check (name ~ '^[a-z][A-Za-z]+$'),
  description text not null,
  unit text not null,
  window_kind text not null check (window_kind in ('sliding', 'utc_day')),
  window_seconds integer not null check (window_seconds > 0),
  counted_per text not null check (counted_per in ('user', 'key')),
  check (window_kind = 'sliding' or window_seconds = 86400)
);

-- max_count null means unlimited; 0 means not allowed at all.
create table tier_limits (
  tier text not null references tiers (name) on update cascade on delete cascade,
  limit_name text not null references limit_definitions (name) on update cascade on delete cascade,
  max_count integer check (max_count >= 0),
  primary key (tier, limit_name)
);

insert into tiers (name, rank, display_name, api_access, max_key_scope) values
  ('anonymous', 0, 'Anonymous', false, 1),
  ('registered', 1, 'Registered', false, 1),
  ('plus', 2, 'Plus', false, 2),
  ('pro', 3, 'Pro', true, 4);

insert into feature_definitions (name, description) values
  ('apiAccess', 'Programmatic access to the REST API with an API key'),
  ('channelSearch', 'Find every video of a channel, streamed over SSE'),
  ('fullTextSearch', 'Search titles, descriptions and subtitles'),
  ('subtitleDownload', 'Download subtitles as SRT or VTT, one by one or in bulk'),
  ('summaries', 'Read AI summaries'),
  ('summaryGeneration', 'Generate AI summaries'),
  ('stenograms', 'Generate private AI stenograms (needs an L3+ key)'),
  ('statusHistory', 'Read the status history of a video');

insert into tier_features (tier, feature, enabled)
select t.name, f.name,
  case f.name
    when 'apiAccess' then t.name = 'pro'
    when 'stenograms' then t.name in ('plus', 'pro')
    when 'summaryGeneration' then t.name <> 'anonymous'
    else true
  end
from tiers t cross join feature_definitions f;

insert into limit_definitions (name, description, unit, window_kind, window_seconds, counted_per) values
  ('requestsPerMinute', 'API requests per minute', 'requests', 'sliding', 60, 'user'),
  ('channelSearchesPerHour', 'Channel searches per hour', 'channel searches', 'sliding', 3600, 'user'),
  ('ftsQueriesPerMinute', 'Full-text queries per minute', 'full-text queries', 'sliding', 60, 'user'),
  ('subtitleDownloadsPerDay', 'Subtitle downloads per day', 'subtitle downloads', 'sliding', 86400, 'user'),
  ('summaryGenerationsPerDay', 'Summary generations per day', 'summary generations', 'sliding', 86400, 'user'),
  ('apiStenogramsPerDay', 'Stenogram generations per API key per day, reset at midnight UTC', 'stenogram generations', 'utc_day', 86400, 'key');

insert into tier_limits (tier, limit_name, max_count)
select t.name, l.name, (case t.name
    when 'anonymous' then jsonb_build_object('requestsPerMinute', 30, 'channelSearchesPerHour', 3, 'ftsQueriesPerMinute', 5, 'subtitleDownloadsPerDay', 5, 'summaryGenerationsPerDay', 0, 'apiStenogramsPerDay', 0)
    when 'registered' then jsonb_build_object('requestsPerMinute', 60, 'channelSearchesPerHour', 10, 'ftsQueriesPerMinute', 10, 'subtitleDownloadsPerDay', 20, 'summaryGenerationsPerDay', 5, 'apiStenogramsPerDay', 0)
    when 'plus' then jsonb_build_object('requestsPerMinute', 120, 'channelSearchesPerHour', 20, 'ftsQueriesPerMinute', 10, 'subtitleDownloadsPerDay', 30, 'summaryGenerationsPerDay', 20, 'apiStenogramsPerDay', 2)
    else jsonb_build_object('requestsPerMinute', 600, 'channelSearchesPerHour', 30, 'ftsQueriesPerMinute', 10, 'subtitleDownloadsPerDay', 50, 'summaryGenerationsPerDay', 50, 'apiStenogramsPerDay', 10)
  end ->> l.name)::integer
from tiers t cross join limit_definitions l;

create function touch_tier() returns trigger language plpgsql as $$
begin
  update tiers set updated_at = now() where name = coalesce(new.tier, old.tier);
  return null;
end $$;

create trigger tier_features_touch after insert or update or delete on tier_features for each row execute function touch_tier();
create trigger tier_limits_touch after insert or update or delete on tier_limits for each row execute function touch_tier();

-- Watching: people keep watchlists of channels, videos and saved full-text queries; one append-only
-- log of changes (status changes, metadata versions, new uploads of watched channels, new matches of
-- saved queries) is what everything pushed to them is a view of: each watchlist's stream of events,
-- its Atom feed and its webhooks.

-- Allowances: how many of a thing a user may hold at once (not per window, unlike limits), per tier.
create table allowance_definitions (
  name text primary key check (name ~ '^[a-z][A-Za-z]+$'),
  description text not null,
  unit text not null
);

-- max_count null means unlimited; 0 means none.
create table tier_allowances (
  tier text not null references tiers (name) on update cascade on delete cascade,
  allowance_name text not null references allowance_definitions (name) on update cascade on delete cascade,
  max_count integer check (max_count >= 0),
  primary key (tier, allowance_name)
);

insert into feature_definitions (name, description) values
  ('watchlists', 'Watch channels, videos and saved queries; be told of changes by feed, stream and webhook');
insert into tier_features (tier, feature, enabled)
select name, 'watchlists', name <> 'anonymous' from tiers;

insert into allowance_definitions (name, description, unit) values
  ('watchlists', 'Watchlists a user keeps', 'watchlists'),
  ('watchlistItems', 'Channels, videos and saved queries watched, over all of a user''s watchlists', 'watched items'),
  ('webhooks', 'Webhook endpoints, over all of a user''s watchlists', 'webhook endpoints');

insert into tier_allowances (tier, allowance_name, max_count)
select t.name, a.name, (case t.name
    when 'anonymous' then jsonb_build_object('watchlists', 0, 'watchlistItems', 0, 'webhooks', 0)
    when 'registered' then jsonb_build_object('watchlists', 3, 'watchlistItems', 50, 'webhooks', 1)
    when 'plus' then jsonb_build_object('watchlists', 20, 'watchlistItems', 1000, 'webhooks', 5)
    else jsonb_build_object('watchlists', 100, 'watchlistItems', 10000, 'webhooks', 20)
  end ->> a.name)::integer
from tiers t cross join allowance_definitions a;

-- A saved full-text query, kept once however many watchlists hold it: its re-runs after crawls and
-- imports are shared. `query` is the normalised input of GET /api/fts (q, in and the filters).
create table saved_queries (
  id bigint generated always as identity primary key,
  query jsonb not null unique,
  created_at timestamptz not null default now(),
  -- Null until the first run, which records the matches of that moment as the baseline: only later ones are news.
  last_run_at timestamptz
);

create table saved_query_matches (
  saved_query_id bigint not null references saved_queries (id) on delete cascade,
  video_id text not null references videos (video_id) on delete cascade,
  matched_at timestamptz not null default now(),
  primary key (saved_query_id, video_id)
);

create table watchlists (
  id uuid primary key default gen_random_uuid(),
  owner_id uuid not null references users (id) on delete cascade,
  name text not null check (char_length(name) between 1 and 100),
  -- The private feed's URL is derived from this number and the server key (core/secrets/serverKey.ts):
  -- rotating it bumps the number, so the old URL stops answering at once and no token is stored.
  feed_version integer not null default 1 check (feed_version > 0),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index watchlists_owner on watchlists (owner_id, created_at, id);

create table watchlist_items (
  id uuid primary key default gen_random_uuid(),
  watchlist_id uuid not null references watchlists (id) on delete cascade,
  kind text not null check (kind in ('channel', 'video', 'query')),
  -- No foreign key on channel_id: a channel may be watched before its first crawl has stored it.
  channel_id text check (channel_id ~ '^UC[A-Za-z0-9_-]{22}$'),
  video_id text references videos (video_id),
  saved_query_id bigint references saved_queries (id),
  created_at timestamptz not null default now(),
  check ((kind = 'channel') = (channel_id is not null)
     and (kind = 'video') = (video_id is not null)
     and (kind = 'query') = (saved_query_id is not null))
);
create unique index watchlist_items_one_each on watchlist_items
  (watchlist_id, kind, coalesce(channel_id, video_id, saved_query_id::text));
create index watchlist_items_channel on watchlist_items (channel_id) where channel_id is not null;
create index watchlist_items_video on watchlist_items (video_id) where video_id is not null;
create index watchlist_items_query on watchlist_items (saved_query_id) where saved_query_id is not null;

-- A saved query no watchlist holds any more is forgotten with its matches.
create function forget_unwatched_query() returns trigger language plpgsql as $$
begin
  delete from saved_queries q where q.id in (select distinct saved_query_id from old_rows where saved_query_id is not null)
    and not exists (select 1 from watchlist_items i where i.saved_query_id = q.id);
  return null;
end $$;
create trigger watchlist_items_forget_query after delete on watchlist_items
  referencing old table as old_rows for each statement execute function forget_unwatched_query();

-- Metadata versions, as Yark keeps them: the values a video had until a source that saw it as well as
-- before (the same metadata rank) saw them change. A better source filling in or correcting what a
-- worse one said is not a change of the video, so it makes no version.
create table video_versions (
  id bigint generated always as identity primary key,
  video_id text not null references videos (video_id),
  title text,
  description text,
  tags text[] not null,
  thumbnail_url text,
  -- When these values stopped being current.
  replaced_at timestamptz not null default now()
);
create index video_versions_video on video_versions (video_id, id);

-- The change log. Append-only, like the status history: what was news, when, and the evidence that decided it.
create table changes (
  id bigint generated always as identity primary key,
  kind text not null check (kind in
    ('video.deleted', 'video.reuploaded', 'video.restored', 'video.metadata_changed', 'channel.video_added', 'query.new_match')),
  video_id text not null references videos (video_id),
  channel_id text not null,
  saved_query_id bigint references saved_queries (id) on delete set null,
  status_history_id bigint references video_status_history (id),
  version_id bigint references video_versions (id),
  -- When it happened, as observed (a status change's observation time), and when it was logged.
  happened_at timestamptz not null,
  recorded_at timestamptz not null default now(),
  -- What a reader needs without another query: title, reason, claimant, previous status, evidence, the fields changed.
  details jsonb not null default '{}'
);
create index changes_video on changes (video_id, id);
create index changes_channel_deletions on changes (channel_id, id) where kind in ('video.deleted', 'video.reuploaded');
create index changes_deletions on changes (id) where kind in ('video.deleted', 'video.reuploaded');

create function refuse_change_log_edit() returns trigger language plpgsql as $$
begin
  raise exception '% is append-only: % is refused', tg_table_name, tg_op using errcode = 'insufficient_privilege';
end $$;
create trigger changes_append_only before update or delete on changes
  for each row execute function refuse_change_log_edit();
create trigger video_versions_append_only before update or delete on video_versions
  for each row execute function refuse_change_log_edit();

-- Each change is fanned out to the watchlists that watch it (their event streams, their webhooks) by
-- a fan_out_changes job; the queue row is the change's promise to be fanned out exactly once, and the
-- job key joins a burst of changes into one job.
create table change_fanout_queue (
  change_id bigint primary key references changes (id)
);

create function queue_change_fanout() returns trigger language plpgsql as $$
begin
  insert into change_fanout_queue (change_id) select id from new_rows;
  perform graphile_worker.add_job('fan_out_changes', '{}'::json, job_key := 'fan_out_changes', job_key_mode := 'preserve_run_at', priority := 1);
  return null;
end $$;
create trigger changes_fan_out after insert on changes
  referencing new table as new_rows for each statement execute function queue_change_fanout();

-- Confirmed status changes become changes. A video's first status (stored, or first learned while it
-- was still 'checking') is not a change: a backfill of long-gone videos is not news.
create function log_status_change() returns trigger language plpgsql as $$
declare
  kind text;
  v record;
begin
  if new.previous_status is null or new.previous_status = 'checking' then
    return null;
  end if;
  kind := case
    when new.status = 'deleted' then 'video.deleted'
    when new.status = 're-uploaded' then 'video.reuploaded'
    when new.status = 'live' and new.previous_status in ('deleted', 're-uploaded') then 'video.restored'
  end;
  if kind is null then
    return null;
  end if;
  select channel_id, title into v from videos where video_id = new.video_id;
  insert into changes (kind, video_id, channel_id, status_history_id, happened_at, details)
  values (kind, new.video_id, v.channel_id, new.id, new.observed_at, jsonb_strip_nulls(jsonb_build_object(
    'title', v.title, 'status', new.status, 'previousStatus', new.previous_status, 'reason', new.reason,
    'claimant', new.claimant, 'source', new.source, 'evidence', new.evidence, 'linkedVideoId', new.linked_video_id)));
  return null;
end $$;
create trigger video_status_history_changes after insert on video_status_history
  for each row execute function log_status_change();

-- A new title, description, tag list or thumbnail seen by a source as good as the one before: the
-- old values become a version, and the change is logged with what changed.
create function log_metadata_change() returns trigger language plpgsql as $$
declare
  changed text[] := '{}';
  version_id bigint;
begin
  if new.metadata_rank <> old.metadata_rank then
    return null;
  end if;
  if old.title is not null and new.title is distinct from old.title then changed := changed || 'title'::text; end if;
  if old.description is not null and new.description is distinct from old.description then changed := changed || 'description'::text; end if;
  if cardinality(old.tags) > 0 and new.tags is distinct from old.tags then changed := changed || 'tags'::text; end if;
  if old.thumbnail_url is not null and new.thumbnail_url is distinct from old.thumbnail_url then changed := changed || 'thumbnail'::text; end if;
  if cardinality(changed) = 0 then
    return null;
  end if;
  insert into video_versions (video_id, title, description, tags, thumbnail_url)
  values (old.video_id, old.title, old.description, old.tags, old.thumbnail_url) returning id into version_id;
  insert into changes (kind, video_id, channel_id, version_id, happened_at, details)
  values ('video.metadata_changed', new.video_id, new.channel_id, version_id, now(),
    jsonb_strip_nulls(jsonb_build_object('title', new.title, 'changed', to_jsonb(changed))) || jsonb_build_object(
      'before', jsonb_build_object('title', old.title, 'tags', to_jsonb(old.tags), 'thumbnailUrl', old.thumbnail_url)
        || case when 'description' = any(changed) then jsonb_build_object('description', old.description) else '{}' end,
      'after', jsonb_build_object('title', new.title, 'tags', to_jsonb(new.tags), 'thumbnailUrl', new.thumbnail_url)
        || case when 'description' = any(changed) then jsonb_build_object('description', new.description) else '{}' end));
  return null;
end $$;
create trigger videos_metadata_versions after update of title, description, tags, thumbnail_url on videos
  for each row when (old.title is distinct from new.title or old.description is distinct from new.description
    or old.tags is distinct from new.tags or old.thumbnail_url is distinct from new.thumbnail_url)
  execute function log_metadata_change();

-- A video first stored for a watched channel, uploaded on or after the day it was first watched, is a
-- new upload. Older videos a crawl finds later (unlisted once, or beyond the listing's reach) are the
-- channel's past, not news.
create function log_new_upload() returns trigger language plpgsql as $$
declare
  watched_since timestamptz;
begin
  select min(created_at) into watched_since from watchlist_items where channel_id = new.channel_id;
  if watched_since is null or new.upload_date is null or new.upload_date < (watched_since - interval '1 day')::date then
    return null;
  end if;
  insert into changes (kind, video_id, channel_id, happened_at, details)
  values ('channel.video_added', new.video_id, new.channel_id, new.first_seen_at,
    jsonb_strip_nulls(jsonb_build_object('title', new.title, 'uploadDate', new.upload_date)));
  return null;
end $$;
create trigger videos_new_uploads after insert on videos for each row execute function log_new_upload();

-- Webhooks: a watchlist's endpoints, each signing with its own secret (kept encrypted with the server
-- key; shown to the owner once), and every delivery and attempt, so the owner sees what happened.
create table webhook_endpoints (
  id uuid primary key default gen_random_uuid(),
  watchlist_id uuid not null references watchlists (id) on delete cascade,
  url text not null check (char_length(url) <= 2000 and url ~ '^https?://'),
  secret_sealed bytea not null,
  created_at timestamptz not null default now(),
  -- Set when deliveries have failed for three days (or by the owner); the reason is shown to them.
  disabled_at timestamptz,
  disabled_reason text,
  unique (watchlist_id, url)
);

create table webhook_deliveries (
  id bigint generated always as identity primary key,
  endpoint_id uuid not null references webhook_endpoints (id) on delete cascade,
  -- Null for a test event.
  change_id bigint references changes (id),
  -- The webhook-id header: the same on every attempt, so a receiver can drop repeats.
  message_id text not null unique,
  event_type text not null,
  created_at timestamptz not null default now(),
  state text not null default 'pending' check (state in ('pending', 'delivered', 'failed', 'cancelled')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  finished_at timestamptz,
  unique (endpoint_id, change_id)
);
create index webhook_deliveries_due on webhook_deliveries (endpoint_id, next_attempt_at, id) where state = 'pending';

create table webhook_attempts (
  id bigint generated always as identity primary key,
  delivery_id bigint not null references webhook_deliveries (id) on delete cascade,
  attempt integer not null,
  attempted_at timestamptz not null default now(),
  duration_ms integer not null,
  http_status integer,
  error text
);
create index webhook_attempts_delivery on webhook_attempts (delivery_id, id);

-- A watchlist's event stream (its fanned-out changes, payload = the change) is read newest change
-- first, a page before a change id at a time, by GET /api/watchlists/:id/changes and the private feed.
create index events_watchlist_changes on events (stream, ((payload->>'id')::bigint)) where stream like 'watchlist:%';

-- A watchlist's events (its changes, in the order they were fanned out) go with it.
create function forget_watchlist_stream() returns trigger language plpgsql as $$
begin
  delete from events where stream in (select 'watchlist:' || id from old_rows);
  delete from event_streams where stream in (select 'watchlist:' || id from old_rows);
  return null;
end $$;
create trigger watchlists_forget_stream after delete on watchlists
  referencing old table as old_rows for each statement execute function forget_watchlist_stream();

-- Proof that every process uses the same server key: its fingerprint, written by the first process.
create table server_key (
  only_row boolean primary key default true check (only_row),
  fingerprint text not null,
  created_at timestamptz not null default now()
);

-- Watched videos (single-video items and the videos of watched channels) are checked at least daily.
-- check_status keeps it so when it sets the next check (core/status/recordObservations.ts); this
-- trigger pulls the next check of what has just become watched in to its last check + 1 day, so the
-- daily rhythm starts at once, not after a recheck window of weeks. Never later than it was: a
-- suspected deletion's confirmation probe, and a check leased within the hour, keep their time.
create function check_watched_daily() returns trigger language plpgsql as $$
begin
  update video_checks k set next_check_at = coalesce(k.checked_at, now()) + interval '1 day'
  from (
    select video_id from new_items where video_id is not null
    union
    select v.video_id from videos v where v.channel_id in (select channel_id from new_items where channel_id is not null)
  ) w
  where k.video_id = w.video_id and k.suspected_at is null
    and k.next_check_at > coalesce(k.checked_at, now()) + interval '1 day'
    and k.next_check_at > now() + interval '1 hour';
  return null;
end $$;
create trigger watchlist_items_check_daily after insert on watchlist_items
  referencing new table as new_items for each statement execute function check_watched_daily();

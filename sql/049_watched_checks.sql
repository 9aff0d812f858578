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

-- The metadata trigger of 045 appended each changed field as `changed || 'title'`: an untyped literal
-- beside a text[] is read as an array literal, so every same-rank metadata change failed its statement
-- (a crawl's or an import's batch) with "malformed array literal". The same function, appending text.
create or replace function log_metadata_change() returns trigger language plpgsql as $$
declare
  changed text[] := '{}';
  version_id bigint;
begin
  if new.metadata_rank <> old.metadata_rank then
    return null;
  end if;
  if old.title is not null and new.title is distinct from old.title then changed := array_append(changed, 'title'); end if;
  if old.description is not null and new.description is distinct from old.description then changed := array_append(changed, 'description'); end if;
  if cardinality(old.tags) > 0 and new.tags is distinct from old.tags then changed := array_append(changed, 'tags'); end if;
  if old.thumbnail_url is not null and new.thumbnail_url is distinct from old.thumbnail_url then changed := array_append(changed, 'thumbnail'); end if;
  if cardinality(changed) = 0 then
    return null;
  end if;
  insert into video_versions (video_id, title, description, tags, thumbnail_url)
  values (old.video_id, old.title, old.description, old.tags, old.thumbnail_url) returning id into version_id;
  insert into changes (kind, video_id, channel_id, version_id, happened_at, details)
  values ('video.metadata_changed', new.video_id, new.channel_id, version_id, now(), jsonb_strip_nulls(jsonb_build_object(
    'title', new.title, 'changed', to_jsonb(changed),
    'before', jsonb_build_object('title', old.title, 'tags', to_jsonb(old.tags), 'thumbnailUrl', old.thumbnail_url,
      'description', case when 'description' = any(changed) then old.description end),
    'after', jsonb_build_object('title', new.title, 'tags', to_jsonb(new.tags), 'thumbnailUrl', new.thumbnail_url,
      'description', case when 'description' = any(changed) then new.description end))));
  return null;
end $$;

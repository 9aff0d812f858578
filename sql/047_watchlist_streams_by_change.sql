-- A watchlist's event stream (its fanned-out changes, payload = the change) is read newest change
-- first, a page before a change id at a time, by GET /api/watchlists/:id/changes and the private feed.
create index events_watchlist_changes on events (stream, ((payload->>'id')::bigint)) where stream like 'watchlist:%';

-- log_metadata_change of 045, corrected: `changed || 'title'` read the literal as an array (so every
-- metadata change failed the write that made it), and jsonb_strip_nulls also dropped the null fields of
-- the before and after values (a video without a thumbnail), which every view of a change shows.
create or replace function log_metadata_change() returns trigger language plpgsql as $$
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

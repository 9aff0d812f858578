-- Filters join the full-text GIN index (btree_gin), so a common word under a narrow filter (deleted
-- videos, videos with a summary) intersects posting lists in the index instead of reading every
-- matching row from the heap to test its status.
create extension if not exists btree_gin;

-- A column, not an expression, so the planner has statistics for it: search plans follow its estimates.
alter table videos add column has_video boolean not null generated always as (coalesce(video_file_url, '') <> '') stored;

-- Generated columns are null in a BEFORE trigger's NEW: the no-op test leaves them out.
create or replace function skip_unchanged_update() returns trigger language plpgsql as $$
begin
  if to_jsonb(new) - 'fts' - 'has_video' = to_jsonb(old) - 'fts' - 'has_video' then
    return null;
  end if;
  new.updated_at := now();
  return new;
end $$;

drop index videos_fts;
create index videos_fts on videos using gin (fts, status, has_subtitles, has_summary, has_video)
  with (fastupdate = on, gin_pending_list_limit = 4096);

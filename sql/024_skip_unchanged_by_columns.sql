-- An update that changes nothing is skipped by comparing the columns themselves. Turning both rows into
-- jsonb, the whole search document (fts) included before it was left out, cost 39 µs a video, paid again
-- for every unchanged video of every re-crawl. Generated columns are not computed yet in a BEFORE
-- trigger (null in NEW), so the old row's are left out of the comparison.
create function skip_unchanged_video_update() returns trigger language plpgsql as $$
declare
  previous videos := old;
begin
  previous.fts := null;
  previous.has_video := null;
  if new is not distinct from previous then
    return null;
  end if;
  new.updated_at := now();
  return new;
end $$;

drop trigger videos_skip_unchanged on videos;
create trigger videos_skip_unchanged before update on videos for each row execute function skip_unchanged_video_update();

-- Channels have no generated columns: the plain comparison of 005 again.
create or replace function skip_unchanged_update() returns trigger language plpgsql as $$
begin
  if new is not distinct from old then
    return null;
  end if;
  new.updated_at := now();
  return new;
end $$;

-- Keeping the Typesense index in step with videos. Statement-level triggers note the ids of changed
-- videos in search_sync_queue, in the writing transaction, and wake one batched index_videos job; they
-- read the changed rows from transition tables, so a 50,000-row upsert costs one queue insert, not
-- 50,000 trigger calls. Nothing is queued while sync is off (no Typesense configured).

create table search_sync (
  id boolean primary key default true check (id),
  -- Set by each worker at start: on when it has TYPESENSE_URL.
  enabled boolean not null default false,
  -- While `afterimage reindex` fills a new collection the queue is left alone, so changes made meanwhile
  -- reach the new collection once the alias points at it. Extended by the reindex as it goes; a crashed
  -- reindex stops pausing when it runs out.
  reindexing_until timestamptz
);
insert into search_sync default values;

-- No foreign key: a deleted video stays queued until its document is deleted too.
create table search_sync_queue (
  video_id text primary key,
  queued_at timestamptz not null default now()
);

-- One job for many changes: the job key joins them, and preserve_run_at keeps the first run time.
create function queue_index_videos() returns void language plpgsql as $$
begin
  perform graphile_worker.add_job('index_videos', '{}'::json, job_key := 'index_videos',
    run_at := now() + interval '1 second', job_key_mode := 'preserve_run_at');
end $$;

create function queue_search_sync() returns trigger language plpgsql as $$
declare
  changed integer;
begin
  if not coalesce((select enabled from search_sync), false) then
    return null;
  end if;
  if tg_op = 'INSERT' then
    with ids as (select video_id from new_rows),
      queued as (insert into search_sync_queue (video_id) select video_id from ids on conflict do nothing)
    select count(*) into changed from ids;
  elsif tg_op = 'DELETE' then
    with ids as (select video_id from old_rows),
      queued as (insert into search_sync_queue (video_id) select video_id from ids on conflict do nothing)
    select count(*) into changed from ids;
  else
    -- Only what the search documents hold: searched text, filters, sort keys.
    with ids as (
        select coalesce(n.video_id, o.video_id) as video_id
        from new_rows n full join old_rows o on o.video_id = n.video_id
        where (n.title, n.description, n.tags, n.status, n.video_file_url, n.has_subtitles, n.has_summary,
               n.channel_id, n.language, n.upload_date, n.duration_seconds, n.view_count)
          is distinct from (o.title, o.description, o.tags, o.status, o.video_file_url, o.has_subtitles, o.has_summary,
               o.channel_id, o.language, o.upload_date, o.duration_seconds, o.view_count)),
      queued as (insert into search_sync_queue (video_id) select video_id from ids on conflict do nothing)
    select count(*) into changed from ids;
  end if;
  -- Also when every id was queued already: the job that would have taken them may have given up.
  if changed > 0 then
    perform queue_index_videos();
  end if;
  return null;
end $$;

-- Transition tables allow one event per trigger.
create trigger videos_search_sync_insert after insert on videos
  referencing new table as new_rows for each statement execute function queue_search_sync();
create trigger videos_search_sync_update after update on videos
  referencing old table as old_rows new table as new_rows for each statement execute function queue_search_sync();
create trigger videos_search_sync_delete after delete on videos
  referencing old table as old_rows for each statement execute function queue_search_sync();

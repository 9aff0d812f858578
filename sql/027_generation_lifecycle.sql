-- One lifecycle for every generation (summaries, stenograms): the same statuses, the same refund
-- columns, and progress kept as state on the row (crawls too) instead of an event per percent.

-- Statuses: generating → generated | failed for both kinds. A summary's 'ready' becomes 'generated'.
-- The counts trigger compares statuses, so it is off while the rows move and rewritten before it is on again.
do $$
declare c record;
begin
  for c in select conname from pg_constraint where conrelid = 'summaries'::regclass and contype = 'c'
    and pg_get_constraintdef(oid) like '%ready%' loop
    execute format('alter table summaries drop constraint %I', c.conname);
  end loop;
end $$;
alter table summaries disable trigger summaries_counts;
update summaries set status = 'generated' where status = 'ready';
alter table summaries enable trigger summaries_counts;
alter table summaries add constraint summaries_status check (status in ('generating', 'generated', 'failed'));
alter table summaries add constraint summaries_generated_complete check (status <> 'generated' or (title is not null and tldr is not null
  and key_points is not null and detailed_summary is not null and language is not null and llm_model is not null and generated_at is not null));

create or replace function maintain_summary_counts() returns trigger language plpgsql as $$
begin
  if tg_op in ('UPDATE', 'DELETE') and old.status = 'generated' and not old.private then
    update summary_facets f set count = f.count - 1
    from summary_facet_rows(old) r
    where f.facet = r.facet and f.language = r.language and f.value = r.value;
    delete from summary_facets where count = 0;
  end if;
  if tg_op in ('INSERT', 'UPDATE') and new.status = 'generated' and not new.private then
    insert into summary_facets as f (facet, language, value, count)
    select distinct r.facet, r.language, r.value, 1 from summary_facet_rows(new) r
    order by 1, 2, 3
    on conflict (facet, language, value) do update set count = f.count + 1;
  end if;
  -- videos.has_summary: true exactly while the video's public summary is generated.
  update videos v set has_summary = exists (select 1 from summaries s where s.video_id = v.video_id and s.status = 'generated' and not s.private)
  where v.video_id in (select old.video_id where tg_op <> 'INSERT' union select new.video_id where tg_op <> 'DELETE')
    and v.has_summary is distinct from exists (select 1 from summaries s where s.video_id = v.video_id and s.status = 'generated' and not s.private);
  return null;
end $$;

drop index summaries_public_latest, summaries_public_tags, summaries_public_language, summaries_public_channel;
create index summaries_public_latest on summaries (generated_at desc, id desc) where status = 'generated' and not private;
create index summaries_public_tags on summaries using gin (tags, language) where status = 'generated' and not private;
create index summaries_public_language on summaries (language, generated_at desc, id desc) where status = 'generated' and not private;
create index summaries_public_channel on summaries (channel_id, generated_at desc, id desc) where status = 'generated' and not private;

-- Refunds for both kinds: whose counter was charged (a key's or a user's, as the limit counts) and the
-- quota bucket it went into (null once refunded). A stenogram's was always its key's.
alter table summaries add column charged_subject uuid, add column charged_window_start timestamptz;
alter table stenograms add column charged_subject uuid;
update stenograms set charged_subject = api_key_id where charged_window_start is not null;
alter table stenograms drop column api_key_id;

-- The latest progress ({stage, percent, …} as its progress event carries it), written a few times a second
-- at most; the event log keeps only the milestones (a new stage) and the final event.
alter table summaries add column progress jsonb;
alter table stenograms add column progress jsonb;
alter table crawls add column progress jsonb;

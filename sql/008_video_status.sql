-- Video status: why a video is gone, since when, the history of every change (kept by triggers, so
-- no writer can change a status without a history row), the recheck schedule and re-upload links.

create extension if not exists pg_trgm;

alter table videos
  add column status_reason text check (status_reason in
    ('private', 'removed_by_uploader', 'terms_of_service', 'copyright', 'account_terminated', 'blocked_in_region', 'unknown')),
  add column status_claimant text,
  add column status_since timestamptz not null default now(),
  -- Where the observation that set the current status came from, and what it said: the history trigger copies them.
  add column status_source text,
  add column status_evidence text,
  add column status_checked_at timestamptz,
  -- A first probe that found the video gone: recorded only when a later probe confirms it.
  add column suspected_reason text,
  add column suspected_claimant text,
  add column suspected_evidence text,
  add column suspected_at timestamptz,
  -- Probes since the video was confirmed gone: its rechecks come further apart each time.
  add column checks_while_gone integer not null default 0,
  add column next_check_at timestamptz,
  add column reuploaded_as text references videos (video_id),
  add column reupload_of text references videos (video_id),
  add column reupload_score real,
  add column reupload_evidence jsonb;

-- A live video has no reason; a gone one always has one.
update videos set status_reason = 'unknown' where status in ('deleted', 're-uploaded');
alter table videos add constraint videos_reason_matches_status
  check ((status in ('live', 'checking')) = (status_reason is null));
alter table videos add constraint videos_reupload_link
  check ((status = 're-uploaded') = (reuploaded_as is not null));
update videos set next_check_at = now() where next_check_at is null;
alter table videos alter column next_check_at set default now();
alter table videos alter column next_check_at set not null;

create index videos_next_check on videos (next_check_at);
create index videos_title_trgm on videos using gin (lower(title) gin_trgm_ops);

create table video_status_history (
  id bigint generated always as identity primary key,
  video_id text not null references videos (video_id),
  status text not null,
  previous_status text,
  reason text,
  claimant text,
  observed_at timestamptz not null default now(),
  source text,
  evidence text,
  linked_video_id text
);
create index video_status_history_video on video_status_history (video_id, id);

create function stamp_status_since() returns trigger language plpgsql as $$
begin
  if new.status is distinct from old.status or new.status_reason is distinct from old.status_reason then
    new.status_since := now();
  end if;
  return new;
end $$;
-- Runs after videos_skip_unchanged (triggers of one event fire in name order).
create trigger videos_status_since before update on videos for each row execute function stamp_status_since();

create function record_status_history() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' or new.status is distinct from old.status or new.status_reason is distinct from old.status_reason then
    insert into video_status_history (video_id, status, previous_status, reason, claimant, source, evidence, linked_video_id)
    values (new.video_id, new.status, case when tg_op = 'UPDATE' then old.status end, new.status_reason, new.status_claimant,
      new.status_source, new.status_evidence, coalesce(new.reuploaded_as, new.reupload_of));
  end if;
  return null;
end $$;
create trigger videos_status_history after insert or update of status, status_reason on videos
  for each row execute function record_status_history();

-- The history of the videos stored before status tracking: one row each, as they stand.
insert into video_status_history (video_id, status, reason, observed_at, source)
select video_id, status, status_reason, first_seen_at, 'migration' from videos;

create function refuse_history_change() returns trigger language plpgsql as $$
begin
  raise exception 'video_status_history is append-only: % is refused', tg_op using errcode = 'insufficient_privilege';
end $$;
create trigger video_status_history_append_only before update or delete on video_status_history
  for each row execute function refuse_history_change();

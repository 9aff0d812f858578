-- The recheck schedule moves out of videos into a narrow table of its own. Every status check rewrote
-- its video's row, and a rewritten row is a new entry in every index of videos (the full-text GIN
-- index, the sort indexes, the title GiST index): the schedule's churn cost four times what the checks
-- themselves did. Now a check writes videos only when the status really changes.

create table video_checks (
  video_id text primary key references videos (video_id) on delete cascade,
  next_check_at timestamptz not null default now(),
  -- When a probe last answered definitely (not a 429, a bot check or a network error).
  checked_at timestamptz,
  -- Probes since the video was confirmed gone: its rechecks come further apart each time.
  checks_while_gone integer not null default 0 check (checks_while_gone >= 0),
  -- A first probe that found the video gone: recorded as deleted only when a later probe confirms it.
  suspected_reason text,
  suspected_claimant text,
  suspected_evidence text,
  suspected_at timestamptz
) with (fillfactor = 90);

insert into video_checks (video_id, next_check_at, checked_at, checks_while_gone, suspected_reason, suspected_claimant, suspected_evidence, suspected_at)
select video_id, next_check_at, status_checked_at, checks_while_gone, suspected_reason, suspected_claimant, suspected_evidence, suspected_at from videos;

create index video_checks_due on video_checks (next_check_at);

alter table videos
  drop column next_check_at,
  drop column status_checked_at,
  drop column checks_while_gone,
  drop column suspected_reason,
  drop column suspected_claimant,
  drop column suspected_evidence,
  drop column suspected_at;

-- Every video is on the schedule from its first insert, whoever writes it.
create function schedule_new_videos() returns trigger language plpgsql as $$
begin
  insert into video_checks (video_id) select video_id from inserted_videos on conflict do nothing;
  return null;
end $$;
create trigger videos_schedule_checks after insert on videos referencing new table as inserted_videos
  for each statement execute function schedule_new_videos();

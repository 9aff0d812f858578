-- Status truth: every observation of a video's availability, from a probe or a source (a crawl's
-- Data API listing, an archive's download time, a Wayback capture), carries the time it was made.
-- The newest observation that agrees with the current status is its confirmation; an older one
-- never overrides a newer one. The confirmation changes at every crawl, so it lives in the narrow
-- video_checks table (see 012), not in videos.

alter table video_checks
  add column confirmed_at timestamptz,
  -- The probe or source of that observation: youtube_api, watch_page, yt_dlp, archive, wayback.
  add column confirmed_by text;

-- Stored videos: a probe's last definite answer, else when the status was set, by the last observer the history names.
update video_checks k set
  confirmed_at = coalesce(k.checked_at, v.status_since),
  confirmed_by = (
    select h.source from video_status_history h
    where h.video_id = v.video_id and h.source in ('youtube_api', 'watch_page', 'yt_dlp', 'archive', 'wayback')
    order by h.id desc limit 1)
from videos v
where v.video_id = k.video_id and v.status <> 'checking';

-- A writer that knows when a change was observed (an archive's download time) sets status_since
-- itself; any other change of status is stamped now, as before.
create or replace function stamp_status_since() returns trigger language plpgsql as $$
begin
  if (new.status is distinct from old.status or new.status_reason is distinct from old.status_reason)
      and new.status_since is not distinct from old.status_since then
    new.status_since := now();
  end if;
  return new;
end $$;

-- History rows take the time of the observation (status_since), not the time of the write.
create or replace function record_status_history() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' or new.status is distinct from old.status or new.status_reason is distinct from old.status_reason then
    insert into video_status_history (video_id, status, previous_status, reason, claimant, observed_at, source, evidence, linked_video_id)
    values (new.video_id, new.status, case when tg_op = 'UPDATE' then old.status end, new.status_reason, new.status_claimant,
      new.status_since, new.status_source, new.status_evidence, coalesce(new.reuploaded_as, new.reupload_of));
  end if;
  return null;
end $$;

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

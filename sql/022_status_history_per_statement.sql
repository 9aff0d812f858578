-- A video's history rows are written once per statement instead of once per row: a crawl or an import
-- inserts thousands of videos in one statement, and the per-row trigger (a PL/pgSQL call and an INSERT
-- each) was 17 µs of every video's ingest; now it is one INSERT … SELECT over the statement's rows.
-- The UPDATE trigger sees every updated row (a trigger with transition tables cannot name columns) and
-- keeps those whose status or reason changed, pairing old and new rows by video id, which never changes.
drop trigger videos_status_history on videos;
drop function record_status_history();

create function record_inserted_status_history() returns trigger language plpgsql as $$
begin
  insert into video_status_history (video_id, status, previous_status, reason, claimant, observed_at, source, evidence, linked_video_id)
  select video_id, status, null, status_reason, status_claimant, status_since, status_source, status_evidence,
    coalesce(reuploaded_as, reupload_of)
  from inserted_rows;
  return null;
end $$;

create function record_updated_status_history() returns trigger language plpgsql as $$
begin
  insert into video_status_history (video_id, status, previous_status, reason, claimant, observed_at, source, evidence, linked_video_id)
  select n.video_id, n.status, o.status, n.status_reason, n.status_claimant, n.status_since, n.status_source, n.status_evidence,
    coalesce(n.reuploaded_as, n.reupload_of)
  from updated_rows n join previous_rows o using (video_id)
  where (n.status, n.status_reason) is distinct from (o.status, o.status_reason);
  return null;
end $$;

create trigger videos_status_history_insert after insert on videos referencing new table as inserted_rows
  for each statement execute function record_inserted_status_history();
create trigger videos_status_history_update after update on videos referencing old table as previous_rows new table as updated_rows
  for each statement execute function record_updated_status_history();

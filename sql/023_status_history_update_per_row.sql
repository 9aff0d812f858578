-- A video's status changes are recorded by a row trigger again, fired only for the rows whose status or
-- reason changed (its WHEN is checked without calling the function). The statement trigger of 022 joined
-- the statement's old and new rows, and PL/pgSQL keeps the plan of that join for the session: planned
-- for a statement of no or few rows (a nested loop), it made a later update of 5,000 rows take 15 s.
-- Inserts keep their statement trigger (022): it reads one transition table and joins nothing.
drop trigger videos_status_history_update on videos;

create or replace function record_updated_status_history() returns trigger language plpgsql as $$
begin
  insert into video_status_history (video_id, status, previous_status, reason, claimant, observed_at, source, evidence, linked_video_id)
  values (new.video_id, new.status, old.status, new.status_reason, new.status_claimant, new.status_since, new.status_source, new.status_evidence,
    coalesce(new.reuploaded_as, new.reupload_of));
  return null;
end $$;

create trigger videos_status_history_update after update on videos
  for each row when ((old.status, old.status_reason) is distinct from (new.status, new.status_reason))
  execute function record_updated_status_history();

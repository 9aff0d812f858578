-- One fan-out at a time. A change logged while a fan_out_changes job runs queues a second job (the
-- running one's key is taken from it), and two fan-outs appending to the same watchlists' streams
-- wait on each other's stream rows until one is cancelled by the statement timeout. In one named
-- queue, graphile-worker runs the next only once the running one has ended.
create or replace function queue_change_fanout() returns trigger language plpgsql as $$
begin
  insert into change_fanout_queue (change_id) select id from new_rows;
  perform graphile_worker.add_job('fan_out_changes', '{}'::json, queue_name := 'fan_out_changes',
    job_key := 'fan_out_changes', job_key_mode := 'preserve_run_at', priority := 1);
  return null;
end $$;

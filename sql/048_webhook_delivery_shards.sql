-- Webhook deliveries are sent by one job per shard of endpoints (key deliver_webhooks:<shard>), not one
-- per endpoint. A burst of changes watched through thousands of endpoints then queues sixteen jobs, not
-- thousands, and the fan-out's transaction holds sixteen job rows, not one per endpoint: each of those
-- was a job whose end waited for the fan-out to commit. An endpoint's order (head of line) is kept in
-- its deliveries: while a failed delivery waits for its retry, the endpoint's later ones wait too.
alter table webhook_endpoints add column delivery_shard smallint not null
  generated always as (hashtext(id::text) & 15) stored;
create index webhook_endpoints_delivery_shard on webhook_endpoints (delivery_shard) where disabled_at is null;

-- Jobs queued per endpoint before this migration give way to their shards' jobs.
do $$
begin
  if to_regnamespace('graphile_worker') is not null then
    perform graphile_worker.remove_job(key) from graphile_worker.jobs
      where task_identifier = 'deliver_webhooks' and key not similar to 'deliver_webhooks:[0-9]+';
    perform graphile_worker.add_job('deliver_webhooks', json_build_object('shard', shard), job_key := 'deliver_webhooks:' || shard)
      from (select distinct e.delivery_shard as shard from webhook_endpoints e
            join webhook_deliveries d on d.endpoint_id = e.id and d.state = 'pending') shards;
  end if;
end $$;

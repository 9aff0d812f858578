-- Crawl step jobs carry their crawl id as a string (core/jobs/registry.ts); the first step of a
-- crawl used to carry a number. Rewrite the jobs still waiting, so a crawl queued before an upgrade
-- is not refused by the new payload check and left running for ever. graphile-worker's schema is
-- created after these migrations on a new database, where there is nothing to rewrite.
do $$
begin
  if to_regclass('graphile_worker._private_jobs') is not null then
    execute $rewrite$
      update graphile_worker._private_jobs j
      set payload = jsonb_set(j.payload::jsonb, '{crawlId}', to_jsonb(j.payload->>'crawlId'))::json
      from graphile_worker._private_tasks t
      where t.id = j.task_id and t.identifier = 'crawl_channel' and json_typeof(j.payload->'crawlId') = 'number'
    $rewrite$;
  end if;
end $$;

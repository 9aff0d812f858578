-- Webhooks: when an endpoint's current run of failures began (null while its last attempt succeeded),
-- so one that has failed for three days is disabled without reading its attempts; and its deliveries
-- newest first, as the delivery log and the endpoint list read them.
alter table webhook_endpoints add column failing_since timestamptz;
create index webhook_deliveries_endpoint on webhook_deliveries (endpoint_id, id);

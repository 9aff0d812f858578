-- Evidence of more than a status: the Wayback capture a kept thumbnail was read from is kept as an
-- observation too ('thumbnail'), with the capture's timestamp and CDX digest.
alter table evidence_observations drop constraint evidence_observations_decided_check;
alter table evidence_observations add constraint evidence_observations_decided_check
  check (decided in ('suspected', 'status_change', 'confirmation', 'thumbnail'));

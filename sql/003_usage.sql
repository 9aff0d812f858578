-- Usage counters shared by every API process: one row per subject, limit and window bucket.
create table usage_counters (
  subject uuid not null,
  limit_name text not null references limit_definitions (name) on update cascade on delete cascade,
  window_start timestamptz not null,
  used integer not null check (used >= 0),
  primary key (subject, limit_name, window_start)
);
create index usage_counters_window_start on usage_counters (window_start);


-- Live worker processes and the graphile-worker ids they run, so jobs held by a dead process are freed.
create table worker_heartbeats (
  process_id text primary key,
  hostname text not null, -- host name and PID namespace, to tell a dead local PID from a live remote one
  pid integer not null,
  worker_ids text[] not null default '{}',
  started_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now()
);

-- Reconciling never deletes a row: a generated stenogram whose file the store's listing lacks is
-- marked (the store may be unmounted or its listing partial), and a later run that lists the file clears the mark.
alter table stenograms add column file_missing_since timestamptz;

-- Files no row refers to, per store, with when reconciling first saw them orphaned and in how many
-- consecutive runs: a file is removed only after several, and a run that does not see it orphaned drops it here.
-- No reference to users: a deleted user's rows are gone, and their files are exactly what this tracks.
create table stenogram_orphans (
  store text not null,
  owner_id uuid not null,
  video_id text not null,
  first_seen_at timestamptz not null default now(),
  runs integer not null default 1 check (runs >= 1),
  primary key (store, owner_id, video_id)
);

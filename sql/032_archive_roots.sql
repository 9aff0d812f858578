-- Folders `afterimage import` loaded (or `afterimage archives add` named): later crawls read them as
-- the archive source beside ARCHIVE_DIR. One row per real path (symbolic links resolved), so the same
-- folder reached two ways is one root. Removing a root keeps its row with removed_at: crawls stop
-- reading it and the files under it are no longer read for subtitles or served as media, while the
-- videos and subtitles already stored from it stay. Adding it again clears removed_at.
create table archive_roots (
  path text primary key check (path like '/%' and path not like '%/' or path = '/'),
  added_at timestamptz not null default now(),
  removed_at timestamptz
);

-- Re-upload candidates are narrowed by duration first: a title's common words match too many rows.
create index videos_duration on videos (duration_seconds);

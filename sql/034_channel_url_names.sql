-- The names an archive recorded a channel's URLs under (youtube.com/c/<name>, youtube.com/<name>,
-- youtube.com/user/<name>, a youtube-dl-era uploader_id): channels.custom_url holds one name at most,
-- and none of the /user/ ones, so an imported channel asked for by another of its URLs was not found.
-- A name belongs to one channel; the channel it was last recorded for takes it, as a handle is taken.
create table channel_url_names (
  channel_id text not null references channels (channel_id) on delete cascade,
  kind text not null check (kind in ('custom', 'user')),
  name text not null check (name ~ '^[^\s/]{1,100}$'),
  recorded_at timestamptz not null default now()
);
create unique index channel_url_names_unique on channel_url_names (kind, lower(name));
create index channel_url_names_channel on channel_url_names (channel_id);

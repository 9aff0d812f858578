-- Crawls, search sessions, and the event log their SSE streams are read from.

create table crawls (
  id bigint generated always as identity primary key,
  channel_id text not null references channels (channel_id),
  -- full: every configured source; archive_page: the next page of archive look-ups ("continue").
  kind text not null check (kind in ('full', 'archive_page')),
  -- Where this crawl's archive look-ups start, and where the next page ("continue") would start.
  archive_cursor text,
  next_archive_cursor text,
  status text not null default 'running' check (status in ('running', 'complete', 'error')),
  totals jsonb not null default '{}',
  error jsonb,
  started_at timestamptz not null default now(),
  finished_at timestamptz
);
-- One crawl of each kind per channel at a time: a second search joins the running one.
create unique index crawls_one_running_per_channel on crawls (channel_id, kind) where status = 'running';

create table search_sessions (
  id uuid primary key default gen_random_uuid(),
  user_id uuid references users (id) on delete cascade,
  channel_id text not null references channels (channel_id),
  crawl_id bigint not null references crawls (id),
  -- Crawl events from this transaction position on are this session's live part;
  -- everything committed before is in the session's snapshot.
  join_xid xid8 not null,
  query text not null,
  -- The session's snapshot holds the channel's videos first seen up to this instant (clock time, not
  -- transaction start, so a crawl transaction that committed just before is not missed).
  created_at timestamptz not null default clock_timestamp()
);
create index search_sessions_crawl on search_sessions (crawl_id);

-- Ordered by (xid, id): an event becomes visible only when every older transaction has ended,
-- so a reader that keeps a (xid, id) cursor never skips an event committed late.
create table events (
  id bigint generated always as identity primary key,
  xid xid8 not null default pg_current_xact_id(),
  stream text not null,
  type text not null,
  payload jsonb not null,
  created_at timestamptz not null default now()
);
create index events_stream_position on events (stream, xid, id);
create index events_created_at on events (created_at);

-- NOTIFY carries only the stream name; readers fetch the rows. Delivered at commit, once per stream.
create function notify_events() returns trigger language plpgsql as $$
declare
  name text;
begin
  for name in select distinct stream from inserted loop
    perform pg_notify('afterimage_events', name);
  end loop;
  return null;
end $$;
create trigger events_notify after insert on events referencing new table as inserted
  for each statement execute function notify_events();

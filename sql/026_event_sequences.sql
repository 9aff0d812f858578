-- Each stream numbers its own events 1, 2, 3… The number is taken from the stream's row in
-- event_streams, which the writing transaction keeps locked until it ends: a second writer of the
-- same stream waits for the first to commit (or roll back) and then takes the next number. So a
-- reader never sees event n+1 before event n, and reads need no visibility horizon.
--
-- Before, events were ordered by (xid, id) and released to readers only once every older
-- transaction of the cluster had ended (xid < pg_snapshot_xmin): one transaction holding an xid
-- anywhere in the cluster (pg_dump, another application's, an open psql) held every stream of
-- every user back for as long as it stayed open.
create table event_streams (
  stream text primary key,
  last_seq integer not null check (last_seq > 0)
);

alter table events add column seq integer;
with numbered as (select id, row_number() over (partition by stream order by xid, id) as seq from events)
update events e set seq = numbered.seq from numbered where numbered.id = e.id;
insert into event_streams (stream, last_seq) select stream, max(seq) from events group by stream;
alter table events alter column seq set not null;
create unique index events_stream_seq on events (stream, seq);
drop index events_stream_position;

-- A session's live part: the crawl's events after this number. Sessions of the old scheme get the
-- number of the last event their join position had already passed.
alter table search_sessions add column join_seq integer not null default 0;
update search_sessions s set join_seq = coalesce(
  (select max(e.seq) from events e where e.stream = 'crawl:' || s.crawl_id and e.xid < s.join_xid), 0);
alter table search_sessions alter column join_seq drop default;
alter table search_sessions drop column join_xid;

-- Event ids the streams sent before ("xid.id") are refused once with 400 after the upgrade; the
-- client reconnects without one and receives the whole stream.
alter table events drop column xid;

-- A track's cues are only ever read whole (search pages, downloads, summaries, stenograms), never
-- queried inside, so they are kept as the JSON text they were written as. As jsonb, every read turned
-- the binary form back into text: a page of 50 thirty-minute tracks cost the database 55 ms, against
-- 16 ms as json (mostly decompressing it). The view and the function reading the column are made again
-- around the change, as they were.
drop view latest_subtitle_tracks;
drop function transcript_document(bigint);
alter table subtitle_tracks drop constraint subtitle_tracks_cues_check;
alter table subtitle_tracks alter column cues type json using cues::json;
alter table subtitle_tracks add constraint subtitle_tracks_cues_check check (json_typeof(cues) = 'array');

create view latest_subtitle_tracks as
  select distinct on (video_id, language, kind) *
  from subtitle_tracks
  order by video_id, language, kind, version desc;

create function transcript_document(track bigint) returns tsvector
  language sql stable parallel safe
  return (select to_tsvector('afterimage'::regconfig, fts_fold(coalesce(string_agg(cue ->> 'text', ' '), '')))
    from subtitle_tracks t, json_array_elements(t.cues) cue where t.id = track);

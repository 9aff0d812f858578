-- A track's cues are only ever read whole (downloads, summaries, stenograms), never queried inside, so
-- they are kept as the JSON text they were written as. As jsonb, every read turned the binary form back
-- into text: a page of 50 thirty-minute tracks cost the database 55 ms, against 16 ms as json.
--
-- Subtitle search reads `cue_lines`: a line per cue, "startMs endMs text" (stored cues are one line
-- each; a newline left in one reads as a space). It is a third shorter than the JSON and needs no
-- parsing: the API's CPU for a page of 50 such tracks went from 36 to 19 ms, most of it the memory the
-- received text takes. Postgres keeps it in step with the cues (a generated column).
--
-- The view and the function reading the column are made again around the change, as they were.
drop view latest_subtitle_tracks;
drop function transcript_document(bigint);
alter table subtitle_tracks drop constraint subtitle_tracks_cues_check;

create function cue_lines(cues json) returns text
  language sql immutable parallel safe
  return (select string_agg(concat(c ->> 'startMs', ' ', c ->> 'endMs', ' ', replace(c ->> 'text', E'\n', ' ')), E'\n' order by n)
    from json_array_elements(cues) with ordinality as e(c, n));

-- One rewrite of the table for both.
alter table subtitle_tracks
  alter column cues type json using cues::json,
  add column cue_lines text generated always as (cue_lines(cues)) stored;
alter table subtitle_tracks add constraint subtitle_tracks_cues_check check (json_typeof(cues) = 'array');

create view latest_subtitle_tracks as
  select distinct on (video_id, language, kind) *
  from subtitle_tracks
  order by video_id, language, kind, version desc;

create function transcript_document(track bigint) returns tsvector
  language sql stable parallel safe
  return (select to_tsvector('afterimage'::regconfig, fts_fold(coalesce(string_agg(cue ->> 'text', ' '), '')))
    from subtitle_tracks t, json_array_elements(t.cues) cue where t.id = track);

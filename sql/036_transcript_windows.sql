-- Subtitle search reads windows of a transcript's cues instead of one vector of the whole transcript.
-- GIN keeps no word positions, so a phrase is checked against each candidate's vector: a whole
-- 30-minute transcript's (about 47 KB) made a phrase at 100,000 transcripts take 552 ms p50 / 930 ms
-- p95; a window of eight cues is a few hundred bytes. A window's vector also holds the next window's
-- first cue, so a phrase across two consecutive cues is found wherever they stand. Its cue lines
-- ("startMs endMs text", a line per cue) are what a hit shows: a page no longer reads and scans 50
-- whole transcripts in the API.
--
-- The windows replace the transcript's vector (transcripts.fts, its trigger and transcript_document)
-- and the track's generated cue_lines, which only subtitle search read: computing it parsed every
-- stored track's cues once more.
drop trigger transcripts_index_words on transcripts;
drop function transcripts_index_words();
drop index transcripts_fts;
alter table transcripts drop column fts;
drop function transcript_document(bigint);

drop view latest_subtitle_tracks;
alter table subtitle_tracks drop column cue_lines;
drop function cue_lines(json);
create view latest_subtitle_tracks as
  select distinct on (video_id, language, kind, track_id) *
  from subtitle_tracks
  order by video_id, language, kind, track_id, version desc;

-- Folding skips the steps a text does not need: NFKC for text already in that form, the spaces around
-- CJK characters for text without one. About 30 % less time on French and Russian transcripts (94 of
-- them: 674 → 490 ms here); the same answers, so nothing stored changes.
create function fts_space_cjk(value text) returns text
  language sql immutable strict parallel safe
  return case
    when value ~ '[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]'
      then regexp_replace(value, '([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff])', ' \1 ', 'g')
    else value
  end;

create or replace function fts_fold(value text) returns text
  language sql immutable strict parallel safe
  return case
    when value ~ '[^\x01-\x7f]' then lower(public.unaccent('public.unaccent'::regdictionary,
      fts_space_cjk(case when value is nfkc normalized then value else normalize(value, NFKC) end)) collate "und-x-icu")
    else lower(value collate "C") collate "und-x-icu"
  end;

create table transcript_windows (
  video_id text not null references transcripts (video_id) on delete cascade,
  -- Cues 8 × window_no + 1 to 8 × window_no + 8 of the transcript's track.
  window_no integer not null check (window_no >= 0),
  -- Its cues, a line each: "startMs endMs text" (a newline inside a cue reads as a space).
  lines text not null,
  -- The words of its cues and of the next window's first cue, folded as every document is (fts_fold).
  fts tsvector not null,
  primary key (video_id, window_no)
);

-- The windows of a transcript's chosen track, in one statement: each cue is in its own window, and the
-- first cue of every window but the first is also in the previous one's words. Each cue's JSON is read
-- once (json_to_recordset; reading its three fields with ->> parsed it three times: 20 % slower).
create function transcript_windows_of(video text, track bigint) returns table (video_id text, window_no integer, lines text, fts tsvector)
  language sql stable parallel safe
  begin atomic
    with cue as (
      select (n - 1)::integer as i, concat(e.start_ms, ' ', e.end_ms, ' ', replace(e.text, E'\n', ' ')) as line, e.text
      from subtitle_tracks t,
        rows from (json_to_recordset(t.cues) as ("startMs" text, "endMs" text, text text)) with ordinality as e(start_ms, end_ms, text, n)
      where t.id = track
    ), member as (
      select i / 8 as window_no, i, line, text, true as own from cue
      union all
      select i / 8 - 1, i, null, text, false from cue where i % 8 = 0 and i > 0
    )
    select video, window_no, string_agg(line, E'\n' order by i) filter (where own),
      to_tsvector('afterimage'::regconfig, fts_fold(string_agg(text, E'\n' order by i)))
    from member group by window_no;
  end;

create function transcripts_index_windows() returns trigger language plpgsql as $$
begin
  if tg_op = 'UPDATE' then
    if new.track_id is not distinct from old.track_id then
      return null;
    end if;
    delete from transcript_windows w where w.video_id = old.video_id;
  end if;
  if new.track_id is not null then
    insert into transcript_windows select * from transcript_windows_of(new.video_id, new.track_id);
  end if;
  return null;
end $$;
create trigger transcripts_index_windows after insert or update of track_id on transcripts
  for each row execute function transcripts_index_windows();

insert into transcript_windows
  select w.* from transcripts t, transcript_windows_of(t.video_id, t.track_id) w where t.track_id is not null;

-- Pending-list updates keep ingest fast (a transcript adds about 75 windows); searches read the list too.
create index transcript_windows_fts on transcript_windows using gin (fts) with (fastupdate = on, gin_pending_list_limit = 16384);
alter table transcript_windows alter column fts set statistics 1000;

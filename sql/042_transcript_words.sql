-- Every word a transcript says, without positions, one row a transcript: "and not this word" is one GIN
-- lookup among these rows. Through the windows it read every window saying the word, a row each: at
-- 100,000 transcripts a word said in a fifth of them is about 130,000 windows on as many pages, and the
-- `fts` benchmark's exclusions took 480 ms p50 and hit the 3 s limit; checking each candidate's windows
-- instead is about 70 µs a candidate, some 190 ms for a common phrase's 2,757 videos. An excluded phrase
-- is still read from the windows holding it: these words keep no positions.
create table transcript_words (
  video_id text primary key references transcripts (video_id) on delete cascade,
  words tsvector not null
);

-- The union of the transcript's windows' words, merged in pairs level by level: one by one, each merge
-- copied the whole growing vector again (3.5 ms a 30-minute transcript; in pairs 0.7 ms).
create function transcript_words_of(video text) returns tsvector
  language plpgsql stable parallel safe as $$
declare
  level tsvector[] := array(select strip(w.fts) from transcript_windows w where w.video_id = video);
begin
  while cardinality(level) > 1 loop
    level := array(
      select case when 2 * i + 2 <= cardinality(level) then level[2 * i + 1] || level[2 * i + 2] else level[2 * i + 1] end
      from generate_series(0, (cardinality(level) - 1) / 2) as i);
  end loop;
  return coalesce(level[1], ''::tsvector);
end $$;

-- A transcript's words follow its windows: triggers on one event fire in the order of their names, so
-- these run after transcripts_index_windows (sql/036_transcript_windows.sql) has written the windows.
create function transcripts_index_words() returns trigger language plpgsql as $$
begin
  delete from transcript_words w where w.video_id = new.video_id;
  insert into transcript_words select new.video_id, transcript_words_of(new.video_id) where new.track_id is not null;
  return null;
end $$;
create trigger transcripts_index_words after insert on transcripts
  for each row execute function transcripts_index_words();
create trigger transcripts_index_words_again after update of track_id on transcripts
  for each row when (old.track_id is distinct from new.track_id) execute function transcripts_index_words();

insert into transcript_words select video_id, transcript_words_of(video_id) from transcripts where track_id is not null;

create index transcript_words_words on transcript_words using gin (words) with (fastupdate = on, gin_pending_list_limit = 16384);

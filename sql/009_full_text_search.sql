-- Full-text search on Postgres: one tsvector per video (title weighted highest, then tags, then the
-- description), folded the same way for every script: lower case by Unicode rules (the database may run
-- in the C locale, whose lower() leaves Cyrillic and Greek alone), accents removed, no stemming (a
-- language's stemmer surprises readers of every other language), and each CJK character a token of its
-- own, so that words written without spaces are found as phrases of characters.

create extension if not exists unaccent;

create function fts_fold(value text) returns text
  language sql immutable strict parallel safe
  return lower(public.unaccent('public.unaccent'::regdictionary,
    regexp_replace(normalize(value, NFKC), '([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff])', ' \1 ', 'g')) collate "und-x-icu");

create text search configuration afterimage (copy = simple);

-- array_to_string is only stable (it could call any type's output function), and one stable call in
-- its body keeps Postgres from inlining fts_document: run as a function call, the document cost 75 µs
-- a video instead of 4. For text[] it is immutable, so a PL/pgSQL wrapper says so.
create function fts_tags_text(tags text[]) returns text
  language plpgsql immutable parallel safe as $$ begin return array_to_string(tags, ' '); end $$;

create function fts_document(title text, tags text[], description text) returns tsvector
  language sql immutable parallel safe
  return setweight(to_tsvector('afterimage'::regconfig, fts_fold(coalesce(title, ''))), 'A')
    || setweight(to_tsvector('afterimage'::regconfig, fts_fold(coalesce(fts_tags_text(tags), ''))), 'B')
    || setweight(to_tsvector('afterimage'::regconfig, fts_fold(coalesce(description, ''))), 'C');

alter table videos add column fts tsvector generated always as (fts_document(title, tags, description)) stored;

-- A BEFORE trigger sees generated columns of NEW as null (they are computed after it), so the whole-row
-- comparison that skips no-op upserts must leave them out, or every upsert would count as a change.
create or replace function skip_unchanged_update() returns trigger language plpgsql as $$
begin
  if to_jsonb(new) - 'fts' = to_jsonb(old) - 'fts' then
    return null;
  end if;
  new.updated_at := now();
  return new;
end $$;

-- Pending-list updates keep ingest fast; searches read the short pending list too.
create index videos_fts on videos using gin (fts) with (fastupdate = on, gin_pending_list_limit = 4096);

-- Each sort is an index walk when a query matches much of the archive; ties break by views, then id.
create index videos_by_views on videos (view_count desc nulls last, video_id);
create index videos_by_date_desc on videos (upload_date desc nulls last, view_count desc nulls last, video_id);
create index videos_by_date_asc on videos (upload_date asc nulls last, view_count desc nulls last, video_id);
create index videos_by_duration_desc on videos (duration_seconds desc nulls last, view_count desc nulls last, video_id);
create index videos_by_duration_asc on videos (duration_seconds asc nulls last, view_count desc nulls last, video_id);

-- Common lexemes get accurate frequencies, so the planner knows a rare word from a common one.
alter table videos alter column fts set statistics 1000;

-- Words the archive holds and in how many videos, for did-you-mean suggestions; refreshed by a job.
create table fts_words (
  word text primary key,
  videos integer not null check (videos > 0)
);
create index fts_words_trgm on fts_words using gin (word gin_trgm_ops);
create table fts_words_state (
  id boolean primary key default true check (id),
  refreshed_at timestamptz not null
);

-- Search inside subtitles: the words of each video's transcript (its chosen track), kept by trigger.
create function transcript_document(track bigint) returns tsvector
  language sql stable parallel safe
  return (select to_tsvector('afterimage'::regconfig, fts_fold(coalesce(string_agg(cue ->> 'text', ' '), '')))
    from subtitle_tracks t, jsonb_array_elements(t.cues) cue where t.id = track);

alter table transcripts add column fts tsvector;

create function transcripts_index_words() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' or new.track_id is distinct from old.track_id then
    new.fts := case when new.track_id is null then null else transcript_document(new.track_id) end;
  end if;
  return new;
end $$;
create trigger transcripts_index_words before insert or update of track_id on transcripts
  for each row execute function transcripts_index_words();

update transcripts set fts = transcript_document(track_id) where track_id is not null;
create index transcripts_fts on transcripts using gin (fts);

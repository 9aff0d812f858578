-- A track's language is a BCP 47 tag (en, not en-uYU-mmqFLq8): YouTube's id of a named track (one
-- of several tracks of a language) is kept apart in track_id, and a track is (video, language,
-- kind, track_id). Rows stored before, with yt-dlp's names as languages, are split by the data step
-- that runs with this migration (core/db/splitTrackNames.ts): the split is parseTrackName's rule
-- (core/youtube/trackName.ts), which needs ICU's BCP 47 parser, so it is not repeated here in SQL.
alter table subtitle_tracks add column track_id text check (track_id ~ '^[A-Za-z0-9_-]{11}$');

alter table subtitle_tracks drop constraint subtitle_tracks_video_id_language_kind_content_hash_key;
alter table subtitle_tracks drop constraint subtitle_tracks_video_id_language_kind_version_key;
-- A language's unnamed track (track_id null) is one track: nulls are not distinct here.
alter table subtitle_tracks add constraint subtitle_tracks_track_content_hash_key
  unique nulls not distinct (video_id, language, kind, track_id, content_hash);
alter table subtitle_tracks add constraint subtitle_tracks_track_version_key
  unique nulls not distinct (video_id, language, kind, track_id, version);

drop view latest_subtitle_tracks;
create view latest_subtitle_tracks as
  select distinct on (video_id, language, kind, track_id) *
  from subtitle_tracks
  order by video_id, language, kind, track_id, version desc;

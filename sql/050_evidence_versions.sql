-- Evidence behind versions: the answer that produced a metadata version (the one that showed the values
-- change) or a subtitle version (the file or answer its cues were read from); metadata a Wayback capture
-- filled in ('metadata_filled'); and answers of the local yt-dlp archive (source 'archive': an info.json
-- or subtitle file, no HTTP status).
alter table evidence_observations
  add column video_version_id bigint references video_versions (id),
  add column subtitle_track_id bigint references subtitle_tracks (id) on delete set null;
create index evidence_observations_version on evidence_observations (video_version_id) where video_version_id is not null;
create index evidence_observations_track on evidence_observations (subtitle_track_id) where subtitle_track_id is not null;
alter table evidence_observations drop constraint evidence_observations_decided_check;
alter table evidence_observations add constraint evidence_observations_decided_check
  check (decided in ('suspected', 'status_change', 'confirmation', 'thumbnail', 'metadata_version', 'metadata_filled', 'subtitle_version'));

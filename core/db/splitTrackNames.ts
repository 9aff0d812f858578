/**
 * The data step of sql/031_track_ids.sql: tracks stored with yt-dlp's names as their language
 * (`en-uYU-mmqFLq8`, `en-orig`, `de-en`) get the language and track id parseTrackName reads in them,
 * the rule every source uses now. A track whose new name is already stored (`en-orig` beside `en`:
 * the same speech track) joins it: content it already has is dropped (transcripts, summaries and
 * stenograms then point at the version kept), new content becomes its next versions. The videos'
 * announced caption languages are read the same way.
 */
import type { Logger } from '../log.ts';
import { parseTrackName } from '../youtube/trackName.ts';
import type { Queryable } from './database.ts';

interface StoredTrack {
  videoId: string;
  language: string;
  kind: string;
  manualNames: string[];
}

/** Names of manual tracks a translation's name may end in; none for a manual track itself. */
const contextOf = (kind: string, manualNames: string[]) => (kind === 'manual' ? {} : { manualNames });

async function moveTrack(tx: Queryable, from: StoredTrack, language: string, trackId: string | null): Promise<void> {
  const doubles = await tx<{ oldId: string; keptId: string; keptVersion: number }[]>`
    select old.id::text as "oldId", kept.id::text as "keptId", kept.version as "keptVersion"
    from subtitle_tracks old join subtitle_tracks kept on kept.video_id = old.video_id and kept.kind = old.kind
      and kept.language = ${language} and kept.track_id is not distinct from ${trackId} and kept.content_hash = old.content_hash
    where old.video_id = ${from.videoId} and old.language = ${from.language} and old.kind = ${from.kind} and old.track_id is null`;
  for (const double of doubles) {
    await tx`update transcripts set track_id = ${double.keptId} where track_id = ${double.oldId}`;
    await tx`update summaries set transcript_track_id = ${double.keptId} where transcript_track_id = ${double.oldId}`;
    await tx`update stenograms set transcript_track_id = ${double.keptId} where transcript_track_id = ${double.oldId}`;
    await tx`delete from subtitle_tracks where id = ${double.oldId}`;
  }
  await tx`
    update subtitle_tracks t set language = ${language}, track_id = ${trackId},
      version = coalesce((select max(k.version) from subtitle_tracks k where k.video_id = ${from.videoId} and k.kind = ${from.kind}
        and k.language = ${language} and k.track_id is not distinct from ${trackId}), 0) + moved.n
    from (select id, row_number() over (order by version) as n from subtitle_tracks
      where video_id = ${from.videoId} and language = ${from.language} and kind = ${from.kind} and track_id is null) moved
    where t.id = moved.id`;
}

/** The videos' caption_languages entries read with parseTrackName (entries it cannot read are kept as they are). */
async function splitAnnouncedLanguages(tx: Queryable): Promise<number> {
  const videos = await tx<{ videoId: string; captions: Array<{ language: string; kind: string }> }[]>`
    select video_id as "videoId", caption_languages as captions from videos where caption_languages <> '[]'::jsonb`;
  let changed = 0;
  for (const video of videos) {
    const manualNames = video.captions.filter((entry) => entry.kind === 'manual').map((entry) => entry.language);
    const entries = new Map<string, { language: string; kind: string }>();
    for (const entry of video.captions) {
      const language = parseTrackName(entry.language, contextOf(entry.kind, manualNames))?.language ?? entry.language;
      entries.set(`${language}\0${entry.kind}`, { language, kind: entry.kind });
    }
    const captions = [...entries.values()];
    if (captions.length === video.captions.length && captions.every((entry, i) => entry.language === video.captions[i]!.language)) continue;
    await tx`update videos set caption_languages = ${tx.json(captions)} where video_id = ${video.videoId}`;
    changed++;
  }
  return changed;
}

export async function splitTrackNames(tx: Queryable, log: Logger): Promise<void> {
  const stored = await tx<StoredTrack[]>`
    select t.video_id as "videoId", t.language, t.kind,
      coalesce((select array_agg(distinct m.language) from subtitle_tracks m where m.video_id = t.video_id and m.kind = 'manual'), '{}') as "manualNames"
    from subtitle_tracks t where t.track_id is null
    group by t.video_id, t.language, t.kind`;
  let moved = 0;
  for (const track of stored) {
    const parsed = parseTrackName(track.language, contextOf(track.kind, track.manualNames));
    if (!parsed || (parsed.language === track.language && parsed.trackId === null)) continue;
    await moveTrack(tx, track, parsed.language, parsed.trackId);
    moved++;
  }
  if (moved) {
    // What a summary or stenogram says it was made from follows its track's new name and version.
    await tx`
      update summaries s set transcript_language = t.language, transcript_version = t.version from subtitle_tracks t
      where s.transcript_track_id = t.id and (s.transcript_language, s.transcript_version) is distinct from (t.language, t.version)`;
    await tx`
      update stenograms s set transcript_language = t.language, transcript_version = t.version from subtitle_tracks t
      where s.transcript_track_id = t.id and (s.transcript_language, s.transcript_version) is distinct from (t.language, t.version)`;
  }
  const videos = await splitAnnouncedLanguages(tx);
  if (moved || videos) log.info('caption track names split into language and track id', { tracks: moved, videos });
}

import type { Queryable } from '../db/database.ts';
import { notFound } from '../errors.ts';
import type { Cue } from './cue.ts';
import { noMatchingTrack } from './noMatch.ts';
import { chooseTrack, latestTracks, readCues, trackVersion, type TrackInfo, type TrackKind } from './tracks.ts';
import { findVideos, type SubtitleVideo } from './videos.ts';

export interface SubtitleChoice { lang?: string | undefined; kind?: TrackKind | undefined; version?: number | undefined }

/** A stored video (404 when it is not). */
async function findVideo(sql: Queryable, id: string): Promise<SubtitleVideo> {
  const video = (await findVideos(sql, [id])).get(id);
  if (!video) throw notFound(`no video ${id} is stored; a channel search finds a channel's videos`);
  return video;
}

/**
 * The cues of a video's chosen track (GET /api/subtitles/:videoId, get_subtitles): the best track for
 * `lang`/`kind`, at `version` when given; 404s name what there is. `charge` runs once a track is found,
 * before anything is read, so refusals and 404s cost nothing.
 */
export async function readSubtitles(sql: Queryable, videoId: string, choice: SubtitleChoice, charge: () => Promise<void>): Promise<{ video: SubtitleVideo; track: TrackInfo; cues: Cue[] }> {
  const video = await findVideo(sql, videoId);
  const tracks = await latestTracks(sql, [video.videoId]);
  const chosen = chooseTrack(tracks, { videoLanguage: video.language, lang: choice.lang, kind: choice.kind });
  if (!chosen) {
    throw notFound(
      tracks.length === 0
        ? `video ${video.videoId} has no subtitles stored; POST /api/subtitles/${video.videoId}/fetch looks for them`
        : `video ${video.videoId} has ${noMatchingTrack(choice, tracks)}`,
    );
  }
  let track = chosen;
  if (choice.version !== undefined && choice.version !== chosen.version) {
    const older = await trackVersion(sql, video.videoId, chosen.language, chosen.kind, choice.version);
    if (!older) throw notFound(`the ${chosen.language} (${chosen.kind}) subtitles of ${video.videoId} have versions 1 to ${chosen.version}, not ${choice.version}`);
    track = older;
  }
  await charge();
  return { video, track, cues: (await readCues(sql, [track.id])).get(track.id) ?? [] };
}

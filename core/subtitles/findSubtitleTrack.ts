import type { Queryable } from '../db/database.ts';
import { notFound } from '../errors.ts';
import { noMatchingTrack } from './noMatch.ts';
import { chooseTrack, latestTracks, trackVersion, type TrackInfo, type TrackKind } from './tracks.ts';
import { findVideos, type SubtitleVideo } from './videos.ts';

export interface SubtitleChoice {
  lang?: string | undefined;
  kind?: TrackKind | undefined;
  trackId?: string | undefined;
  version?: number | undefined;
}

/** A stored video (404 when it is not). */
async function findVideo(sql: Queryable, id: string): Promise<SubtitleVideo> {
  const video = (await findVideos(sql, [id])).get(id);
  if (!video) throw notFound(`no video ${id} is stored; a channel search finds a channel's videos`);
  return video;
}

/**
 * The track a subtitle read sends, without its cues: the best track for `lang`/`kind`, at `version`
 * when given; 404s name what there is. Its content hash validates the read before anything is charged.
 */
export async function findSubtitleTrack(
  sql: Queryable,
  videoId: string,
  choice: SubtitleChoice,
): Promise<{ video: SubtitleVideo; track: TrackInfo }> {
  const video = await findVideo(sql, videoId);
  const tracks = await latestTracks(sql, [video.videoId]);
  const chosen = chooseTrack(tracks, { videoLanguage: video.language, lang: choice.lang, kind: choice.kind, trackId: choice.trackId });
  if (!chosen) {
    throw notFound(
      tracks.length === 0
        ? `video ${video.videoId} has no subtitles stored; POST /api/subtitles/${video.videoId}/fetch looks for them`
        : `video ${video.videoId} has ${noMatchingTrack(choice, tracks)}`,
    );
  }
  if (choice.version === undefined || choice.version === chosen.version) return { video, track: chosen };
  const older = await trackVersion(sql, video.videoId, chosen, choice.version);
  if (!older)
    throw notFound(
      `the ${chosen.language} (${chosen.kind}) subtitles of ${video.videoId} have versions 1 to ${chosen.version}, not ${choice.version}`,
    );
  return { video, track: older };
}

import type { Queryable } from '../db/database.ts';
import type { Cue } from './cue.ts';
import { findSubtitleTrack, type SubtitleChoice } from './findSubtitleTrack.ts';
import { readCues, type TrackInfo } from './tracks.ts';
import type { SubtitleVideo } from './videos.ts';

/**
 * The cues of a video's chosen track (get_subtitles, the MCP resource): the track of findSubtitleTrack.
 * `charge` runs once a track is found, before anything is read, so refusals and 404s cost nothing.
 */
export async function readSubtitles(
  sql: Queryable,
  videoId: string,
  choice: SubtitleChoice,
  charge: () => Promise<void>,
): Promise<{ video: SubtitleVideo; track: TrackInfo; cues: Cue[] }> {
  const { video, track } = await findSubtitleTrack(sql, videoId, choice);
  await charge();
  return { video, track, cues: (await readCues(sql, [track.id])).get(track.id) ?? [] };
}

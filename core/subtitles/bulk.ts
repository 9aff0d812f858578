import type { Queryable } from '../db/database.ts';
import { invalidInput } from '../errors.ts';
import type { Cue } from './cue.ts';
import { matchCues } from './match.ts';
import { noMatchingTrack } from './noMatch.ts';
import { formatTimestamp } from './timestamps.ts';
import { chooseTrack, latestTracks, readCues, type TrackInfo, type TrackKind } from './tracks.ts';
import { findVideos, type SubtitleVideo } from './videos.ts';

/**
 * A bulk subtitle download: which track of each requested video is sent (and why the others are not),
 * within the byte cap; read a page of videos at a time while bulkJson.ts or bulkZip.ts stream them.
 */

export interface BulkRequest {
  videoIds: readonly string[];
  lang?: string | undefined;
  kind?: TrackKind | undefined;
}

type MissingReason = 'unknown_video' | 'no_subtitles' | 'no_matching_track';
interface Missing {
  videoId: string;
  reason: MissingReason;
  message: string;
}
export interface Planned {
  video: SubtitleVideo;
  track: TrackInfo;
}

export interface BulkPlan {
  /** Distinct video ids asked for. */
  requested: number;
  /** The videos sent, in request order, each with its chosen track. */
  planned: Planned[];
  missing: Missing[];
}

/** Videos whose cues are read from the database at once while a bulk download streams. */
const BULK_BATCH = 10;

/** Chooses each video's track; INVALID_INPUT when their text exceeds `maxBytes` (SUBTITLE_BULK_MAX_BYTES). */
export async function planBulkDownload(sql: Queryable, request: BulkRequest, maxBytes: number): Promise<BulkPlan> {
  const ids = [...new Set(request.videoIds)];
  const [videos, tracks] = await Promise.all([findVideos(sql, ids), latestTracks(sql, ids)]);
  const plan = chooseTracks(request, ids, videos, tracks);
  const textBytes = plan.planned.reduce((sum, entry) => sum + entry.track.textBytes, 0);
  if (textBytes > maxBytes) {
    throw invalidInput(
      `videoIds: these subtitles hold ${textBytes} bytes of text, more than the ${maxBytes} bytes one download may carry; ask for fewer videos`,
      { textBytes, maxBytes },
    );
  }
  return plan;
}

function chooseTracks(request: BulkRequest, ids: string[], videos: Map<string, SubtitleVideo>, tracks: TrackInfo[]): BulkPlan {
  const byVideo = new Map<string, TrackInfo[]>();
  for (const track of tracks) byVideo.set(track.videoId, [...(byVideo.get(track.videoId) ?? []), track]);
  const planned: Planned[] = [];
  const missing: Missing[] = [];
  for (const id of ids) {
    const video = videos.get(id);
    if (!video) {
      missing.push({ videoId: id, reason: 'unknown_video', message: `no video ${id} is stored` });
      continue;
    }
    const own = byVideo.get(id) ?? [];
    const track = chooseTrack(own, { videoLanguage: video.language, lang: request.lang, kind: request.kind });
    if (track) planned.push({ video, track });
    else if (own.length === 0)
      missing.push({ videoId: id, reason: 'no_subtitles', message: `no subtitles stored; POST /api/subtitles/${id}/fetch looks for them` });
    else missing.push({ videoId: id, reason: 'no_matching_track', message: noMatchingTrack(request, own) });
  }
  return { requested: ids.length, planned, missing };
}

/** The cues of the planned videos, BULK_BATCH videos' worth at a time, in request order. */
export async function* cuesInBatches(sql: Queryable, planned: Planned[]): AsyncGenerator<{ entry: Planned; cues: Cue[] }> {
  for (let start = 0; start < planned.length; start += BULK_BATCH) {
    const batch = planned.slice(start, start + BULK_BATCH);
    const cues = await readCues(
      sql,
      batch.map((entry) => entry.track.id),
    );
    for (const entry of batch) yield { entry, cues: cues.get(entry.track.id) ?? [] };
  }
}

/** Indexes of the cues that contain the query (none without one). */
export function matchesOf(cues: Cue[], query: string | undefined): Set<number> {
  return query ? new Set(matchCues(cues, query)) : new Set();
}

const timed = (ms: number) => formatTimestamp(ms, '.');

/** One cue as bulk JSON (and the zip's manifest) shows it. */
export function cueJson(cue: Cue, match: boolean) {
  return {
    startMs: cue.startMs,
    endMs: cue.endMs,
    start: timed(cue.startMs),
    end: timed(cue.endMs),
    text: cue.text,
    ...(cue.speakerChange ? { speakerChange: true } : {}),
    ...(match ? { match: true } : {}),
  };
}

/** With a query: how many cues match and which (rendered texts and the zip list them, as cues carry no mark there). */
export function matchList(cues: Cue[], matched: Set<number>, query: string | undefined) {
  return query ? { matchCount: matched.size, matches: [...matched].map((index) => cueJson(cues[index]!, false)) } : {};
}

/** The fields every video of a bulk answer starts with. */
export const videoFields = (video: SubtitleVideo) => ({
  videoId: video.videoId,
  title: video.title,
  channelId: video.channelId,
  channelTitle: video.channelTitle,
});

export interface BulkTotals {
  requested: number;
  returned: number;
  missing: number;
  cues: number;
  matches: number;
  textBytes: number;
}

/** Totals before any video is counted; countVideo adds each one sent. */
export const startTotals = (plan: BulkPlan): BulkTotals => ({
  requested: plan.requested,
  returned: plan.planned.length,
  missing: plan.missing.length,
  cues: 0,
  matches: 0,
  textBytes: 0,
});

export function countVideo(totals: BulkTotals, entry: Planned, cues: Cue[], matched: Set<number>): void {
  totals.cues += cues.length;
  totals.matches += matched.size;
  totals.textBytes += entry.track.textBytes;
}

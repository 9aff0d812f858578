import type { Sql } from '../../core/db/database.ts';
import { storeTrack, type TrackInput } from '../../core/subtitles/store.ts';
import { formatTimestamp } from '../../core/subtitles/timestamps.ts';
import { fakeChannelId, fakeVideoId } from '../kit/ids.ts';

/** An 11-character video id and a UC… channel id, stable for the label. */
export const videoIdFor = (label: string) => fakeVideoId(`video:${label}`);
export const channelIdFor = (label: string) => fakeChannelId(`channel:${label}`);

/** Stores a channel and its videos (only the columns subtitles care about). */
export async function addVideos(
  sql: Sql,
  channelId: string,
  videos: Array<{ videoId: string; title?: string; language?: string | null }>,
  channelTitle = 'Subtitle Channel',
): Promise<void> {
  await sql`insert into channels (channel_id, title) values (${channelId}, ${channelTitle}) on conflict (channel_id) do nothing`;
  for (const video of videos) {
    await sql`
      insert into videos (video_id, channel_id, title, language, status)
      values (${video.videoId}, ${channelId}, ${video.title ?? `Video ${video.videoId}`}, ${video.language ?? null}, 'live')
      on conflict (video_id) do nothing`;
  }
}

/** WebVTT with one cue per line, `seconds` apart. */
export function vttOf(lines: readonly string[], seconds = 3, offsetMs = 0): string {
  return `WEBVTT\n\n${lines
    .map(
      (line, i) =>
        `${formatTimestamp(offsetMs + i * seconds * 1000, '.')} --> ${formatTimestamp(offsetMs + (i + 1) * seconds * 1000, '.')}\n${line}\n`,
    )
    .join('\n')}`;
}

/** SRT with one cue per line, `seconds` apart. */
export function srtOf(lines: readonly string[], seconds = 3, offsetMs = 0): string {
  return lines
    .map(
      (line, i) =>
        `${i + 1}\n${formatTimestamp(offsetMs + i * seconds * 1000, ',')} --> ${formatTimestamp(offsetMs + (i + 1) * seconds * 1000, ',')}\n${line}\n`,
    )
    .join('\n');
}

/** YouTube json3 with one event per line. */
export function json3Of(lines: readonly string[], seconds = 3): string {
  return JSON.stringify({
    wireMagic: 'pb3',
    events: lines.map((line, i) => ({ tStartMs: i * seconds * 1000, dDurationMs: seconds * 1000, segs: [{ utf8: line }] })),
  });
}

/** YouTube srv3 (timedtext format 3) with one paragraph per line. */
export function srv3Of(lines: readonly string[], seconds = 3): string {
  const body = lines
    .map((line, i) => `<p t="${i * seconds * 1000}" d="${seconds * 1000}">${line.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</p>`)
    .join('');
  return `<?xml version="1.0" encoding="utf-8" ?><timedtext format="3"><body>${body}</body></timedtext>`;
}

/** Stores a track in its own transaction. */
export async function addTrack(sql: Sql, input: Omit<TrackInput, 'source'> & { source?: TrackInput['source'] }) {
  return sql.begin((tx) => storeTrack(tx, { source: 'archive', ...input }));
}

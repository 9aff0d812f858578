/**
 * Storing fetched tracks: parse and normalise with the codecs, hash the normalised cues, and add a
 * version only when the content changed. Versions are never updated (only last_seen_at is).
 */
import { createHash } from 'node:crypto';
import type { Queryable } from '../db/database.ts';
import { invalidInput } from '../errors.ts';
import type { Cue, InputFormat } from './cue.ts';
import { detectFormat } from './detectFormat.ts';
import { normaliseCues } from './normaliseCues.ts';
import { parseRaw } from './parse.ts';
import { renderText } from './renderText.ts';
import { languageTag } from '../text/languageTag.ts';
import { TRACK_ID } from '../youtube/trackName.ts';
import { TRACK_COLUMNS, type TrackInfo, type TrackKind, type TrackSource } from './tracks.ts';

export interface TrackInput {
  videoId: string;
  /** A BCP 47 tag as parseTrackName (core/youtube/trackName.ts) writes it. */
  language: string;
  /** YouTube's id of a named track; null or absent for the language's unnamed track. */
  trackId?: string | null | undefined;
  kind: TrackKind;
  source: TrackSource;
  /** The track as fetched (any format the codecs read). */
  text: string;
  /** A format name or file name that helps tell SRT from WebVTT (see detectFormat). */
  formatHint?: string;
  /** Size as fetched; defaults to the UTF-8 size of `text`. */
  originalBytes?: number;
  originUrl?: string;
}

/** A track ready to store: parsed, normalised, measured and hashed (no database needed). */
export interface PreparedTrack {
  videoId: string;
  language: string;
  trackId: string | null;
  kind: TrackKind;
  source: TrackSource;
  format: InputFormat;
  cues: Cue[];
  textBytes: number;
  durationMs: number;
  originalBytes: number;
  contentHash: string;
  originUrl: string | null;
}

/** SHA-256 of the normalised cues: the same words at the same times give the same hash, whatever the format. */
export function contentHash(cues: readonly Cue[]): string {
  const canonical = JSON.stringify(cues.map((cue) => [cue.startMs, cue.endMs, cue.text, cue.speakerChange ? 1 : 0]));
  return createHash('sha256').update(canonical).digest('hex');
}

/**
 * Parses and normalises a fetched track. Throws INVALID_INPUT when the text is in no format the
 * codecs read, the language is not a BCP 47 tag in its conventional case or the track id not one of
 * YouTube's; undefined when it holds no cue at all.
 */
export function prepareTrack(input: TrackInput): PreparedTrack | undefined {
  if (languageTag(input.language) !== input.language) throw invalidInput(`language: "${input.language}" is not a BCP 47 language tag`);
  if (input.trackId != null && !TRACK_ID.test(input.trackId)) throw invalidInput(`trackId: "${input.trackId}" is not a track id`);
  const format = detectFormat(input.text, input.formatHint);
  if (!format) throw invalidInput('not a subtitle format that can be read (WebVTT, SRT, YouTube timedtext srv1/srv2/srv3 XML or json3)');
  const cues = normaliseCues(parseRaw(input.text, format)).map((cue) =>
    cue.speakerChange ? cue : { startMs: cue.startMs, endMs: cue.endMs, text: cue.text },
  );
  if (cues.length === 0) return undefined;
  return {
    videoId: input.videoId,
    language: input.language,
    trackId: input.trackId ?? null,
    kind: input.kind,
    source: input.source,
    format,
    cues,
    textBytes: Buffer.byteLength(renderText(cues)),
    durationMs: cues.reduce((end, cue) => Math.max(end, cue.endMs), 0),
    originalBytes: input.originalBytes ?? Buffer.byteLength(input.text),
    contentHash: contentHash(cues),
    originUrl: input.originUrl ?? null,
  };
}

/**
 * Stores a prepared track inside the caller's transaction (`tx` must be one: the version number
 * is taken under a transaction-scoped lock of the video's tracks). Content already stored for this
 * (video, language, kind, track id) only has its last_seen_at moved; new content becomes the next version.
 */
export async function insertTrack(tx: Queryable, track: PreparedTrack): Promise<{ track: TrackInfo; created: boolean }> {
  await tx`select pg_advisory_xact_lock(hashtextextended(${`afterimage:subtitles:${track.videoId}`}, 0))`;
  const [seen] = await tx<TrackInfo[]>`
    update subtitle_tracks t set last_seen_at = now()
    where t.video_id = ${track.videoId} and t.language = ${track.language} and t.kind = ${track.kind}
      and t.track_id is not distinct from ${track.trackId} and t.content_hash = ${track.contentHash}
    returning ${tx.unsafe(TRACK_COLUMNS)}`;
  if (seen) return { track: seen, created: false };
  const [inserted] = await tx<TrackInfo[]>`
    insert into subtitle_tracks as t (video_id, language, track_id, kind, source, format, version, cues, cue_count, text_bytes, duration_ms, original_bytes, content_hash, origin_url)
    values (${track.videoId}, ${track.language}, ${track.trackId}, ${track.kind}, ${track.source}, ${track.format},
      (select coalesce(max(version), 0) + 1 from subtitle_tracks
        where video_id = ${track.videoId} and language = ${track.language} and kind = ${track.kind} and track_id is not distinct from ${track.trackId}),
      ${JSON.stringify(track.cues)}::text::json, ${track.cues.length}, ${track.textBytes}, ${track.durationMs}, ${track.originalBytes},
      ${track.contentHash}, ${track.originUrl})
    returning ${tx.unsafe(TRACK_COLUMNS)}`;
  return { track: inserted!, created: true };
}

/** prepareTrack + insertTrack: undefined when the text holds no cue (nothing is stored then). */
export async function storeTrack(tx: Queryable, input: TrackInput): Promise<{ track: TrackInfo; created: boolean } | undefined> {
  const prepared = prepareTrack(input);
  return prepared ? insertTrack(tx, prepared) : undefined;
}

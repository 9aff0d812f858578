/**
 * One entry of a player response's captionTracks (captions.playerCaptionsTracklistRenderer): its
 * language and track id through parseTrackName, with the name yt-dlp would give it (its
 * get_lang_code: the vssId `.en.uYU-mmqFLq8` without its leading dot, or `a.`, dots made hyphens),
 * and its kind: `asr` (or a vssId `a.…`) is speech recognition.
 */
import { asString, type JsonObject } from './json.ts';
import { parseTrackName, type TrackName } from './trackName.ts';

export function captionTrackOf(entry: JsonObject): (TrackName & { kind: 'manual' | 'auto' }) | undefined {
  const languageCode = asString(entry.languageCode);
  if (!languageCode) return undefined;
  const vssId = asString(entry.vssId);
  const parsed = parseTrackName(vssId?.replace(/^a?\./, '').replaceAll('.', '-') || languageCode, { languageCode });
  if (!parsed) return undefined;
  return { ...parsed, kind: entry.kind === 'asr' || vssId?.startsWith('a.') ? 'auto' : 'manual' };
}

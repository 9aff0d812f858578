/**
 * The caption tracks yt-dlp wrote as files (`<base>.<name>.<ext>`), read with the info.json beside
 * them. A name under `subtitles` is manual; one under `automatic_captions` is auto, or translated
 * when its URLs ask for a translation (`tlang=`); a name in neither is auto (no human-made track
 * without evidence). yt-dlp writes the manual track when a name is in both. The language and track
 * id are parseTrackName's, told the language the entry's timedtext URL asks for (`lang=`) and the
 * names a translation's name may end in: the manual tracks', and its URL's source language (`lang=`).
 */
import { isObject } from './json.ts';
import { parseTrackName, type TrackName } from './trackName.ts';

export type CaptionKind = 'manual' | 'auto' | 'translated';

export interface NamedTrack extends TrackName {
  /** yt-dlp's name: the file name's part between the base and the extension. */
  name: string;
  kind: CaptionKind;
}

/** Names yt-dlp writes for what are not captions (some would pass as language tags: rechat). */
const NOT_CAPTIONS = new Set(['live_chat', 'rechat', 'danmaku', 'comments']);

/** The lang= of an entry's timedtext URLs (a translation's source language when one has tlang=), and whether one asks for a translation. */
function timedtextOf(entries: unknown): { languageCode: string | undefined; translated: boolean } {
  let languageCode: string | undefined;
  let translated = false;
  for (const entry of Array.isArray(entries) ? entries : []) {
    if (!isObject(entry) || typeof entry.url !== 'string') continue;
    let params: URLSearchParams;
    try {
      params = new URL(entry.url).searchParams;
    } catch {
      continue;
    }
    if (params.has('tlang')) translated = true;
    languageCode ??= params.get('lang') ?? undefined;
  }
  return { languageCode, translated };
}

/** yt-dlp's names read as tracks, in the order given; names that are no caption language are left out. */
export function readTrackNames(info: unknown, names: Iterable<string>): NamedTrack[] {
  const subtitles = isObject(info) && isObject(info.subtitles) ? info.subtitles : {};
  const automatic = isObject(info) && isObject(info.automatic_captions) ? info.automatic_captions : {};
  const manualNames = Object.keys(subtitles);
  const tracks: NamedTrack[] = [];
  for (const name of names) {
    if (NOT_CAPTIONS.has(name)) continue;
    const manual = Object.hasOwn(subtitles, name);
    const listed = manual ? subtitles[name] : Object.hasOwn(automatic, name) ? automatic[name] : undefined;
    const { languageCode, translated } = timedtextOf(listed);
    // A translation's name is its language then its source's name, which lang= gives when the source is not listed.
    const parsed = manual
      ? parseTrackName(name, { languageCode })
      : translated
        ? parseTrackName(name, { manualNames: languageCode ? [...manualNames, languageCode] : manualNames })
        : parseTrackName(name, { languageCode, manualNames });
    if (!parsed) continue;
    tracks.push({ name, ...parsed, kind: manual ? 'manual' : translated ? 'translated' : 'auto' });
  }
  return tracks;
}

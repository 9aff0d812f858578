/**
 * What yt-dlp and YouTube call a caption track, split into its language (a BCP 47 tag) and, for a
 * named track, YouTube's id of it. Every language read from a file name, an info.json or a caption
 * list goes through parseTrackName.
 *
 * yt-dlp names a track after YouTube's vssId (yt_dlp/extractor/youtube/_video.py, get_lang_code:
 * the leading dot dropped, the other dots made hyphens): `.en` → `en`, `a.en` (speech recognition)
 * → `en`, and a named track `.en.uYU-mmqFLq8` → `en-uYU-mmqFLq8`, the language then the track's
 * 11-character id. It also writes `en-orig` (the speech track of the original audio language,
 * written as `en` too) and, for a machine translation of a manual track, the target language then
 * that track's name (`de-en`, `fr-de-DE`). These are the file names' `<base>.<name>.<ext>` and the
 * keys of the info.json's `subtitles` and `automatic_captions`.
 *
 * The rule, first match:
 *  1. the language the platform gave (captionTracks' languageCode, the timedtext URL's lang=), when
 *     the name is it, or it and a track id;
 *  2. `<name>-orig`: the language of <name>;
 *  3. `<tag>-<a manual track's name>`: a translation into <tag>;
 *  4. `<tag>-<11 of A-Z a-z 0-9 _ ->`: the named track <id> in <tag>. A track id can look like
 *     subtags (`uYU-mmqFLq8` as extlang and variant, `GB-abcdefgh` as region and variant), so its
 *     length decides, not its syntax: YouTube's ids are 11 characters, and its language codes
 *     (language, -Script, -Region: en, en-GB, zh-Hans, es-419) never end in 11 after a hyphen;
 *  5. else the whole name is the language.
 * Undefined when the language is no BCP 47 tag (`live_chat`, `rechat`).
 */
import { languageTag } from '../text/languageTag.ts';

/** YouTube's id of a named caption track (the last part of a vssId such as `.en.uYU-mmqFLq8`). */
export const TRACK_ID = /^[A-Za-z0-9_-]{11}$/;

export interface TrackName {
  /** A BCP 47 tag in its conventional case: en, en-GB, zh-Hans, es-419, iw. */
  language: string;
  /** YouTube's id of a named track; null for the language's unnamed track. */
  trackId: string | null;
}

export interface KnownNames {
  /** The language code the platform gave for this track (captionTracks' languageCode, timedtext lang=). */
  languageCode?: string | undefined;
  /** The names of the video's manual tracks, which translations of them end in. */
  manualNames?: Iterable<string> | undefined;
}

function withLanguage(language: string, trackId: string | null): TrackName | undefined {
  const tag = languageTag(language);
  return tag ? { language: tag, trackId } : undefined;
}

export function parseTrackName(name: string, known: KnownNames = {}): TrackName | undefined {
  const code = known.languageCode;
  if (code && name.toLowerCase() === code.toLowerCase()) return withLanguage(code, null);
  if (code && name.toLowerCase().startsWith(`${code.toLowerCase()}-`)) {
    const rest = name.slice(code.length + 1);
    if (TRACK_ID.test(rest)) return withLanguage(code, rest);
  }
  if (name.toLowerCase().endsWith('-orig')) return parseTrackName(name.slice(0, -'-orig'.length), known);
  for (const manual of known.manualNames ?? []) {
    if (manual && name.length > manual.length + 1 && name.endsWith(`-${manual}`)) {
      const target = withLanguage(name.slice(0, -(manual.length + 1)), null);
      if (target) return target;
    }
  }
  const dash = name.length - 12;
  if (dash > 0 && name[dash] === '-' && TRACK_ID.test(name.slice(dash + 1))) {
    const named = withLanguage(name.slice(0, dash), name.slice(dash + 1));
    if (named) return named;
  }
  return withLanguage(name, null);
}

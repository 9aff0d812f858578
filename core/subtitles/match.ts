/**
 * Finding a phrase in cues, as people search what was said: case-insensitive, accents folded
 * ("cafe" finds "Café", "uber" finds "über"), whitespace collapsed, and across cue boundaries (a
 * phrase split over two cues marks both). A match is a substring: "cat" also finds "concatenate".
 */
import { fold } from '../text/fold.ts';
import type { Cue } from './cue.ts';

/** Folded as search folds (core/text/fold.ts), whitespace runs as one space. */
export function foldText(text: string): string {
  const folded = fold(text);
  return MESSY_SPACE.test(folded) ? folded.replace(/\s+/g, ' ') : folded;
}

const MESSY_SPACE = /[^\S ]| {2}/;

/** Indexes of the cues a phrase touches (sorted); none for an empty phrase. */
export function matchCues(cues: readonly Cue[], query: string): number[] {
  const needle = foldText(query).trim();
  if (!needle) return [];
  // The cues' folded text joined by single spaces, with where each cue starts.
  const starts: number[] = [];
  const parts: string[] = [];
  let length = 0;
  for (const cue of cues) {
    const folded = foldText(cue.text).trim();
    starts.push(length);
    parts.push(folded);
    length += folded.length + 1;
  }
  const haystack = parts.join(' ');
  const matched = new Set<number>();
  let cue = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + 1)) {
    const end = at + needle.length;
    // The first cue whose text reaches past `at`, then every cue the match runs into.
    while (cue + 1 < starts.length && starts[cue + 1]! <= at) cue++;
    for (let i = cue; i < starts.length && starts[i]! < end; i++) {
      // A match that only covers the joining space belongs to neither side.
      const cueEnd = starts[i]! + parts[i]!.length;
      if (cueEnd > at && parts[i]!.length > 0) matched.add(i);
    }
  }
  return [...matched].sort((a, b) => a - b);
}

/**
 * Roll-up repetition that survives normaliseCues, which drops repeated *lines*: captions whose line
 * grows a word at a time, or scrolls by part of a line, start with the words the previous caption
 * ended with. Those words are dropped here, so each word of the transcript is written once.
 */
import type { StenogramCue } from './stenogram.ts';

// A join repeating this many words, exactly as written (case and punctuation), is roll-up. Fewer is
// speech too often ("no / no", "very / very good"), unless the previous caption is repeated whole
// (a line growing word by word). One word alone is never taken for roll-up.
const MIN_OVERLAP = 3;
const MIN_WHOLE_OVERLAP = 2;
// Roll-up repeats a line or two; a longer look back only costs time.
const MAX_OVERLAP = 40;

/** How many words at the start of `words` repeat the end of `previous` (the most that do). */
function overlap(previous: readonly string[], words: readonly string[]): number {
  for (let k = Math.min(previous.length, words.length, MAX_OVERLAP); k > 0; k--) {
    let same = true;
    for (let j = 0; j < k && same; j++) same = previous[previous.length - k + j] === words[j];
    if (same) return k;
  }
  return 0;
}

/** Each cue's text without the words that only repeat the end of the cue before; '' when that was all of it. */
export function withoutRollUp(cues: readonly StenogramCue[]): string[] {
  const out: string[] = [];
  let previous: string[] = [];
  for (const cue of cues) {
    const words = cue.text.split(/\s+/).filter((word) => word.length > 0);
    // A new speaker's words are theirs, even when they echo the last speaker's.
    const k = cue.speakerChange ? 0 : overlap(previous, words);
    const repeated = k >= MIN_OVERLAP || (k >= MIN_WHOLE_OVERLAP && k === previous.length) ? k : 0;
    out.push(words.slice(repeated).join(' '));
    previous = words;
  }
  return out;
}

/**
 * What captioners write that nobody says: sound descriptions ([Music], [Applause], (EPIC MUSIC)),
 * music notes, speaker markers and labels (">>", "MIRA MURATI:"). They carry no topic, so they are
 * kept out of the sentences that are ranked and quoted.
 */
import type { TranscriptCue } from './transcriptCue.ts';

// [Music], [Applause], [संगीत]: square brackets are never speech in YouTube captions.
const BRACKETED = /\[[^\]]*\]/g;
// (APPLAUSE), (EPIC MUSIC); "(which is true)" has lower case letters and is speech.
const CAPITAL_PARENTHESES = /\((?=[^()]*\p{Lu})[^()\p{Ll}]*\)/gu;
const NOTES = /[♩♪♫♬🎵🎶]/gu;
const MARKERS = /^(?:>>\s*)+/;
// A speaker label in capitals before the words: "MIRA MURATI:", "DR. SMITH:".
const LABEL = /^\p{Lu}[\p{Lu}\p{M}'’.-]*(?: [\p{Lu}\p{M}'’.-]+){0,3}:(?:\s+|$)/u;

/** A cue's spoken words; `turn` when a speaker marker or label opened it (a sentence boundary). */
export interface SpokenCue {
  start: number;
  end: number;
  text: string;
  turn: boolean;
}

/** The cue's words without sound descriptions, notes or speaker markup; empty when it had none. */
function spoken(text: string): { text: string; turn: boolean } {
  let rest = text.replace(BRACKETED, ' ').replace(CAPITAL_PARENTHESES, ' ').replace(NOTES, ' ').replace(/\s+/g, ' ').trim();
  const marker = MARKERS.exec(rest);
  if (marker) rest = rest.slice(marker[0].length);
  const label = LABEL.exec(rest);
  const labelled = label !== null && label[0].trimEnd().length > 2; // "I:" is no name
  if (labelled) rest = rest.slice(label[0].length);
  return { text: rest.trim(), turn: marker !== null || labelled };
}

/** The cues that have spoken words, in order of start, with only those words. */
export function spokenCues(cues: readonly TranscriptCue[]): SpokenCue[] {
  const out: SpokenCue[] = [];
  for (const cue of cues) {
    const { text, turn } = spoken(cue.text);
    // Real files have cues ending before they start; such a cue lasts until its start.
    if (text) out.push({ start: cue.start, end: Math.max(cue.start, cue.end), text, turn });
  }
  // The codec hands them over in order; a stable sort keeps it so for any other caller.
  return out.sort((a, b) => a.start - b.start);
}

/** Every cue's text as written, for a transcript with no spoken words: all it has are sound descriptions. */
export function soundDescriptions(cues: readonly TranscriptCue[]): Array<{ start: number; text: string }> {
  const out: Array<{ start: number; text: string }> = [];
  for (const cue of cues) {
    const text = cue.text.replace(/\s+/g, ' ').trim();
    if (text) out.push({ start: cue.start, text });
  }
  return out;
}

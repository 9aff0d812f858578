/**
 * What one caption's text holds besides the words said, by the conventions captioners write in:
 * sound descriptions and lyrics ([Music], (APPLAUSE), ♪ la la ♪), speaker turns (a ">>" left in
 * the line, dialogue dashes) and speaker labels ("MIRA MURATI:", "Anna:").
 */
import { spokenCues } from '../subtitles/stageDirections.ts';

/** Part of a caption: a stage direction (kept as written), or speech that may open a turn, maybe with a label. */
export type CaptionPart =
  | { kind: 'direction'; text: string }
  | { kind: 'speech'; text: string; marked: boolean; label: SpeakerLabel | null };

interface SpeakerLabel {
  name: string;
  /** The label as written ("Anna:"), to put back when it turns out to be no name. */
  written: string;
  /** Capitals ("MIRA MURATI:"), or right after a turn marker: a label for sure. "Note:" at a caption's start may be a word. */
  certain: boolean;
}

// Candidates for what nobody says: a bracketed or parenthesised span, or music notes up to the next
// notes (or the caption's end) with the lyrics between them.
const SPANS = /\[[^\]]*\]|\([^()]*\)|[♩♪♫♬🎵🎶][^♩♪♫♬🎵🎶]*(?:[♩♪♫♬🎵🎶]+|$)/gu;
// Turn markers: ">>" anywhere (normaliseCues takes only a line's leading one), a dash opening a
// caption that follows a sentence's end, and a dash after a sentence's end ("Where? - Home.") or
// anywhere in a caption that opened with one (two speakers' lines joined). A dash inside a sentence
// ("well - never mind", Russian "X — это Y" wrapped onto a new caption) is punctuation.
const TURNS = /(?:^|\s)(?:>>\s*)+|(?<=[.!?…]["'”’»)\]]*)\s+[-–—]\s+/gu;
const DIALOGUE_TURNS = /(?:^|\s)(?:>>\s*)+|(?:^|\s)[-–—]\s+/gu;
const OPENING_DASH = /^(?:\[[^\]]*\]\s*)*[-–—]\s/;
// Up to four capitalised words and a colon before a space: "DR. SMITH:", "Anna Lee:"; never a time
// ("10:30") or a URL ("HTTPS://"), which have no space after the colon or start with a digit.
const LABEL = /^(\p{Lu}[\p{L}\p{M}'’.-]*(?: \p{Lu}[\p{L}\p{M}'’.-]*){0,3}):(?:\s+|$)/u;
const LETTER = /\p{L}/gu;

/** Whether a parenthesised span is a sound description: the offline summaries' rule decides, "(APPLAUSE)" yes, "(which is true)" no. */
const saysNothing = (span: string) => spokenCues([{ start: 0, end: 0, text: span }]).length === 0;

/** The text's stage directions and the speech between them, in order (also for a model's paragraphs). */
export function splitDirections(text: string): Array<{ direction: boolean; text: string }> {
  const out: Array<{ direction: boolean; text: string }> = [];
  let at = 0;
  for (const match of text.matchAll(SPANS)) {
    if (match[0].startsWith('(') && !saysNothing(match[0])) continue;
    out.push({ direction: false, text: text.slice(at, match.index).trim() }, { direction: true, text: match[0].trim() });
    at = match.index + match[0].length;
  }
  out.push({ direction: false, text: text.slice(at).trim() });
  return out.filter((part) => part.text.length > 0);
}

/** A label at the start of `text`, if it has one of at least two letters ("I:" and "Q:" are not names). */
function readLabel(text: string, marked: boolean): { label: SpeakerLabel; rest: string } | null {
  const match = LABEL.exec(text);
  if (!match) return null;
  const name = match[1]!;
  const letters = name.match(LETTER)?.length ?? 0;
  if (letters < 2) return null;
  const capitals = name === name.toUpperCase();
  return { label: { name, written: match[0].trim(), certain: capitals || marked }, rest: text.slice(match[0].length) };
}

/** One speech run cut at its turn markers; a label is read where a turn opens, or at the caption's start. */
function splitTurns(text: string, dialogue: boolean, captionStart: boolean): CaptionPart[] {
  const runs: Array<{ text: string; marked: boolean }> = [];
  let at = 0;
  let marked = false;
  for (const match of text.matchAll(dialogue ? DIALOGUE_TURNS : TURNS)) {
    runs.push({ text: text.slice(at, match.index), marked });
    at = match.index + match[0].length;
    marked = true;
  }
  runs.push({ text: text.slice(at), marked });
  const out: CaptionPart[] = [];
  runs.forEach((run, index) => {
    const trimmed = run.text.trim();
    const labelled = run.marked || (index === 0 && captionStart) ? readLabel(trimmed, run.marked) : null;
    const rest = labelled ? labelled.rest.trim() : trimmed;
    // A lone marker or label still opens a turn: its words follow in the next caption.
    if (rest || run.marked || labelled) out.push({ kind: 'speech', text: rest, marked: run.marked, label: labelled?.label ?? null });
  });
  return out;
}

/**
 * A caption's text (one line, as normaliseCues leaves it) as stage directions and speech parts, in
 * order. `midSentence`: the caption before ended without a sentence's end, so a dash opening this
 * one continues that sentence.
 */
export function readCaption(text: string, midSentence: boolean): CaptionPart[] {
  const parts: CaptionPart[] = [];
  const dialogue = !midSentence && OPENING_DASH.test(text);
  for (const part of splitDirections(text)) {
    if (part.direction) parts.push({ kind: 'direction', text: part.text });
    else parts.push(...splitTurns(part.text, dialogue, !parts.some((earlier) => earlier.kind === 'speech' && earlier.text)));
  }
  return parts;
}

/**
 * A transcript's cues read into what a stenogram is written from: stage directions, and speech in
 * pieces of at most a few sentences, each with its speaker and whether a turn or a pause opens it.
 * Both generators read a transcript this way; the LLM's prompt lines are made of these pieces too.
 */
import { createTokeniser, type Tokeniser } from '../text/tokenise.ts';
import { readCaption, type CaptionPart } from './captionText.ts';
import { withoutRollUp } from './rollUp.ts';
import { wordSpans } from './words.ts';
import { speakerLabeller } from './speakerLabels.ts';
import type { StenogramCue } from './stenogram.ts';
import { stenogramLanguage } from './stenogramLanguage.ts';

// A silence longer than this between cues starts a paragraph: the speaker stopped, or the subject did.
const PAUSE_SECONDS = 2;
// A piece of speech holds at most this many words (a long caption without punctuation is cut), so a
// paragraph can end near the length it aims at, and a prompt line stays short.
const MAX_PIECE_WORDS = 60;
const SENTENCE_BREAK = /(?<=[.!?…。！？]["'”’»)\]]*)\s+/u;
const SENTENCE_END = /[.!?…。！？]["'”’»)\]]*$/u;

/** Some consecutive words of one caption; `sentenceEnd` when they end with a full stop or the like. */
interface Fragment {
  text: string;
  words: number;
  sentenceEnd: boolean;
}

export type Piece =
  | { kind: 'direction'; start: number; text: string }
  | {
      kind: 'speech';
      /** Seconds: the start of the cue the words are in. */
      start: number;
      speaker: string;
      /** A marker or label opened this speech (`named`: a label). */
      turn: boolean;
      named: boolean;
      /** A silence of more than PAUSE_SECONDS came before it. */
      pause: boolean;
      fragments: Fragment[];
    };

export interface Transcript {
  language: string;
  tokeniser: Tokeniser;
  pieces: Piece[];
}

/**
 * Labels that may be words ("Note:" opening a caption) are names where the captions label their
 * speakers: when a label is certain (capitals, after a marker) or recurs. Elsewhere they are words.
 */
function confirmLabels(captions: CaptionPart[][]): void {
  const labelled = captions.flat().flatMap((part) => (part.kind === 'speech' && part.label ? [{ part, label: part.label }] : []));
  const seen = new Map<string, number>();
  for (const { label } of labelled) seen.set(label.name, (seen.get(label.name) ?? 0) + 1);
  if (labelled.some(({ label }) => label.certain || seen.get(label.name)! >= 2)) return;
  for (const { part, label } of labelled) {
    part.text = part.text ? `${label.written} ${part.text}` : label.written;
    part.label = null;
  }
}

/** Speech as fragments at sentence ends, none over MAX_PIECE_WORDS words. */
function fragmentsOf(text: string, tokeniser: Tokeniser): Fragment[] {
  const out: Fragment[] = [];
  for (const sentence of text.split(SENTENCE_BREAK)) {
    const words = wordSpans(sentence, tokeniser);
    const sentenceEnd = SENTENCE_END.test(sentence);
    if (words.length <= MAX_PIECE_WORDS) {
      if (sentence) out.push({ text: sentence, words: words.length, sentenceEnd });
      continue;
    }
    for (let k = 0; k < words.length; k += MAX_PIECE_WORDS) {
      const to = k + MAX_PIECE_WORDS < words.length ? words[k + MAX_PIECE_WORDS]!.index : sentence.length;
      const last = to === sentence.length;
      out.push({
        text: sentence.slice(k === 0 ? 0 : words[k]!.index, to).trim(),
        words: Math.min(MAX_PIECE_WORDS, words.length - k),
        sentenceEnd: last && sentenceEnd,
      });
    }
  }
  return out;
}

/** Fragments grouped into pieces of at most MAX_PIECE_WORDS words. */
function groupFragments(fragments: Fragment[]): Fragment[][] {
  const groups: Fragment[][] = [];
  let words = Infinity;
  for (const fragment of fragments) {
    if (words + fragment.words > MAX_PIECE_WORDS) {
      groups.push([]);
      words = 0;
    }
    groups.at(-1)!.push(fragment);
    words += fragment.words;
  }
  return groups;
}

/** The cues in time order (stably: cues of one time keep theirs), as normaliseCues leaves them. */
function inOrder(cues: readonly StenogramCue[]): readonly StenogramCue[] {
  const sorted = cues.every((cue, i) => i === 0 || cues[i - 1]!.start <= cue.start);
  return sorted ? cues : [...cues].sort((a, b) => a.start - b.start);
}

/** The transcript read: its language (the valid hint, else detected), and its pieces in order. */
export function readTranscript(input: { language: string | null; cues: readonly StenogramCue[] }): Transcript {
  const cues = inOrder(input.cues);
  const texts = withoutRollUp(cues);
  // The flag is the caption's leading ">>" that normaliseCues took away: read as written, it opens a turn there.
  let midSentence = false;
  const captions = texts.map((text, index) => {
    const parts = readCaption(cues[index]!.speakerChange ? `>> ${text}` : text, midSentence);
    for (const part of parts) if (part.kind === 'speech' && part.text) midSentence = !SENTENCE_END.test(part.text);
    return parts;
  });
  confirmLabels(captions);
  const spoken = captions.flatMap((parts) => parts.flatMap((part) => (part.kind === 'speech' && part.text ? [part.text] : [])));
  const language = stenogramLanguage(input.language, spoken.join(' '));
  const tokeniser = createTokeniser(language);

  const speakers = speakerLabeller(language);
  const pieces: Piece[] = [];
  // A turn whose words are in a later caption (a lone ">>", "ANNA:" at a line's end) waits for them.
  let pending: { turn: boolean; name: string | null } = { turn: false, name: null };
  let heard = -Infinity;
  cues.forEach((cue, index) => {
    const parts = captions[index]!;
    let pause = cue.start - heard > PAUSE_SECONDS;
    // Cues overlap in live captions: the silence is after the last one that was still on.
    heard = Math.max(heard, cue.end, cue.start);
    for (const part of parts) {
      if (part.kind === 'direction') {
        pieces.push({ kind: 'direction', start: cue.start, text: part.text });
        continue;
      }
      const turn = pending.turn || part.marked || part.label !== null;
      const name = part.label?.name ?? pending.name;
      if (!part.text) {
        pending = { turn, name };
        continue;
      }
      pending = { turn: false, name: null };
      const speaker = speakers.next(turn, name);
      groupFragments(fragmentsOf(part.text, tokeniser)).forEach((fragments, at) => {
        const opens = at === 0;
        pieces.push({
          kind: 'speech',
          start: cue.start,
          speaker,
          turn: opens && turn,
          named: opens && name !== null,
          pause: opens && pause,
          fragments,
        });
      });
      pause = false;
    }
  });
  return { language, tokeniser, pieces };
}

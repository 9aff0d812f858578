/**
 * Sentence-sized units of a transcript, the things that are ranked and quoted. Punctuation decides
 * where there is some (Intl.Segmenter's sentence rules, per language); auto captions have none, so
 * an over-long "sentence" is cut between cues, at the longest pause within a word-count window.
 */
import { joinText } from './displayText.ts';
import type { SpokenCue } from '../../subtitles/stageDirections.ts';
import type { Tokeniser, Word } from '../../text/tokenise.ts';

// A unit has 12-40 words when cut by count; a punctuated sentence under 6 words joins a neighbour.
const MIN_WORDS = 12;
const MAX_WORDS = 40;
const TARGET_WORDS = 24;
const SHORT_SENTENCE = 6;
// Seconds of pause worth one word of distance from the target length when choosing a cut.
const PAUSE_PER_WORD = 0.02;
// A sentence seldom ends on a function word ("…as hard as a", "…с"): a cut there costs as much as a second's pause.
const FUNCTION_WORD_END = 1;

export interface Unit {
  text: string;
  /** Seconds: the start of the unit's first cue. */
  start: number;
  end: number;
  words: Word[];
}

/** Part of one cue's text inside one unit, with its words (segmented once, reused for the unit). */
interface Piece {
  cue: number;
  text: string;
  words: Word[];
  opensTurn: boolean;
}
type Proto = Piece[];

const endsOnFunctionWord = (piece: Piece) => piece.words.length > 0 && piece.words.at(-1)!.term === null;
const wordCount = (pieces: readonly Piece[]) => pieces.reduce((sum, piece) => sum + piece.words.length, 0);

/** Runs of cues between speaker turns, as [from, to) cue indexes. */
function turnBlocks(cues: readonly SpokenCue[]): Array<[number, number]> {
  const blocks: Array<[number, number]> = [];
  let from = 0;
  for (let i = 1; i <= cues.length; i++) {
    if (i === cues.length || cues[i]!.turn) {
      blocks.push([from, i]);
      from = i;
    }
  }
  return blocks;
}

/** The sentences of one block, each as the pieces of the cues it spans. */
function blockSentences(
  cues: readonly SpokenCue[],
  [from, to]: [number, number],
  tokeniser: Tokeniser,
  sentences: Intl.Segmenter,
): Proto[] {
  const starts: number[] = [];
  let text = '';
  for (let i = from; i < to; i++) {
    if (text) text += ' ';
    starts.push(text.length);
    text += cues[i]!.text;
  }
  const out: Proto[] = [];
  let cue = 0;
  for (const { index, segment } of sentences.segment(text)) {
    const end = index + segment.length;
    const pieces: Piece[] = [];
    while (cue + 1 < starts.length && starts[cue + 1]! <= index) cue++;
    for (let c = cue; c < starts.length && starts[c]! < end; c++) {
      const cueEnd = starts[c]! + cues[from + c]!.text.length;
      const part = text.slice(Math.max(index, starts[c]!), Math.min(end, cueEnd)).trim();
      if (part)
        pieces.push({ cue: from + c, text: part, words: tokeniser.words(part), opensTurn: c === 0 && index === 0 && cues[from]!.turn });
    }
    if (pieces.length > 0) out.push(pieces);
  }
  return out;
}

/** A piece of more than MAX_WORDS words (a long cue without punctuation) as pieces of about TARGET_WORDS. */
function chopPiece(piece: Piece, tokeniser: Tokeniser): Piece[] {
  const { words } = piece;
  if (words.length <= MAX_WORDS) return [piece];
  const size = Math.ceil(words.length / Math.ceil(words.length / TARGET_WORDS));
  const out: Piece[] = [];
  for (let k = 0; k < words.length; k += size) {
    const from = k === 0 ? 0 : words[k]!.index;
    const to = k + size < words.length ? words[k + size]!.index : piece.text.length;
    const text = piece.text.slice(from, to).trim();
    out.push({ cue: piece.cue, text, words: tokeniser.words(text), opensTurn: piece.opensTurn && k === 0 });
  }
  return out;
}

/** A sentence of more than MAX_WORDS words cut between pieces: in each window of MIN..MAX words, after the longest pause. */
function splitLong(sentence: Proto, cues: readonly SpokenCue[], tokeniser: Tokeniser): Proto[] {
  if (wordCount(sentence) <= MAX_WORDS) return [sentence];
  const pieces = sentence.flatMap((piece) => chopPiece(piece, tokeniser));
  const pauseAfter = (j: number) => (j + 1 < pieces.length ? cues[pieces[j + 1]!.cue]!.start - cues[pieces[j]!.cue]!.end : 0);
  const out: Proto[] = [];
  let left = wordCount(pieces);
  let i = 0;
  while (i < pieces.length) {
    if (left <= MAX_WORDS) {
      out.push(pieces.slice(i));
      break;
    }
    let words = 0;
    let cut = -1;
    let fallback = i; // the longest run within MAX_WORDS, for when no cut fits the rules
    let best = -Infinity;
    for (let j = i; j < pieces.length; j++) {
      words += pieces[j]!.words.length;
      if (words > MAX_WORDS && j > i) break;
      fallback = j;
      // A cut needs MIN_WORDS on both sides (left > MAX_WORDS here, so something is left).
      if (words < MIN_WORDS || left - words < MIN_WORDS) continue;
      const score =
        pauseAfter(j) - Math.abs(words - TARGET_WORDS) * PAUSE_PER_WORD - (endsOnFunctionWord(pieces[j]!) ? FUNCTION_WORD_END : 0);
      if (score > best) [best, cut] = [score, j];
    }
    if (cut < 0) cut = fallback;
    const unit = pieces.slice(i, cut + 1);
    out.push(unit);
    left -= wordCount(unit);
    i = cut + 1;
  }
  return out;
}

/** Sentences under SHORT_SENTENCE words ("Thank you.", "Mr.") joined to the next, or else the previous, within a turn. */
function joinShort(protos: readonly Proto[]): Proto[] {
  const out: Proto[] = [];
  let carry: Proto | undefined;
  for (const proto of protos) {
    let current = proto;
    if (carry) {
      if (!proto[0]!.opensTurn && wordCount(carry) + wordCount(proto) <= MAX_WORDS) current = [...carry, ...proto];
      else out.push(carry);
      carry = undefined;
    }
    if (wordCount(current) < SHORT_SENTENCE) carry = current;
    else out.push(current);
  }
  const last = out.at(-1);
  if (carry && last && !carry[0]!.opensTurn && wordCount(last) + wordCount(carry) <= MAX_WORDS) out[out.length - 1] = [...last, ...carry];
  else if (carry) out.push(carry);
  return out;
}

// Auto captions carry no sentence ends at all; manual ones about one every sentence or two cues.
const SENTENCE_END = /[.!?…。！？](?=\s|$)/gu;

/** Whether the captions are punctuated (manual), rather than a run of words (auto): a sentence end per ten cues at least. */
export function isPunctuated(cues: readonly SpokenCue[]): boolean {
  const ends = cues.reduce((sum, cue) => sum + (cue.text.match(SENTENCE_END)?.length ?? 0), 0);
  return ends * 10 >= cues.length;
}

/** The transcript's units in order; each starts when its first cue does. */
export function buildUnits(cues: readonly SpokenCue[], tokeniser: Tokeniser): Unit[] {
  const sentences = new Intl.Segmenter(tokeniser.locale, { granularity: 'sentence' });
  const protos = turnBlocks(cues).flatMap((block) =>
    blockSentences(cues, block, tokeniser, sentences).flatMap((s) => splitLong(s, cues, tokeniser)),
  );
  return joinShort(protos).map((pieces) => {
    // The pieces joined (by spaces, except in Chinese and Japanese); their words moved to where each piece lands.
    let text = '';
    const words: Word[] = [];
    for (const piece of pieces) {
      text = joinText(text, piece.text);
      const at = text.length - piece.text.length;
      for (const word of piece.words) words.push({ index: word.index + at, end: word.end + at, term: word.term });
    }
    return { text, start: cues[pieces[0]!.cue]!.start, end: cues[pieces.at(-1)!.cue]!.end, words };
  });
}

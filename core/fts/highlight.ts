import { escapeHtml } from '../text/escapeHtml.ts';
import { fold } from '../text/fold.ts';
import { isCjkToken, type FtsQuery } from './query.ts';

/** Words as they stand in a text (accents and case kept), each CJK character alone, as tokenize() splits them. */
const WORD = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]|[\p{L}\p{N}\p{M}]+/gu;
const WORD_CHARACTER = /^[\p{L}\p{N}\p{M}]$/u;
// Without the u flag: five times faster to scan for (a page of subtitle search reads 1.7 MB).
const HAS_NOT_ASCII = /[^\x00-\x7f]/;
/** About this many characters of a text of lines are folded at once (hitsInLines): some 60 cues. */
const LINES_BLOCK = 4_096;

/** Whether a code point is part of a word as WORD reads it (NaN, past either end of a text, is not). */
const wordCodes = new Map<number, boolean>();
function isWordCode(code: number): boolean {
  if (code < 128) return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
  if (Number.isNaN(code)) return false;
  let word = wordCodes.get(code);
  if (word === undefined) wordCodes.set(code, (word = WORD_CHARACTER.test(String.fromCodePoint(code))));
  return word;
}
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;
/** Whether the code point that ends just before `at` is part of a word. */
const wordBefore = (text: string, at: number) =>
  isWordCode(at >= 2 && isLowSurrogate(text.charCodeAt(at - 1)) ? text.codePointAt(at - 2)! : text.charCodeAt(at - 1));

/**
 * What each character other than ASCII folds to, when it folds in place: to as many UTF-16 units as it
 * has, each a word character exactly when it is one, the same alone as inside a word (not Σ, whose lower
 * case depends on where it stands), and neither a combining mark nor CJK (each CJK character is a word of
 * its own, whatever stands beside it). Null when it does not. Code points are few: the map stays small.
 */
const inPlaceFolds = new Map<string, string | null>();
function foldInPlace(character: string): string | null {
  let folded = inPlaceFolds.get(character);
  if (folded !== undefined) return folded;
  const candidate = fold(character);
  const word = WORD_CHARACTER.test(character);
  const keepsPlace =
    candidate.length === character.length &&
    character !== 'Σ' &&
    !isCjkToken(character) &&
    !isCjkToken(candidate) &&
    [...candidate].every((unit) => WORD_CHARACTER.test(unit) === word);
  inPlaceFolds.set(character, (folded = keepsPlace ? candidate : null));
  return folded;
}

/** What each UTF-16 unit of the Basic Multilingual Plane folds to in place (foldInPlace): a unit, NOT_IN_PLACE, or 0 until first met. */
const unitFolds = new Uint32Array(0x10000);
const NOT_IN_PLACE = 0x10000;
const utf16 = new TextDecoder('utf-16le');

/**
 * The text folded with every character where it stood, so a word's place in the folded text is its place
 * in the text; null when some character does not fold in place (see foldInPlace). Unit by unit through a
 * table: a page's titles and descriptions are folded for every search.
 */
function foldedInPlace(text: string): string | null {
  if (!HAS_NOT_ASCII.test(text)) return text.toLowerCase();
  // UTF-16LE bytes written one by one, whatever the machine's byte order.
  const bytes = new Uint8Array(text.length * 2);
  const put = (at: number, unit: number) => {
    bytes[2 * at] = unit & 0xff;
    bytes[2 * at + 1] = unit >> 8;
  };
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code < 128) put(at, code >= 65 && code <= 90 ? code + 32 : code);
    else if (code >= 0xd800 && code <= 0xdfff) {
      // A character beyond the BMP, two units (a lone surrogate: the text is read word by word instead).
      const point = text.codePointAt(at)!;
      if (point <= 0xffff) return null;
      const folded = foldInPlace(String.fromCodePoint(point));
      if (folded === null) return null;
      put(at, folded.charCodeAt(0));
      put(++at, folded.charCodeAt(1));
    } else {
      let folded = unitFolds[code]!;
      if (folded === 0) unitFolds[code] = folded = foldInPlace(String.fromCharCode(code))?.charCodeAt(0) ?? NOT_IN_PLACE;
      if (folded === NOT_IN_PLACE) return null;
      put(at, folded);
    }
  }
  return utf16.decode(bytes);
}

/** A text as parts in order, `marked` where a word the query looks for stands. */
export type Highlight = Array<{ text: string; marked: boolean }>;

/** A highlight as the API sends it: HTML-escaped text, each marked part wrapped in <mark>…</mark>. */
export const highlightHtml = (highlight: Highlight) =>
  highlight.map(({ text, marked }) => (marked ? `<mark>${escapeHtml(text)}</mark>` : escapeHtml(text))).join('');

export interface Highlighter {
  /**
   * The text in parts, each word the query looks for a marked one; with `excerpt`, at most about that many
   * characters around the first match (… where cut). Null when the text is.
   */
  (text: string | null, excerpt?: number): Highlight | null;
  /**
   * Where the words the query looks for stand in a text of many lines (a transcript's cue lines), in
   * order, as if each line were read alone.
   */
  hitsInLines(text: string): Array<{ start: number; end: number }>;
}

export function highlighter(query: FtsQuery): Highlighter {
  const wanted = new Set(query.groups.flat().flatMap((term) => term.tokens));
  const tokens = [...wanted];
  // Folding word by word is what costs (a page of descriptions, a transcript's cues): a text whose folded
  // whole holds none of the tokens has no hit, and each distinct word is folded once.
  const folded = new Map<string, string>();
  const foldWord = (word: string) => {
    let result = folded.get(word);
    if (result === undefined) folded.set(word, (result = fold(word)));
    return result;
  };
  /**
   * The hits in a text folded in place, in order: each token is looked for with indexOf and counts where
   * it stands as a whole word (no word character either side).
   */
  function hitsInPlace(text: string) {
    const found: Array<{ start: number; end: number }> = [];
    for (const token of tokens) {
      for (let at = text.indexOf(token); at !== -1; at = text.indexOf(token, at + 1)) {
        const end = at + token.length;
        if (!wordBefore(text, at) && !isWordCode(text.codePointAt(end) ?? Number.NaN)) found.push({ start: at, end });
      }
    }
    return found.sort((a, b) => a.start - b.start);
  }
  /** The hits in order (in text that does not fold in place, found word by word as they are read). */
  function* hits(text: string) {
    const inPlace = foldedInPlace(text);
    if (inPlace !== null) {
      yield* hitsInPlace(inPlace);
      return;
    }
    const whole = fold(text);
    if (!tokens.some((token) => whole.includes(token))) return;
    for (const m of text.matchAll(WORD)) if (wanted.has(foldWord(m[0]))) yield { start: m.index, end: m.index + m[0].length };
  }

  const highlight = (text: string | null, excerpt?: number): Highlight | null => {
    if (text === null) return null;
    const found = hits(text);
    const firstHit = found.next();
    let from = 0;
    let to = text.length;
    if (excerpt !== undefined && text.length > excerpt) {
      const first = firstHit.done ? 0 : firstHit.value.start;
      from = Math.max(0, first - Math.floor(excerpt / 4));
      if (from > 0) from = text.lastIndexOf(' ', first - 1) >= from ? text.indexOf(' ', from) + 1 : from;
      to = Math.min(text.length, from + excerpt);
      if (to < text.length && text.lastIndexOf(' ', to) > first) to = text.lastIndexOf(' ', to);
    }
    const parts: Highlight = [];
    // Unmarked text joins the unmarked part before it; marked parts stay apart (two CJK characters are two hits).
    const add = (part: string, marked: boolean) => {
      const last = parts.at(-1);
      if (!marked && last && !last.marked) last.text += part;
      else if (part || marked) parts.push({ text: part, marked });
    };
    if (from > 0) add('…', false);
    let at = from;
    // Hits past the excerpt are never read (a long description is not scanned to its end).
    for (let hit = firstHit; !hit.done && hit.value.start < to; hit = found.next()) {
      if (hit.value.start < from || hit.value.end > to) continue;
      add(text.slice(at, hit.value.start), false);
      add(text.slice(hit.value.start, hit.value.end), true);
      at = hit.value.end;
    }
    add(text.slice(at, to) + (to < text.length ? '…' : ''), false);
    return parts;
  };
  /**
   * A block of lines at a time, cut at a line's end (no word or fold crosses one), folded in place; a
   * block with a character that does not fold in place is read line by line. A page of subtitle search
   * (50 thirty-minute transcripts) is matched in 18 ms this way, 24 ms line by line.
   */
  function hitsInLines(text: string) {
    const found: Array<{ start: number; end: number }> = [];
    const add = (hits: Iterable<{ start: number; end: number }>, offset: number) => {
      for (const hit of hits) found.push({ start: offset + hit.start, end: offset + hit.end });
    };
    for (let from = 0; from < text.length; ) {
      const cut = text.indexOf('\n', from + LINES_BLOCK);
      const to = cut === -1 ? text.length : cut;
      const inPlace = foldedInPlace(text.slice(from, to));
      if (inPlace !== null) add(hitsInPlace(inPlace), from);
      else {
        for (let line = from; line <= to; ) {
          const next = text.indexOf('\n', line);
          const end = next === -1 ? to : next; // `to` is a line's end itself
          add(hits(text.slice(line, end)), line);
          line = end + 1;
        }
      }
      from = to + 1;
    }
    return found;
  }
  return Object.assign(highlight, { hitsInLines });
}

import { escapeHtml } from '../text/escapeHtml.ts';
import { fold, isAscii, type FtsQuery } from './query.ts';

/** Words as they stand in a text (accents and case kept), each CJK character alone, as tokenize() splits them. */
const WORD = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]|[\p{L}\p{N}\p{M}]+/gu;
/** A letter or digit of ASCII: what WORD takes of ASCII text (NaN, past either end, is not). */
const isWordCode = (code: number) => (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);

export interface Highlighter {
  /**
   * The text HTML-escaped, each word the query looks for wrapped in <mark>…</mark>; with `excerpt`, at most
   * about that many characters around the first match (… where cut). Null when the text is.
   */
  (text: string | null, excerpt?: number): string | null;
  /** Whether the text holds any word the query looks for. */
  matches(text: string | null): boolean;
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
  const asciiTokens = tokens.filter(isAscii);
  /**
   * The hits in ASCII text, in order: lower case keeps every position there, so each token is looked for
   * with indexOf and counts where it stands as a whole word (no letter or digit either side).
   */
  function asciiHits(text: string) {
    const lower = text.toLowerCase();
    const found: Array<{ start: number; end: number }> = [];
    for (const token of asciiTokens) {
      for (let at = lower.indexOf(token); at !== -1; at = lower.indexOf(token, at + 1)) {
        const end = at + token.length;
        if (!isWordCode(lower.charCodeAt(at - 1)) && !isWordCode(lower.charCodeAt(end))) found.push({ start: at, end });
      }
    }
    return found.sort((a, b) => a.start - b.start);
  }
  /** The hits in order (in text other than ASCII, found as they are read). */
  function* hits(text: string) {
    if (isAscii(text)) {
      yield* asciiHits(text);
      return;
    }
    const whole = fold(text);
    if (!tokens.some((token) => whole.includes(token))) return;
    for (const m of text.matchAll(WORD)) if (wanted.has(foldWord(m[0]))) yield { start: m.index, end: m.index + m[0].length };
  }

  const highlight = (text: string | null, excerpt?: number): string | null => {
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
    let out = from > 0 ? '…' : '';
    let at = from;
    // Hits past the excerpt are never read (a long description is not scanned to its end).
    for (let hit = firstHit; !hit.done && hit.value.start < to; hit = found.next()) {
      if (hit.value.start < from || hit.value.end > to) continue;
      out += `${escapeHtml(text.slice(at, hit.value.start))}<mark>${escapeHtml(text.slice(hit.value.start, hit.value.end))}</mark>`;
      at = hit.value.end;
    }
    return out + escapeHtml(text.slice(at, to)) + (to < text.length ? '…' : '');
  };
  return Object.assign(highlight, { matches: (text: string | null) => text !== null && !hits(text).next().done });
}

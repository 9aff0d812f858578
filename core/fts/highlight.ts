import { escapeHtml } from '../text/escapeHtml.ts';
import { fold, type FtsQuery } from './query.ts';

/** Words as they stand in a text (accents and case kept), each CJK character alone, as tokenize() splits them. */
const WORD = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]|[\p{L}\p{N}\p{M}]+/gu;

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
  const hits = (text: string) => [...text.matchAll(WORD)].filter((m) => wanted.has(fold(m[0]))).map((m) => ({ start: m.index, end: m.index + m[0].length }));

  const highlight = (text: string | null, excerpt?: number): string | null => {
    if (text === null) return null;
    const found = hits(text);
    let from = 0;
    let to = text.length;
    if (excerpt !== undefined && text.length > excerpt) {
      const first = found[0]?.start ?? 0;
      from = Math.max(0, first - Math.floor(excerpt / 4));
      if (from > 0) from = text.lastIndexOf(' ', first - 1) >= from ? text.indexOf(' ', from) + 1 : from;
      to = Math.min(text.length, from + excerpt);
      if (to < text.length && text.lastIndexOf(' ', to) > first) to = text.lastIndexOf(' ', to);
    }
    let out = from > 0 ? '…' : '';
    let at = from;
    for (const hit of found) {
      if (hit.start < from || hit.end > to) continue;
      out += `${escapeHtml(text.slice(at, hit.start))}<mark>${escapeHtml(text.slice(hit.start, hit.end))}</mark>`;
      at = hit.end;
    }
    return out + escapeHtml(text.slice(at, to)) + (to < text.length ? '…' : '');
  };
  return Object.assign(highlight, { matches: (text: string | null) => text !== null && hits(text).length > 0 });
}

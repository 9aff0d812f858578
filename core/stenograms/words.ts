/**
 * The words of transcript text, for counting them, cutting long captions and comparing a model's
 * text with the transcript's. Intl.Segmenter (the summaries' tokeniser) is the only way to find the
 * words of scripts written without spaces, but it costs about 12 µs a word in Node: a two-hour
 * transcript would take a quarter of a second. Text written with spaces is read with a regex instead.
 */
import type { Tokeniser } from '../text/tokenise.ts';

const UNSPACED =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\p{Script=Tibetan}]/u;
// Letters and digits, with apostrophes and the dots and commas of numbers and initials inside: "don't", "3.5", "U.S".
const WORD = /[\p{L}\p{N}\p{M}]+(?:['’.,][\p{L}\p{N}\p{M}]+)*/gu;

export interface WordSpan {
  index: number;
  end: number;
}

/** Where the words of `text` are; the tokeniser segments the text only when it has a script written without spaces. */
export function wordSpans(text: string, tokeniser: Tokeniser): WordSpan[] {
  if (UNSPACED.test(text)) return tokeniser.words(text);
  const spans: WordSpan[] = [];
  for (const match of text.matchAll(WORD)) spans.push({ index: match.index, end: match.index + match[0].length });
  return spans;
}

/**
 * Whether a model's text is the transcript's words, word for word. The measure is the F1 of an
 * in-order alignment: with L the longest common subsequence of the two word sequences, recall is
 * L / transcript words (words dropped or changed), precision L / written words (words added), and
 * the score 2L / (transcript + written). Order counts, unlike a bag of words: moved words are
 * caught. Words are compared lower-cased, NFKC-normalised and without punctuation, so the case and
 * punctuation a model may fix in auto captions cost nothing.
 *
 * FAITHFUL = 0.95, one word in twenty: what a faithful answer may still differ in (a dropped "um",
 * "twenty" written "20", "GPT-4o" split otherwise) costs a word or two a hundred, while a
 * paraphrase, a summary or "corrected" wording costs every reworded phrase's words on both sides and
 * scores far lower (the tests' sentence: 0.98 with a word dropped, 0.58 reworded, 0.21 summarised,
 * 0.87 with its last clause moved to the front). Stricter would throw away good answers for a filler; looser would let a model's
 * rewording stand in a document that promises the words. A chunk below it is written from the
 * transcript itself, which costs only the model's speaker labels and paragraphs for that chunk.
 */
import type { Tokeniser } from '../text/tokenise.ts';
import { wordSpans } from './words.ts';

export const FAITHFUL = 0.95;

/** The words of `text` as they are compared. */
export function comparableWords(text: string, tokeniser: Tokeniser): string[] {
  return wordSpans(text, tokeniser).map((span) => text.slice(span.index, span.end).normalize('NFKC').toLocaleLowerCase(tokeniser.locale).replace(/’/g, "'"));
}

/** The length of the longest common subsequence, in two rows of the usual table (words numbered first, so cells compare integers). */
function commonSubsequence(a: readonly string[], b: readonly string[]): number {
  const ids = new Map<string, number>();
  const id = (word: string) => ids.get(word) ?? ids.set(word, ids.size).size - 1;
  const x = a.map(id);
  const y = Int32Array.from(b, id);
  let previous = new Int32Array(y.length + 1);
  let row = new Int32Array(y.length + 1);
  for (const word of x) {
    for (let j = 1; j <= y.length; j++) row[j] = word === y[j - 1] ? previous[j - 1]! + 1 : Math.max(previous[j]!, row[j - 1]!);
    [previous, row] = [row, previous];
  }
  return previous[y.length]!;
}

/** 2L / (|transcript| + |written|): 1 for the same words in the same order, 0 for none in common. */
export function faithfulness(transcript: readonly string[], written: readonly string[]): number {
  if (transcript.length + written.length === 0) return 1;
  return (2 * commonSubsequence(transcript, written)) / (transcript.length + written.length);
}

/**
 * Whether a model's text is the transcript's words, word for word. The model's words are aligned
 * with the chunk's caption words (an in-order alignment with the fewest words inserted or dropped);
 * between two consecutive words they share lies a gap of caption words the model dropped and of
 * words it wrote that the captions do not have. The text is refused when
 *  - a gap inserts more than MAX_RUN (2) words: three words of the model's own are a phrase;
 *  - a gap drops more than MAX_RUN words;
 *  - words are moved: a moved word is dropped where the captions have it and inserted where the
 *    model put it, so moving a run of three words or more is refused on both counts, while moving
 *    one or two ("it is" written "is it") passes like a changed word does;
 *  - in all, more than one caption word in twenty (at least 4) is dropped, or as many inserted: the
 *    runs alone would let a model add two words after every word it keeps.
 * What a faithful model may still change costs nothing or a short gap: case and punctuation are
 * not compared, nor hesitation sounds ("um", "uh"), which a model may tidy away; "twenty" written
 * "20", "GPT-4o" split otherwise or "gonna" written "going to" is a gap of a word or two.
 *
 * The totals bound the alignment to a band of diagonals (inserted less dropped so far stays within
 * the allowance), so it costs chunk words × (2 × allowance + 1) cells: about 24,000 for a chunk of
 * 480 words, not the 230,000 of the full table.
 */
import type { Tokeniser } from '../text/tokenise.ts';
import { wordSpans } from './words.ts';

const MAX_RUN = 2;
const ALLOWANCE_PER_WORD = 1 / 20;
const MIN_ALLOWANCE = 4;
// Hesitation sounds in English captions; "er" is left out, being a German word.
const HESITATIONS = new Set(['um', 'umm', 'uh', 'uhh', 'uhm', 'erm', 'hm', 'hmm', 'mm', 'mhm']);

/** The words of `text` as they are compared: lower-cased, NFKC-normalised, without punctuation or hesitation sounds. */
export function comparableWords(text: string, tokeniser: Tokeniser): string[] {
  return wordSpans(text, tokeniser)
    .map((span) => text.slice(span.index, span.end).normalize('NFKC').toLocaleLowerCase(tokeniser.locale).replace(/’/g, "'"))
    .filter((word) => !HESITATIONS.has(word));
}

/** Why `written` is not `transcript` word for word, or null when it is. */
export function unfaithfulness(transcript: readonly string[], written: readonly string[]): string | null {
  const ids = new Map<string, number>();
  const id = (word: string) => ids.get(word) ?? ids.set(word, ids.size).size - 1;
  const a = Int32Array.from(transcript, id);
  const b = Int32Array.from(written, id);
  const n = a.length;
  const m = b.length;
  const allowance = Math.max(MIN_ALLOWANCE, Math.ceil(n * ALLOWANCE_PER_WORD));
  if (m - n > allowance) return `${m - n} words more than the transcript's ${n}`;
  if (n - m > allowance) return `${n - m} words fewer than the transcript's ${n}`;

  // cost[i][j - i + allowance]: the fewest words dropped plus inserted to write a[0, i) as b[0, j).
  const width = 2 * allowance + 1;
  const cost = new Int32Array((n + 1) * width).fill(0x3fffffff);
  const at = (i: number, j: number) => i * width + j - i + allowance;
  cost[at(0, 0)] = 0;
  for (let i = 0; i <= n; i++) {
    const row = at(i, 0);
    const above = at(i - 1, 0);
    const last = Math.min(m, i + allowance);
    for (let j = Math.max(0, i - allowance); j <= last; j++) {
      if (i === 0 && j === 0) continue;
      let best = 0x3fffffff;
      if (i > 0 && j - i < allowance) best = cost[above + j]! + 1;
      if (j > 0 && i - j < allowance && cost[row + j - 1]! < best) best = cost[row + j - 1]! + 1;
      if (i > 0 && j > 0 && a[i - 1] === b[j - 1] && cost[above + j - 1]! < best) best = cost[above + j - 1]!;
      cost[row + j] = best;
    }
  }
  const edits = cost[at(n, m)]!;
  // inserted − dropped = m − n and inserted + dropped = edits.
  const inserted = (edits + m - n) / 2;
  const dropped = (edits - m + n) / 2;
  if (inserted > allowance) return `${inserted} words inserted, more than ${allowance} in ${n}`;
  if (dropped > allowance) return `${dropped} words dropped, more than ${allowance} in ${n}`;

  // Back from the end along one cheapest alignment, measuring each gap between shared words.
  let i = n;
  let j = m;
  let gapInserted = 0;
  let gapDropped = 0;
  while (i > 0 || j > 0) {
    const here = cost[at(i, j)]!;
    const shared = i > 0 && j > 0 && a[i - 1] === b[j - 1] && cost[at(i - 1, j - 1)] === here;
    if (shared) {
      gapInserted = 0;
      gapDropped = 0;
      i--;
      j--;
      continue;
    }
    if (i > 0 && j - i + 1 <= allowance && cost[at(i - 1, j)]! + 1 === here) {
      i--;
      if (++gapDropped > MAX_RUN)
        return `${gapDropped} transcript words in a row dropped or moved: "${transcript.slice(i, i + gapDropped).join(' ')}"`;
    } else {
      j--;
      if (++gapInserted > MAX_RUN)
        return `${gapInserted} words in a row inserted or moved: "${written.slice(j, j + gapInserted).join(' ')}"`;
    }
  }
  return null;
}

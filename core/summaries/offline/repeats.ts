/**
 * How much two units say the same thing, for skipping repeats: the larger of their TF-IDF cosine
 * (same subject words) and how much of the shorter one's word trigrams the other has (the same
 * sentence said again, with a different sentence joined to it, which stopwords hide from the cosine).
 */
import type { Unit } from './buildUnits.ts';
import { cosine, type SparseVector } from './tfidf.ts';

function trigrams(unit: Unit): Set<string> {
  const words = unit.words.map((word) => unit.text.slice(word.index, word.end).toLowerCase());
  const out = new Set<string>();
  for (let i = 0; i + 2 < words.length; i++) out.add(`${words[i]} ${words[i + 1]} ${words[i + 2]}`);
  return out;
}

function containment(a: Set<string>, b: Set<string>): number {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  if (small.size === 0) return 0;
  let shared = 0;
  for (const gram of small) if (large.has(gram)) shared++;
  return shared / small.size;
}

/** The measure for `units`; trigram sets are built for the units that get compared, once. */
export function repeatMeasure(units: readonly Unit[], vectors: readonly SparseVector[]): (a: number, b: number) => number {
  const cache = new Map<number, Set<string>>();
  const grams = (unit: number) => {
    let set = cache.get(unit);
    if (!set) cache.set(unit, (set = trigrams(units[unit]!)));
    return set;
  };
  return (a, b) => Math.max(cosine(vectors[a]!, vectors[b]!), containment(grams(a), grams(b)));
}

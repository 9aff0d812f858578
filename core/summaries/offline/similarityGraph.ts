/**
 * The sentence-similarity graph TextRank walks: cosine similarity of TF-IDF vectors (LexRank's
 * weighting), computed only for units that share a term (through the postings), and kept sparse:
 * each unit keeps its MAX_NEIGHBOURS most similar units, the union made symmetric. That bounds the
 * graph at N·MAX_NEIGHBOURS·2 edges whatever the transcript's length.
 */
import type { TfIdf } from './tfidf.ts';

const MAX_NEIGHBOURS = 20;
// Below this a shared term or two is noise rather than a shared subject.
const MIN_SIMILARITY = 0.05;

/** Undirected weighted graph as adjacency lists. */
export interface Graph {
  neighbours: number[][];
  weights: number[][];
}

/** The strongest similarities of `unit`, most similar first (ties by unit order). */
function strongest(unit: number, { vectors, postings }: TfIdf, sums: Float64Array): number[] {
  const touched: number[] = [];
  const { ids, weights } = vectors[unit]!;
  for (let k = 0; k < ids.length; k++) {
    const posting = postings[ids[k]!]!;
    for (let p = 0; p < posting.units.length; p++) {
      const other = posting.units[p]!;
      if (other === unit) continue;
      if (sums[other] === 0) touched.push(other);
      sums[other]! += weights[k]! * posting.weights[p]!;
    }
  }
  const kept = touched.filter((other) => sums[other]! >= MIN_SIMILARITY);
  kept.sort((a, b) => sums[b]! - sums[a]! || a - b);
  return kept.slice(0, MAX_NEIGHBOURS);
}

export function similarityGraph(model: TfIdf): Graph {
  const n = model.vectors.length;
  const edges = Array.from({ length: n }, () => new Map<number, number>());
  const sums = new Float64Array(n);
  for (let unit = 0; unit < n; unit++) {
    const best = strongest(unit, model, sums);
    for (const other of best) {
      edges[unit]!.set(other, sums[other]!);
      edges[other]!.set(unit, sums[other]!);
    }
    sums.fill(0);
  }
  const neighbours = edges.map((map) => [...map.keys()].sort((a, b) => a - b));
  return { neighbours, weights: neighbours.map((list, unit) => list.map((other) => edges[unit]!.get(other)!)) };
}

/** Weighted PageRank (TextRank's ranking step) over an undirected similarity graph. */
import type { Graph } from './similarityGraph.ts';

const DAMPING = 0.85;
const TOLERANCE = 1e-9;
const MAX_ITERATIONS = 200;

/** The stationary score of each node; a node without edges shares its score with all (the teleport). */
export function pageRank({ neighbours, weights }: Graph): Float64Array {
  const n = neighbours.length;
  const strength = weights.map((list) => list.reduce((sum, w) => sum + w, 0));
  let scores = new Float64Array(n).fill(1 / n);
  let next = new Float64Array(n);
  for (let iteration = 0; iteration < MAX_ITERATIONS; iteration++) {
    let dangling = 0;
    for (let i = 0; i < n; i++) if (strength[i] === 0) dangling += scores[i]!;
    next.fill((1 - DAMPING) / n + (DAMPING * dangling) / n);
    for (let j = 0; j < n; j++) {
      if (strength[j] === 0) continue;
      const share = (DAMPING * scores[j]!) / strength[j]!;
      const list = neighbours[j]!;
      const w = weights[j]!;
      for (let k = 0; k < list.length; k++) next[list[k]!]! += share * w[k]!;
    }
    let change = 0;
    for (let i = 0; i < n; i++) change += Math.abs(next[i]! - scores[i]!);
    [scores, next] = [next, scores];
    if (change < TOLERANCE) break;
  }
  return scores;
}

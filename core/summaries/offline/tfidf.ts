/** TF-IDF vectors of the units, each of unit length, with the postings to find units sharing a term. */

/** A sparse vector: term ids ascending, with their weights. */
export interface SparseVector {
  ids: Int32Array;
  weights: Float64Array;
}

export interface TfIdf {
  vectors: SparseVector[];
  /** For each term id, the units that have it and its weight there. */
  postings: Array<{ units: number[]; weights: number[] }>;
}

/** Sublinear term frequency (1 + ln tf) times smooth idf (ln(1 + N/df)), L2-normalised per unit. */
export function tfidf(termsPerUnit: readonly (readonly string[])[]): TfIdf {
  const ids = new Map<string, number>();
  const counts = termsPerUnit.map((terms) => {
    const count = new Map<number, number>();
    for (const term of terms) {
      let id = ids.get(term);
      if (id === undefined) ids.set(term, (id = ids.size));
      count.set(id, (count.get(id) ?? 0) + 1);
    }
    return count;
  });
  const documentFrequency = new Array<number>(ids.size).fill(0);
  for (const count of counts) for (const id of count.keys()) documentFrequency[id]!++;
  const n = termsPerUnit.length;
  const postings = Array.from({ length: ids.size }, () => ({ units: [] as number[], weights: [] as number[] }));
  const vectors = counts.map((count, unit) => {
    const termIds = Int32Array.from(count.keys()).sort();
    const weights = Float64Array.from(termIds, (id) => (1 + Math.log(count.get(id)!)) * Math.log(1 + n / documentFrequency[id]!));
    const norm = Math.hypot(...weights) || 1;
    for (let k = 0; k < termIds.length; k++) {
      weights[k]! /= norm;
      postings[termIds[k]!]!.units.push(unit);
      postings[termIds[k]!]!.weights.push(weights[k]!);
    }
    return { ids: termIds, weights };
  });
  return { vectors, postings };
}

/** The cosine of two unit-length vectors. */
export function cosine(a: SparseVector, b: SparseVector): number {
  let sum = 0;
  for (let i = 0, j = 0; i < a.ids.length && j < b.ids.length; ) {
    const x = a.ids[i]!;
    const y = b.ids[j]!;
    if (x === y) sum += a.weights[i++]! * b.weights[j++]!;
    else if (x < y) i++;
    else j++;
  }
  return sum;
}

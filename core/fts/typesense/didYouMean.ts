import { tokenize, type FtsQuery, type Term } from '../query.ts';

/** Did-you-mean: the query's words corrected to those a typo-tolerant search matched in its best hit. */

/** Every matched_tokens entry of a hit's highlights (either highlight format), as folded words. */
function matchedTokens(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) matchedTokens(item, into);
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key === 'matched_tokens')
        for (const token of [inner].flat(2)) if (typeof token === 'string') for (const word of tokenize(token)) into.add(word);
      if (key !== 'document') matchedTokens(inner, into);
    }
  }
  return into;
}

/** Optimal string alignment distance: edits, with a swap of neighbours counting as one. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/** The word itself when the hit has it, else the hit's closest word within two edits, else the word unchanged. */
function closest(word: string, matched: Set<string>): string {
  if (matched.has(word)) return word;
  let best = word;
  let bestDistance = 3;
  for (const candidate of matched) {
    const distance = editDistance(word, candidate);
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best;
}

/** The query with each searched word replaced by the hit's closest match; null when no word changes. Exclusions stay. */
export function correctedQuery(query: FtsQuery, hit: unknown): FtsQuery | null {
  const matched = matchedTokens(hit);
  let changed = false;
  const correct = (term: Term): Term => {
    const tokens = term.tokens.map((token) => closest(token, matched));
    if (tokens.every((token, index) => token === term.tokens[index])) return term;
    changed = true;
    return { text: tokens.join(' '), tokens };
  };
  const corrected: FtsQuery = { groups: query.groups.map((group) => group.map(correct)), excluded: query.excluded };
  return changed ? corrected : null;
}

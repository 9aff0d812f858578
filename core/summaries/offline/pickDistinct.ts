/**
 * Greedy selection in rank order that skips near-repeats of what is already chosen (maximal
 * marginal relevance with a hard threshold): a talk that says the same thing three times yields
 * it once.
 */

// Similarity (repeats.ts) from which a unit says what a chosen one says.
export const REPEAT = 0.5;

export interface PickOptions {
  /** Already chosen; they count as repeats too. */
  chosen?: readonly number[];
  /** Further limits (a section's quota). */
  allow?: (unit: number, chosen: readonly number[]) => boolean;
  /** Repeats are taken when nothing else is left (to reach `count` on short transcripts). */
  fillWithRepeats?: boolean;
}

/** Up to `count` units (with `chosen`) from `ranked`, best first. */
export function pickDistinct(
  ranked: readonly number[],
  count: number,
  similarity: (a: number, b: number) => number,
  options: PickOptions = {},
): number[] {
  const chosen = [...(options.chosen ?? [])];
  const allow = options.allow ?? (() => true);
  const taken = new Set(chosen);
  const pass = (distinct: boolean) => {
    for (const unit of ranked) {
      if (chosen.length >= count) return;
      if (taken.has(unit) || !allow(unit, chosen)) continue;
      if (distinct && chosen.some((other) => similarity(unit, other) >= REPEAT)) continue;
      chosen.push(unit);
      taken.add(unit);
    }
  };
  pass(true);
  if (options.fillWithRepeats) pass(false);
  return chosen;
}

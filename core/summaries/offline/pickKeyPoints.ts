/**
 * Which units become key points: 3-12 of them (one per 2.5 minutes), spread over the video. Each
 * time section first gives its best unit, then the rest go by rank with at most
 * ceil(1.5·points/sections) from any one section, near-repeats skipped; in video order.
 */
import { pickDistinct } from './pickDistinct.ts';
import type { TimeSections } from './timeSections.ts';

const MIN_POINTS = 3;
const MAX_POINTS = 12;
const SECONDS_PER_POINT = 150;

export interface Ranked {
  /** Unit indexes, best first. */
  order: readonly number[];
  similarity(a: number, b: number): number;
}

/** How many key points a transcript of this length gets (never more than it has candidates). */
export function keyPointCount(durationSeconds: number, candidates: number): number {
  const wanted = Math.min(MAX_POINTS, Math.max(MIN_POINTS, Math.round(durationSeconds / SECONDS_PER_POINT)));
  return Math.max(1, Math.min(wanted, candidates));
}

/** Unit indexes of the key points, in video order. `sectionOf` gives each unit's time section. */
export function pickKeyPoints(ranked: Ranked, sectionOf: (unit: number) => number, sections: TimeSections, count: number): number[] {
  const bestPerSection = new Map<number, number>();
  for (const unit of ranked.order) if (!bestPerSection.has(sectionOf(unit))) bestPerSection.set(sectionOf(unit), unit);
  // Sections in the order of their best unit's rank, so that a cut to `count` keeps the strongest.
  const firsts = [...bestPerSection.values()].slice(0, count);
  const quota = Math.ceil((1.5 * count) / Math.max(1, Math.min(sections.count, bestPerSection.size)));
  const allow = (unit: number, chosen: readonly number[]) => chosen.filter((other) => sectionOf(other) === sectionOf(unit)).length < quota;
  const chosen = pickDistinct(ranked.order, count, ranked.similarity, { chosen: firsts, allow, fillWithRepeats: true });
  return chosen.sort((a, b) => a - b);
}

/**
 * Which units become key points: 3-12 of them (one per 75 seconds), spread over the video as a
 * person's notes are. The video is cut into as many equal slices as there are points; each slice
 * gives its best unit that repeats no chosen one, then the rest go by rank with at most two from
 * any one slice; in video order.
 */
import { pickDistinct, REPEAT } from './pickDistinct.ts';

const MIN_POINTS = 3;
const MAX_POINTS = 12;
const SECONDS_PER_POINT = 75;
const PER_SLICE = 2;

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

/** Unit indexes of the key points, in video order. `startOf` gives each unit's start in seconds. */
export function pickKeyPoints(ranked: Ranked, startOf: (unit: number) => number, durationSeconds: number, count: number): number[] {
  const slice = Math.max(1, durationSeconds) / count;
  const sliceOf = (unit: number) => Math.min(count - 1, Math.floor(startOf(unit) / slice));
  const firsts: number[] = [];
  const filled = new Set<number>();
  for (const unit of ranked.order) {
    if (filled.has(sliceOf(unit)) || firsts.some((other) => ranked.similarity(unit, other) >= REPEAT)) continue;
    filled.add(sliceOf(unit));
    firsts.push(unit);
  }
  const allow = (unit: number, chosen: readonly number[]) => chosen.filter((other) => sliceOf(other) === sliceOf(unit)).length < PER_SLICE;
  const chosen = pickDistinct(ranked.order, count, ranked.similarity, { chosen: firsts.slice(0, count), allow, fillWithRepeats: true });
  return chosen.sort((a, b) => a - b);
}

/**
 * Seeded randomness for generated test and benchmark data (the synthetic corpus, the generated archive,
 * the caption benchmark): a per-item generator, seeded with mix32(seed, index), makes item i independent
 * of the items before it.
 */

/** A small seeded generator (mulberry32): the same seed gives the same sequence, run after run. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A bijection of 32-bit integers that spreads every bit over all others (lowbias32). */
function scramble(value: number): number {
  let x = value >>> 0;
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d);
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b);
  return (x ^ (x >>> 16)) >>> 0;
}

export const mix32 = (a: number, b: number) => scramble(Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x632be5ab, 0xc2b2ae35));
/** Keyed, still a bijection: ids built on it never collide within a seed. */
export const permute32 = (value: number, key: number) => (scramble(value + key) ^ key) >>> 0;

export const normal = (rnd: () => number) => Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
export const between = (rnd: () => number, min: number, max: number) => min + Math.floor(rnd() * (max - min + 1));

export function zipfCdf(size: number, exponent: number, offset: number): Float64Array {
  const cdf = new Float64Array(size);
  let sum = 0;
  for (let rank = 0; rank < size; rank++) cdf[rank] = sum += (rank + 1 + offset) ** -exponent;
  return cdf;
}

export function draw(cdf: Float64Array, rnd: () => number): number {
  const target = rnd() * cdf[cdf.length - 1]!;
  let low = 0;
  let high = cdf.length - 1;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (cdf[middle]! < target) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * Word frequencies of a corpus (in how many videos each token occurs) and, from them, the query mix of
 * the full-text benchmark and of the search-plan tests.
 */
import type { FtsFilters } from '../../core/fts/backend.ts';
import { isCjkToken, tokenize } from '../../core/fts/query.ts';
import type { Corpus } from './corpus.ts';
import { mix32, random } from './random.ts';

export interface FrequencyTable {
  videos: number;
  counts: Int32Array;
  token(id: number): string;
}

/** Counts, per token, the videos it occurs in; `seen` is what to pass to corpus.video. */
export function frequencyCounter(corpus: Corpus) {
  const counts = new Int32Array(corpus.tokenCount);
  const last = new Int32Array(corpus.tokenCount).fill(-1);
  let videos = 0;
  let current = -1;
  return {
    /** Call before generating video `index`. */
    start(index: number) {
      current = index;
      videos += 1;
    },
    seen(id: number) {
      if (last[id] === current) return;
      last[id] = current;
      counts[id]! += 1;
    },
    table: (): FrequencyTable => ({ videos, counts, token: corpus.token }),
  };
}

/** Tokens occurring in between `min` and `max` videos, most frequent first (ties by token). */
export function wordsBetween(table: FrequencyTable, min: number, max: number): Array<{ word: string; videos: number }> {
  const found: Array<{ word: string; videos: number }> = [];
  for (let id = 0; id < table.counts.length; id++) {
    const n = table.counts[id]!;
    if (n >= min && n <= max) found.push({ word: table.token(id), videos: n });
  }
  return found.sort((a, b) => b.videos - a.videos || (a.word < b.word ? -1 : 1));
}

export const QUERY_CLASSES = ['rare', 'common', 'phrase', 'or', 'exclusion'] as const;
export type QueryClass = (typeof QUERY_CLASSES)[number];

/** Filter combinations the "with filters" runs rotate through. */
export const FILTER_SETS: FtsFilters[] = [
  { status: 'live', hasSubtitles: true },
  { hasVideo: true },
  { status: 'deleted' },
  { status: 'live', hasSummary: true },
];

export interface QueryMix {
  queries: Record<QueryClass, string[]>;
  /** The video-count bounds that made a word rare, mid-frequency or common in this corpus. */
  bounds: { rareMax: number; midMin: number; midMax: number; commonMin: number };
  /** Common words and the share of videos they occur in. */
  common: Array<{ word: string; share: number }>;
}

/**
 * Six queries per class, from the corpus's own frequencies: rare words (in at most 0.001 % of videos),
 * very common ones (in ≥ 30 %), phrases taken from generated titles, OR of two or three words, and
 * exclusions of common words or phrases.
 */
export function queryMix(corpus: Corpus, table: FrequencyTable, perClass = 6): QueryMix {
  const n = table.videos;
  const bounds = {
    rareMax: Math.max(3, Math.ceil(n * 1e-5)),
    midMin: Math.ceil(n * 0.001),
    midMax: Math.ceil(n * 0.02),
    commonMin: Math.ceil(n * 0.3),
  };
  const rnd = random(mix32(corpus.seed, 0x9e7));
  const pick = <T>(list: T[], count: number) => {
    const chosen: T[] = [];
    const pool = [...list];
    while (chosen.length < count && pool.length) chosen.push(pool.splice(Math.floor(rnd() * pool.length), 1)[0]!);
    return chosen;
  };
  const latin = (word: string) => /^[\p{Script=Latin}\p{Script=Cyrillic}]{3,}$/u.test(word);
  const rare = wordsBetween(table, 1, bounds.rareMax).map((w) => w.word);
  const mid = wordsBetween(table, bounds.midMin, bounds.midMax)
    .filter((w) => latin(w.word))
    .map((w) => w.word);
  let common = wordsBetween(table, bounds.commonMin, n);
  if (common.length < 2) common = wordsBetween(table, 1, n).slice(0, 4);
  const commonWords = common.map((w) => w.word);
  const c = (i: number) => commonWords[i % commonWords.length]!;
  const m = pick(mid, 12);
  const r = pick(rare, perClass + 3);
  const midWord = (i: number) => m[i % Math.max(1, m.length)] ?? c(i + 1);

  // Adjacent title words, both frequent (in ≥ 1 % of videos) or the second mid-frequency, as a phrase.
  const frequent = new Set(wordsBetween(table, Math.ceil(n * 0.01), n).map((w) => w.word));
  const midSet = new Set(mid);
  const phrases: string[] = [];
  const wanted = [(a: string, b: string) => frequent.has(a) && frequent.has(b), (a: string, b: string) => frequent.has(a) && midSet.has(b)];
  for (let probe = 0; phrases.length < perClass - 1 && probe < 20_000; probe++) {
    const tokens = tokenize(corpus.video(Math.floor(rnd() * n)).title);
    const test = wanted[phrases.length % 2]!;
    for (let i = 0; i + 1 < tokens.length; i++) {
      const phrase = `"${tokens[i]} ${tokens[i + 1]}"`;
      if (!isCjkToken(tokens[i]!) && test(tokens[i]!, tokens[i + 1]!) && tokens[i] !== tokens[i + 1] && !phrases.includes(phrase)) {
        phrases.push(phrase);
        break;
      }
    }
  }
  // A phrase of CJK characters from a Japanese title, when the corpus has one.
  for (let probe = 0; probe < 2_000 && phrases.length < perClass; probe++) {
    const tokens = tokenize(corpus.video(Math.floor(rnd() * n)).title).filter(isCjkToken);
    if (tokens.length >= 2) phrases.push(`"${tokens.slice(0, 2).join('')}"`);
  }

  const queries: Record<QueryClass, string[]> = {
    rare: r.slice(0, perClass),
    common: Array.from({ length: perClass }, (_, i) => (i < commonWords.length ? c(i) : `${c(i)} ${c(i + 1)}`)),
    phrase: phrases,
    or: [
      `${midWord(0)} OR ${midWord(1)}`,
      `${midWord(2)} OR ${midWord(3)}`,
      `${midWord(4)} OR ${midWord(5)} OR ${midWord(6)}`,
      `${c(0)} OR ${midWord(7)}`,
      `${c(1)} OR ${c(2)}`,
      `${r[perClass] ?? midWord(8)} OR ${r[perClass + 1] ?? midWord(9)} OR ${r[perClass + 2] ?? midWord(10)}`,
    ].slice(0, perClass),
    exclusion: [
      `${c(0)} -${c(1)}`,
      `${c(1)} -${c(2)}`,
      `${midWord(8)} -${c(0)}`,
      `${midWord(9)} -${c(2)}`,
      `${c(0)} -${phrases[0] ?? c(3)}`,
      `${c(2)} ${midWord(10)} -${midWord(11)}`,
    ].slice(0, perClass),
  };
  return { queries, bounds, common: common.slice(0, 10).map((w) => ({ word: w.word, share: Math.round((w.videos / n) * 1000) / 1000 })) };
}

import type { Queryable } from '../db/database.ts';
import type { FtsFilters } from './backend.ts';
import type { FtsQuery, Term } from './query.ts';

/**
 * The planner's statistics of `videos` that a search's estimate needs (the fts column's most common lexemes,
 * the filter columns' most common values, the row count), kept in the process so that a search plans without
 * asking the planner first (an EXPLAIN was a round trip of its own). Refreshed in the background once a
 * minute: ANALYZE (autovacuum's) changes them no faster than that matters.
 */
export interface PlanStatistics {
  videos: number;
  /** Share of videos holding each of the most common lexemes. */
  lexemes: Map<string, number>;
  /** What a lexeme not among them is taken for (as the planner does: half the least common one's share, at most 0.5 %). */
  otherLexeme: number;
  /** Per filter column, the share of each of its most common values (text, as pg_stats shows them). */
  values: Map<string, Map<string, number>>;
}

const REFRESH_MS = 60_000;

/** Reads the statistics; null when the table was never analyzed (no lexeme statistics): then ask the planner. */
async function readStatistics(sql: Queryable): Promise<PlanStatistics | null> {
  const rows = await sql<
    { attname: string; elems: string[] | null; elemFreqs: number[] | null; vals: string[] | null; freqs: number[] | null; videos: number }[]
  >`
    select attname::text, most_common_elems::text::text[] as elems, most_common_elem_freqs::float8[] as "elemFreqs",
      most_common_vals::text::text[] as vals, most_common_freqs::float8[] as freqs,
      (select greatest(reltuples, 0)::float8 from pg_class where oid = 'videos'::regclass) as videos
    from pg_stats where schemaname = current_schema() and tablename = 'videos'
      and attname in ('fts', 'status', 'has_video', 'has_subtitles', 'has_summary')`;
  const fts = rows.find((row) => row.attname === 'fts');
  if (!fts?.elems || !fts.elemFreqs) return null;
  const lexemes = new Map(fts.elems.map((lexeme, index) => [lexeme, fts.elemFreqs![index]!]));
  // ts_typanalyze stores the least and the greatest frequency after the elements' own.
  const least = fts.elemFreqs[fts.elems.length] ?? 0;
  const values = new Map(
    rows
      .filter((row) => row.attname !== 'fts')
      .map((row) => [row.attname, new Map((row.vals ?? []).map((value, index) => [value, row.freqs![index]!]))]),
  );
  return { videos: fts.videos, lexemes, otherLexeme: Math.min(0.005, least / 2), values };
}

/** The statistics, read at first use (waited for) and refreshed in the background when older than a minute. */
export function planStatistics(sql: Queryable): () => Promise<PlanStatistics | null> {
  let stats: PlanStatistics | null = null;
  let readAt = 0;
  let reading: Promise<void> | undefined;
  return async () => {
    if (!reading && Date.now() - readAt >= REFRESH_MS) {
      const first = readAt === 0;
      // A read that fails keeps what it would have replaced, and is tried again at the next search.
      reading = readStatistics(sql)
        .then(
          (read) => void ((stats = read), (readAt = Date.now())),
          () => undefined,
        )
        .finally(() => (reading = undefined));
      if (first) await reading;
    }
    return stats;
  };
}

/**
 * The planner's estimate of a query's matches, computed as tsmatchsel does (a lexeme's share, AND and
 * phrases multiplied, OR as either, NOT as the rest) times the filters' shares: the same figure EXPLAIN gave.
 */
export function estimateMatches(stats: PlanStatistics, query: FtsQuery, filters: FtsFilters): number {
  const lexeme = (token: string) => stats.lexemes.get(token) ?? stats.otherLexeme;
  const term = (t: Term) => t.tokens.reduce((share, token) => share * lexeme(token), 1);
  let share = 1;
  for (const group of query.groups) share *= group.reduce((either, t) => either + term(t) - either * term(t), 0);
  for (const t of query.excluded) share *= 1 - term(t);
  const value = (column: string, ...wanted: string[]) => {
    const known = stats.values.get(column);
    return known && known.size > 0 ? wanted.reduce((sum, v) => sum + (known.get(v) ?? 0), 0) : 0.5;
  };
  const flag = (column: string, wanted: boolean | undefined) => (wanted === undefined ? 1 : value(column, wanted ? 't' : 'f'));
  if (filters.status === 'live') share *= value('status', 'live');
  if (filters.status === 'deleted') share *= value('status', 'deleted', 're-uploaded');
  share *= flag('has_video', filters.hasVideo) * flag('has_subtitles', filters.hasSubtitles) * flag('has_summary', filters.hasSummary);
  return Math.max(1, Math.round(share * stats.videos));
}

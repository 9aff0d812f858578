import type { Sql } from '../db/database.ts';
import type { FtsRequest, SearchBackend } from '../fts/backend.ts';
import { parseQuery } from '../fts/query.ts';
import { searchSubtitles } from '../fts/subtitles.ts';
import type { Logger } from '../log.ts';
import { savedQuerySchema, type SavedQuery } from './watchlists.ts';

/** Results one run looks at per query at most: matches further down (older uploads) wait for a narrower query. */
export const RESULTS_PER_RUN = 1_000;
const PAGE_SIZE = 100;

export interface SavedQueryDeps {
  sql: Sql;
  /** The configured backend (Postgres or Typesense); subtitle searches are always Postgres. */
  search: SearchBackend;
  timeoutMs: number;
  log: Logger;
}

/**
 * Re-runs every saved query and records its new matches. A query's first run (last_run_at null) records
 * what matched when it was saved as its baseline, silently; every match stored since, and at later runs
 * every video not matched before, appends a `query.new_match` change. Each run reads at most RESULTS_PER_RUN results per query, newest first, and
 * stops at the first page holding only known matches. A query whose search fails is tried again by the
 * job's retry (the task throws after the others ran); the others' matches are kept.
 */
export async function runSavedQueries(deps: SavedQueryDeps): Promise<{ queries: number; newMatches: number; failed: number }> {
  const queries = await deps.sql<{ id: string; query: unknown }[]>`select id::text, query from saved_queries order by id`;
  let newMatches = 0;
  let failed = 0;
  for (const row of queries) {
    const parsed = savedQuerySchema.safeParse(row.query);
    if (!parsed.success) {
      deps.log.warn('saved query unreadable, skipped', { savedQueryId: row.id, error: parsed.error.message });
      continue;
    }
    try {
      newMatches += await runSavedQuery(deps, row.id, parsed.data);
    } catch (error) {
      failed += 1;
      deps.log.warn('saved query failed', { savedQueryId: row.id, error: (error as Error).message });
    }
  }
  return { queries: queries.length, newMatches, failed };
}

/** One saved query's run: its unknown results, then their record (and changes) in one transaction. Answers the changes appended. */
async function runSavedQuery(deps: SavedQueryDeps, id: string, query: SavedQuery): Promise<number> {
  const [state] = await deps.sql<{ baseline: boolean }[]>`select last_run_at is null as baseline from saved_queries where id = ${id}`;
  if (!state) return 0;
  const found = await unknownResults(deps, id, query, state.baseline);
  return deps.sql.begin(async (tx) => {
    // Locked: a run beside this one waits, then finds these matches known (and the baseline taken).
    const [locked] = await tx`select 1 from saved_queries where id = ${id} for update`;
    if (!locked) return 0; // no longer watched: forgotten meanwhile
    const [{ changes }] = await tx<[{ changes: number }]>`
      with added as (
        insert into saved_query_matches (saved_query_id, video_id)
        select ${id}, video_id from videos where video_id = any(${found}::text[])
        on conflict do nothing
        returning video_id
      ), logged as (
        insert into changes (kind, video_id, channel_id, saved_query_id, happened_at, details)
        select 'query.new_match', v.video_id, v.channel_id, ${id}, now(), jsonb_strip_nulls(jsonb_build_object('title', v.title, 'query', ${query.q}::text))
        from added join videos v using (video_id) join saved_queries q on q.id = ${id}
        -- The baseline is what matched when the query was saved: a video stored since is news even at the first run.
        where q.last_run_at is not null or v.first_seen_at > q.created_at
        -- Oldest first, so the newest upload has the newest change.
        order by v.upload_date nulls first, v.video_id
        returning 1
      )
      select count(*)::int as changes from logged`;
    await tx`update saved_queries set last_run_at = now() where id = ${id}`;
    return changes;
  });
}

/**
 * The query's results not yet among its matches, newest first, a page at a time up to RESULTS_PER_RUN;
 * after the baseline a page of known matches only ends the walk (what follows is older still).
 */
async function unknownResults(deps: SavedQueryDeps, id: string, query: SavedQuery, baseline: boolean): Promise<string[]> {
  const { q, in: where, ...filters } = query;
  const parsedQuery = parseQuery(q);
  const unseen: string[] = [];
  for (let offset = 0; offset < RESULTS_PER_RUN; offset += PAGE_SIZE) {
    const request: FtsRequest = { query: parsedQuery, filters, sort: 'date-desc', offset, limit: PAGE_SIZE };
    const { videoIds } =
      where === 'subtitles' ? await searchSubtitles(deps.sql, request, deps.timeoutMs) : await deps.search.search(request);
    const known = new Set(
      (
        await deps.sql<{ videoId: string }[]>`
          select video_id as "videoId" from saved_query_matches where saved_query_id = ${id} and video_id = any(${videoIds})`
      ).map((row) => row.videoId),
    );
    const fresh = videoIds.filter((videoId) => !known.has(videoId));
    unseen.push(...fresh);
    if (videoIds.length < PAGE_SIZE || (fresh.length === 0 && !baseline)) break;
  }
  return unseen;
}

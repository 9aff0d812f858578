import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FILTER_SETS, QUERY_CLASSES, frequencyCounter, queryMix, type QueryMix } from '../kit/corpus-queries.ts';
import { writeCorpus } from '../kit/corpus-write.ts';
import { createCorpus } from '../kit/corpus.ts';
import { FTS_SORTS, type FtsFilters, type SearchBackend } from '../../core/fts/backend.ts';
import { createPostgresBackend } from '../../core/fts/postgres.ts';
import { parseQuery } from '../../core/fts/query.ts';
import { loadVideoJson } from '../../core/videos/loadVideos.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

/**
 * The Postgres backend answers a query by one of three plans: all matches (at most a cap), a bounded walk
 * of the order's index when the planner expects many matches, or an unbounded walk when there are more than
 * the cap. With the cap and the ranked pool set low, a small generated archive takes every plan, and each
 * must give the page that reading every match would.
 */
const VIDEOS = 3_000;
const PAGE = 20;
let db: TestDatabase;
let mix: QueryMix;
let exact: SearchBackend;
let walking: SearchBackend;
let pooled: SearchBackend;

beforeAll(async () => {
  db = await createTestDatabase();
  const corpus = createCorpus({ seed: 5, videos: VIDEOS, channels: 20, vocabularyDir: null });
  const counter = frequencyCounter(corpus);
  await writeCorpus(db.sql, corpus, { counter });
  await db.sql`analyze videos`;
  mix = queryMix(corpus, counter.table(), 2);
  exact = createPostgresBackend({ sql: db.sql, timeoutMs: 5_000, allMatchesCap: VIDEOS });
  walking = createPostgresBackend({ sql: db.sql, timeoutMs: 5_000, allMatchesCap: 20, rankedPool: VIDEOS, rankWalkRows: 10 * VIDEOS });
  pooled = createPostgresBackend({ sql: db.sql, timeoutMs: 5_000, allMatchesCap: 20, rankedPool: 30 });
}, 60_000);
afterAll(async () => {
  await db?.drop();
});

const filterSets: FtsFilters[] = [{}, ...FILTER_SETS];

describe('Postgres search plans', () => {
  it('give the pages of the all-matches plan, in every sort, with and without filters', async () => {
    let broad = 0;
    for (const queryClass of QUERY_CLASSES) {
      for (const q of mix.queries[queryClass]) {
        for (const filters of filterSets) {
          for (const sort of FTS_SORTS) {
            for (const offset of [0, 2 * PAGE]) {
              const request = { query: parseQuery(q), filters, sort, offset, limit: PAGE };
              const [want, got] = await Promise.all([exact.search(request), walking.search(request)]);
              expect(got.videoIds, `${q} ${JSON.stringify(filters)} ${sort} @${offset}`).toEqual(want.videoIds);
              expect(want.totalExact).toBe(true);
              if (want.total <= 20) expect(got).toMatchObject({ total: want.total, totalExact: true });
              else {
                broad += 1;
                expect(got.totalExact).toBe(false);
                expect(got.total).toBeGreaterThan(20);
              }
            }
          }
        }
      }
    }
    expect(broad).toBeGreaterThan(100);
  }, 120_000);

  it('rank the most viewed matches of a broad query, then continue by views, each match once', async () => {
    // shortHead ranks what it finds among the 200 most viewed videos: fewer than its pool for sparse queries.
    const shortHead = createPostgresBackend({ sql: db.sql, timeoutMs: 5_000, allMatchesCap: 20, rankedPool: 30, rankWalkRows: 200 });
    let checked = 0;
    for (const q of [...mix.queries.common, ...mix.queries.phrase]) {
      for (const filters of [{}, { status: 'live' as const }]) {
        const request = { query: parseQuery(q), filters, sort: 'relevance' as const };
        const all = await exact.search({ ...request, sort: 'date-desc', offset: 0, limit: VIDEOS });
        if (all.total < 100) continue;
        checked += 1;
        const byViews = (
          await db.sql<{ video_id: string }[]>`
          select video_id from videos where video_id = any(${all.videoIds}) order by view_count desc nulls last, video_id`
        ).map((row) => row.video_id);
        for (const backend of [pooled, shortHead]) {
          const pages: string[] = [];
          for (let offset = 0; offset < 80; offset += PAGE)
            pages.push(...(await backend.search({ ...request, offset, limit: PAGE })).videoIds);
          expect(new Set(pages).size, q).toBe(pages.length);
          expect(new Set(pages.slice(0, 30)), q).toEqual(new Set(byViews.slice(0, 30)));
          expect(pages.slice(30), q).toEqual(byViews.slice(30, 80));
        }
      }
    }
    expect(checked).toBeGreaterThan(2);
  }, 60_000);

  it('read the videos of a page with its matches, in one statement, when they are wanted', async () => {
    let statements = 0;
    const counted = createPostgresBackend({ sql: db.sql, timeoutMs: 5_000, allMatchesCap: VIDEOS });
    // Its first search reads the planner's statistics (kept afterwards).
    await counted.search({ query: parseQuery(mix.queries.rare[0]!), filters: {}, sort: 'relevance', offset: 0, limit: PAGE });
    db.sql.options.debug = () => void (statements += 1);
    let pages = 0;
    try {
      for (const q of [...mix.queries.rare, ...mix.queries.phrase, ...mix.queries.exclusion]) {
        for (const sort of FTS_SORTS) {
          const request = { query: parseQuery(q), filters: {}, sort, offset: 0, limit: PAGE };
          const without = await exact.search(request);
          statements = 0;
          const found = await counted.search({ ...request, withVideos: true });
          expect(statements, q).toBe(1);
          expect(found.videoIds).toEqual(without.videoIds);
          expect(found.videos, q).toEqual(await loadVideoJson(db.sql, without.videoIds));
          pages += found.videos!.length > 0 ? 1 : 0;
        }
      }
    } finally {
      db.sql.options.debug = false;
    }
    expect(pages).toBeGreaterThan(5);
  });

  it('read the videos of a broad page in the statement that walks to it: no statement more than its ids alone', async () => {
    let statements = 0;
    let broad = 0;
    for (const backend of [walking, pooled]) {
      await backend.search({ query: parseQuery(mix.queries.common[0]!), filters: {}, sort: 'relevance', offset: 0, limit: PAGE });
      db.sql.options.debug = () => void (statements += 1);
      try {
        for (const q of [...mix.queries.common, ...mix.queries.or, ...mix.queries.exclusion]) {
          for (const sort of FTS_SORTS) {
            // Inside the ranked head, past it, and (pooled's head of 30) across its end.
            for (const offset of [0, 25, 2 * PAGE]) {
              const request = { query: parseQuery(q), filters: {}, sort, offset, limit: PAGE };
              statements = 0;
              const ids = await backend.search(request);
              const idStatements = statements;
              statements = 0;
              const found = await backend.search({ ...request, withVideos: true });
              const label = `${q} ${sort} @${offset}`;
              expect(statements, label).toBe(idStatements);
              expect(found.videoIds, label).toEqual(ids.videoIds);
              expect(found.videos, label).toEqual(await loadVideoJson(db.sql, ids.videoIds));
              if (!found.totalExact && found.videoIds.length > 0) broad += 1;
            }
          }
        }
      } finally {
        db.sql.options.debug = false;
      }
    }
    expect(broad).toBeGreaterThan(20);
  }, 60_000);
});

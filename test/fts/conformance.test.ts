import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.ts';
import type { FtsFilters, FtsSort, SearchBackend } from '../../core/fts/backend.ts';
import { createPostgresBackend, refreshSearchWords } from '../../core/fts/postgres.ts';
import { parseQuery } from '../../core/fts/query.ts';
import { createLogger } from '../../core/log.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { corpus, idOf, labelOf, storeCorpus, type CorpusVideo } from './corpus.ts';

/**
 * One suite, every backend: the same corpus, queries, filters, sorts and pages must give the same answers
 * on Postgres and on Typesense. Typesense runs only against a real server (TYPESENSE_URL).
 */
interface BackendCase {
  name: string;
  skip?: string;
  open(db: TestDatabase): Promise<SearchBackend>;
}

const typesenseUrl = process.env.TYPESENSE_URL;
const backends: BackendCase[] = [
  {
    name: 'postgres',
    async open(db) {
      await refreshSearchWords(db.sql);
      return createPostgresBackend({ sql: db.sql, timeoutMs: 5_000 });
    },
  },
  {
    name: 'typesense',
    ...(typesenseUrl
      ? {}
      : {
          skip: 'TYPESENSE_URL is not set: the Typesense run of the conformance suite is skipped (set TYPESENSE_URL and TYPESENSE_API_KEY to a test server to run it)',
        }),
    async open(db) {
      const { createTypesenseBackend } = await import('../../core/fts/typesense/backend.ts');
      const { reindexAll } = await import('../../core/fts/typesense/reindex.ts');
      const config = loadConfig({
        TYPESENSE_URL: typesenseUrl,
        TYPESENSE_API_KEY: process.env.TYPESENSE_API_KEY ?? 'xyz',
        TYPESENSE_COLLECTION: `conformance_${db.name}`,
      });
      const log = createLogger('silent');
      await reindexAll({ config, sql: db.sql, log });
      return createTypesenseBackend({ config, sql: db.sql, log });
    },
  },
];

const video = (label: string) => corpus.find((v) => v.label === label)!;

/** The order every backend must give: the sort key (missing values last), then views (most first), then video id. */
function expectedOrder(labels: string[], sort: Exclude<FtsSort, 'relevance'>): string[] {
  const key = (v: CorpusVideo) =>
    sort.startsWith('date') ? (v.uploadDate === undefined ? '2012-06-06' : v.uploadDate) : v.duration === undefined ? 100 : v.duration;
  const descending = sort.endsWith('desc');
  const views = (v: CorpusVideo) => (v.views === undefined ? 100 : v.views);
  return [...labels].sort((a, b) => {
    const [va, vb] = [video(a), video(b)];
    const [ka, kb] = [key(va), key(vb)];
    if (ka !== kb) {
      if (ka === null) return 1;
      if (kb === null) return -1;
      return (ka < kb ? -1 : 1) * (descending ? -1 : 1);
    }
    const [wa, wb] = [views(va) ?? -1, views(vb) ?? -1];
    if (wa !== wb) return wb - wa;
    return idOf(a) < idOf(b) ? -1 : 1;
  });
}

for (const backendCase of backends) {
  describe.skipIf(backendCase.skip !== undefined)(`full-text search conformance: ${backendCase.name}`, () => {
    if (backendCase.skip) console.warn(backendCase.skip);
    let db: TestDatabase;
    let backend: SearchBackend;

    beforeAll(async () => {
      db = await createTestDatabase();
      await storeCorpus(db.sql);
      backend = await backendCase.open(db);
    });
    afterAll(async () => {
      await backend?.close();
      await db?.drop();
    });

    const search = async (q: string, options: { filters?: FtsFilters; sort?: FtsSort; offset?: number; limit?: number } = {}) => {
      const page = await backend.search({
        query: parseQuery(q),
        filters: options.filters ?? {},
        sort: options.sort ?? 'relevance',
        offset: options.offset ?? 0,
        limit: options.limit ?? 50,
      });
      return { ...page, labels: page.videoIds.map((id) => labelOf.get(id) ?? id) };
    };
    const found = async (q: string, filters: FtsFilters = {}) => (await search(q, { filters })).labels.sort();

    it('needs every word, in title, tags or description', async () => {
      expect(await found('lathe')).toEqual(['lathe-desc', 'lathe-tag', 'lathe-title']);
      expect(await found('old lathe')).toEqual(['lathe-title']);
      expect(await found('bridge river')).toEqual(['bridge-apart', 'bridge-phrase']);
    });

    it('ranks title matches above tags, and tags above the description', async () => {
      expect((await search('lathe')).labels).toEqual(['lathe-title', 'lathe-tag', 'lathe-desc']);
    });

    it('matches "exact phrases" in order', async () => {
      expect(await found('"bridge collapsed"')).toEqual(['bridge-phrase']);
      expect(await found('"collapsed bridge"')).toEqual([]);
    });

    it('excludes -words and -"phrases"', async () => {
      expect(await found('bridge -collapsed')).toEqual(['bridge-apart']);
      expect(await found('bridge -"old bridge"')).toEqual(['bridge-phrase']);
    });

    it('matches a phrase among alternatives only where its words are adjacent, in order', async () => {
      expect(await found('"collapsed bridge" OR cafe')).toEqual(['cafe-accent', 'cafe-plain']);
      expect(await found('"bridge collapsed" OR cafe')).toEqual(['bridge-phrase', 'cafe-accent', 'cafe-plain']);
      expect(await found('"into the river" OR "river was calm"')).toEqual(['bridge-apart', 'bridge-phrase']);
      expect(await found('京東 OR 烤鸭')).toEqual(['chinese']);
      expect(await found('東京 OR 烤鸭')).toEqual(['chinese', 'japanese']);
    });

    it('excludes a phrase from a query of only alternatives only where its words are adjacent, in order', async () => {
      expect(await found('cats OR dogs -"dogs cats"')).toEqual(['or-both', 'or-cats', 'or-dogs']);
      expect(await found('cats OR dogs -"cats and"')).toEqual(['or-cats', 'or-dogs']);
      expect(await found('cats OR dogs -"and dogs together"')).toEqual(['or-cats', 'or-dogs']);
      expect(await found('cats OR dogs -"together cats"')).toEqual(['or-both', 'or-cats', 'or-dogs']);
    });

    it('reads title, tags and description as one text for phrases, in that order', async () => {
      expect(await found('"workshop lathe"')).toEqual(['lathe-tag']);
      expect(await found('"bridge the"')).toEqual(['bridge-apart']);
      expect(await found('"bridge the" OR "lathe milling"')).toEqual(['bridge-apart', 'lathe-tag']);
      expect(await found('bridge -"bridge the"')).toEqual(['bridge-phrase']);
    });

    it('matches either side of OR', async () => {
      expect(await found('cats OR dogs')).toEqual(['or-both', 'or-cats', 'or-dogs']);
      expect(await found('cats OR dogs together')).toEqual(['or-both']);
      expect(await found('sleeping OR playing -dogs')).toEqual(['or-cats']);
    });

    it('ignores case and accents, in Latin and Cyrillic script', async () => {
      expect(await found('cafe')).toEqual(['cafe-accent', 'cafe-plain']);
      expect(await found('CAFÉ')).toEqual(['cafe-accent', 'cafe-plain']);
      expect(await found('мир')).toEqual(['russian']);
      expect(await found('ёжик')).toEqual(['russian']);
      expect(await found('ежик ОБЗОР')).toEqual(['russian']);
    });

    it('finds Chinese and Japanese words written without spaces, in order', async () => {
      expect(await found('東京')).toEqual(['japanese']);
      expect(await found('烤鸭')).toEqual(['chinese']);
      expect(await found('京東')).toEqual([]);
    });

    it('filters by status (deleted includes re-uploaded; live leaves out unverified), files, subtitles and summaries', async () => {
      expect(await found('cats OR dogs', { status: 'deleted' })).toEqual(['or-cats']);
      expect(await found('cats OR dogs', { status: 'live' })).toEqual(['or-both', 'or-dogs']);
      expect(await found('烤鸭', { status: 'live' })).toEqual([]);
      expect(await found('cats OR dogs', { hasVideo: true })).toEqual(['or-both']);
      expect(await found('cats OR dogs', { hasSubtitles: false })).toEqual(['or-cats', 'or-dogs']);
      expect(await found('cats OR dogs', { hasSummary: true, hasVideo: true, hasSubtitles: true })).toEqual(['or-both']);
      expect(await found('cafe', { hasVideo: false })).toEqual(['cafe-plain']);
    });

    for (const sort of ['date-desc', 'date-asc', 'duration-desc', 'duration-asc'] as const) {
      it(`sorts ${sort}, missing values last, ties by views then id`, async () => {
        const paging = corpus.filter((v) => v.label.startsWith('page-')).map((v) => v.label);
        expect((await search('paging sample', { sort })).labels).toEqual(expectedOrder(paging, sort));
        expect((await search('python', { sort })).labels).toEqual(expectedOrder(['python-tutorial', 'python-snake'], sort));
      });
    }

    for (const sort of ['relevance', 'date-desc', 'duration-asc'] as const) {
      it(`pages through ${sort} results without overlap or gaps`, async () => {
        const all = await search('paging sample', { sort, limit: 50 });
        expect(all.total).toBe(23);
        expect(all.totalExact).toBe(true);
        const pages: string[] = [];
        for (let offset = 0; offset < 25; offset += 5) {
          const page = await search('paging sample', { sort, offset, limit: 5 });
          expect(page.total).toBe(23);
          pages.push(...page.labels);
        }
        expect(pages).toEqual(all.labels);
        expect((await search('paging sample', { sort, offset: 100, limit: 5 })).labels).toEqual([]);
      });
    }

    it('finds nothing for words the archive lacks, and suggests the closest words it has', async () => {
      const none = await search('pythn tutorial');
      expect(none).toMatchObject({ videoIds: [], total: 0, totalExact: true });
      expect(await backend.suggest(parseQuery('pythn tutorial'), {})).toBe('python tutorial');
      expect(await backend.suggest(parseQuery('qqqqzzzz'), {})).toBeNull();
      expect(await backend.suggest(parseQuery('lathe'), {})).toBeNull();
    });

    it('finds an id it indexed by the words of its title only', async () => {
      expect((await search('restoring')).videoIds).toEqual([idOf('lathe-title')]);
    });
  });
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresBackend, refreshSearchWords } from '../../core/fts/postgres.ts';
import { highlightHtml } from '../../core/fts/highlight.ts';
import { presentResults, searchVideos } from '../../core/fts/searchVideos.ts';
import { refreshTranscript } from '../../core/subtitles/transcript.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { awaitFreshWindow } from '../support/http-helpers.ts';
import { addTrack, vttOf } from '../support/subtitles.ts';
import { corpusChannel, idOf, labelOf, storeCorpus } from './corpus.ts';

let db: TestDatabase;
let api: TestApi;
let key: string;
let plusKey: string;
const labels = (body: { data: { videos: Array<{ videoId: string }> } }) => body.data.videos.map((v) => labelOf.get(v.videoId) ?? v.videoId);

beforeAll(async () => {
  db = await createTestDatabase();
  await storeCorpus(db.sql);
  await db.sql`insert into videos (video_id, channel_id, title, description) values
    (${idOf('markup')}, ${corpusChannel}, ${'<script>alert(1)</script> Lathe & co'}, ${`${'filler words '.repeat(40)}the lathe appears here ${'more filler '.repeat(40)}`})`;
  await addTrack(db.sql, {
    videoId: idOf('python-tutorial'),
    language: 'en',
    kind: 'manual',
    text: vttOf([
      'Welcome to the course.',
      'First we install the interpreter.',
      'Then the interpreter runs our code.',
      'The interpreter again.',
      'And once more the interpreter.',
    ]),
  });
  await addTrack(db.sql, {
    videoId: idOf('python-snake'),
    language: 'en',
    kind: 'auto',
    text: vttOf(['look at this snake', 'no interpreter here']),
  });
  await db.sql.begin(async (tx) => {
    await refreshTranscript(tx, idOf('python-tutorial'));
    await refreshTranscript(tx, idOf('python-snake'));
  });
  await refreshSearchWords(db.sql);
  await updateTier(db.sql, 'pro', { limits: { ftsQueriesPerMinute: 1_000, requestsPerMinute: 100_000 } });
  await updateTier(db.sql, 'plus', { apiAccess: true, limits: { ftsQueriesPerMinute: 2, requestsPerMinute: 100_000 } });
  api = await startTestApi(db.sql);
  ({ key } = await createKeyedUser(db.sql));
  ({ key: plusKey } = await createKeyedUser(db.sql, { tier: 'plus' }));
});

afterAll(async () => {
  await api?.close();
  await db?.drop();
});

const fts = (query: string, useKey = key) => api.call(`/api/fts?${query}`, { key: useKey });

describe('GET /api/fts', () => {
  it('answers with video objects, paging and the backend that answered', async () => {
    const { status, body } = await fts('q=cats+OR+dogs&sort=date-asc&pageSize=2');
    expect(status).toBe(200);
    expect(labels(body)).toEqual(['or-cats', 'or-dogs']);
    expect(body.data).toMatchObject({
      page: 1,
      pageSize: 2,
      total: 3,
      totalExact: true,
      totalPages: 2,
      sort: 'date-asc',
      in: 'videos',
      suggestion: null,
      backend: 'postgres',
    });
    expect(body.data.videos[0]).toMatchObject({
      videoId: idOf('or-cats'),
      title: 'Cats sleeping',
      channelId: corpusChannel,
      duration: 30,
      uploadDate: '2014-01-01',
      status: 're-uploaded',
      reuploadedAs: idOf('or-dogs'),
      hasVideo: false,
    });
    const second = await fts('q=cats+OR+dogs&sort=date-asc&pageSize=2&page=2');
    expect(labels(second.body)).toEqual(['or-both']);
  });

  // GET /api/fts splices each video's JSON text as Postgres wrote it; the search page and the search_videos
  // tool get objects. Serialised again, both must be the same text: the same fields, in the same order.
  it.each([
    ['cats OR dogs', {}],
    ['lathe', { sort: 'date-desc' as const }],
    ['cafe', { hasVideo: false }],
    ['pythn tutoral', {}],
    ['interpreter', { in: 'subtitles' as const }],
    ['interpreter -snake', { in: 'subtitles' as const, pageSize: 1 }],
  ])('answers %s %o with the page the search page and the search_videos tool get, field for field', async (q, extra) => {
    const input = { q, page: 1, pageSize: 50, sort: 'relevance' as const, in: 'videos' as const, ...extra };
    const params = new URLSearchParams(Object.entries(input).map(([name, value]) => [name, String(value)]));
    const { status, body } = await fts(params.toString());
    expect(status).toBe(200);
    const found = await searchVideos(
      { sql: db.sql, search: createPostgresBackend({ sql: db.sql, timeoutMs: 5_000 }), timeoutMs: 5_000 },
      input,
      async () => {},
    );
    const objects = presentResults(found, highlightHtml);
    const sameText = (data: unknown) => JSON.stringify(data, (field, value) => (field === 'tookMs' ? 0 : value));
    expect(sameText(body.data)).toBe(sameText(objects));
    expect(body.data.videos.length > 0).toBe(q !== 'pythn tutoral');
  });

  it('applies defaults: page 1, 50 per page, relevance', async () => {
    const { body } = await fts('q=paging');
    expect(body.data).toMatchObject({ page: 1, pageSize: 50, sort: 'relevance', total: 23 });
    expect(body.data.videos).toHaveLength(23);
  });

  it('passes every filter through', async () => {
    expect(labels((await fts('q=cats+OR+dogs&status=deleted')).body)).toEqual(['or-cats']);
    expect(labels((await fts('q=cats+OR+dogs&hasVideo=true&hasSubtitles=true&hasSummary=true')).body)).toEqual(['or-both']);
    expect(labels((await fts('q=cafe&hasVideo=false')).body)).toEqual(['cafe-plain']);
  });

  it('highlights matches, HTML-escaped, with an excerpt of long descriptions', async () => {
    const { body } = await fts('q=lathe&sort=date-desc');
    const markup = body.data.videos.find((v: { videoId: string }) => v.videoId === idOf('markup'));
    expect(markup.highlight.title).toBe('&#60;script&#62;alert(1)&#60;/script&#62; <mark>Lathe</mark> &#38; co');
    expect(markup.highlight.description).toMatch(/^…(filler|words) .* the <mark>lathe<\/mark> appears here .*…$/);
    expect(markup.highlight.description.length).toBeLessThan(240);
    const accent = (await fts('q=cafe')).body.data.videos.find((v: { videoId: string }) => v.videoId === idOf('cafe-accent'));
    expect(accent.highlight.title).toBe('Un <mark>café</mark> à Paris');
  });

  it('suggests a corrected query when a typo finds nothing', async () => {
    const { status, body } = await fts('q=pythn+tutoral');
    expect(status).toBe(200);
    expect(body.data).toMatchObject({ videos: [], total: 0, suggestion: 'python tutorial' });
  });

  it('searches inside subtitles, with the matching cues and a link to each second', async () => {
    const { status, body } = await fts('q=interpreter&in=subtitles');
    expect(status).toBe(200);
    expect(labels(body)).toEqual(['python-tutorial', 'python-snake']);
    const [tutorial, snake] = body.data.videos;
    expect(tutorial.cueMatches).toBe(4);
    expect(tutorial.cues).toHaveLength(3);
    expect(tutorial.cues[0]).toEqual({
      startMs: 3000,
      endMs: 6000,
      text: 'First we install the <mark>interpreter</mark>.',
      url: `https://www.youtube.com/watch?v=${idOf('python-tutorial')}&t=3s`,
    });
    expect(snake.cues.map((c: { text: string }) => c.text)).toEqual(['no <mark>interpreter</mark> here']);
    expect(body.data).toMatchObject({ total: 2, in: 'subtitles', backend: 'postgres' });
    expect(labels((await fts('q=interpreter+-snake&in=subtitles')).body)).toEqual(['python-tutorial']);
    expect(labels((await fts('q=%22install+the+interpreter%22&in=subtitles&sort=date-desc')).body)).toEqual(['python-tutorial']);
    expect(labels((await fts('q=interpreter&in=subtitles&hasSummary=true')).body)).toEqual([]);
    // A cue's times are not its words: "Welcome to the course." ends at 3000 ms and does not match 3000.
    const [withTimes] = (await fts('q=interpreter+OR+3000&in=subtitles')).body.data.videos;
    expect(withTimes).toMatchObject({ videoId: idOf('python-tutorial'), cueMatches: 4 });
  });

  it.each([
    ['pageSize=101', 'pageSize', 'at most 100'],
    ['pageSize=0', 'pageSize', 'starts at 1'],
    ['page=0', 'page', 'starts at 1'],
    ['page=1.5', 'page', 'whole number'],
    ['page=abc', 'page', 'whole number'],
    ['sort=foo', 'sort', 'relevance, date-desc'],
    ['hasVideo=maybe', 'hasVideo', 'true or false'],
    ['hasSubtitles=1', 'hasSubtitles', 'true or false'],
    ['status=gone', 'status', 'live or deleted'],
    ['in=comments', 'in', 'videos or subtitles'],
    ['colour=red', 'colour', 'unknown parameter'],
    ['q=again', 'q', 'give it once'],
    ['page=1&page=2', 'page', 'give it once'],
    ['page=101&pageSize=100', 'page', 'first 10000'],
  ])('refuses %s naming %s', async (extra, field, hint) => {
    const { status, body } = await fts(`q=lathe&${extra}`);
    expect(status).toBe(400);
    expect(body.error.code).toBe('INVALID_INPUT');
    expect(body.error.message).toContain(`${field}:`);
    expect(body.error.message).toContain(hint);
  });

  it.each([
    ['', 'required'],
    ['q=', 'must not be empty'],
    ['q=%20%20', 'must not be empty'],
    ['q=-lathe', 'not only exclusions'],
    ['q=%21%21%21', 'no letters or digits'],
    [`q=${'a'.repeat(501)}`, 'at most 500'],
  ])('refuses the query %s', async (query, hint) => {
    const { status, body } = await fts(query);
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: 'INVALID_INPUT' });
    expect(body.error.message).toMatch(/^q: /);
    expect(body.error.message).toContain(hint);
  });

  it('needs a key', async () => {
    const { status, body } = await api.call('/api/fts?q=lathe');
    expect(status).toBe(401);
    expect(body.error.code).toBe('API_KEY_REQUIRED');
  });

  it("counts against the tier's full-text queries per minute", async () => {
    await awaitFreshWindow(db.sql);
    expect((await fts('q=lathe', plusKey)).status).toBe(200);
    const second = await fts('q=bread', plusKey);
    expect(second.status).toBe(200);
    expect(second.headers.get('ratelimit-remaining')).toBe('0');
    // The same words again (another page, order or filter) are not a new query; other words are.
    expect((await fts('q=bread&page=2&sort=date-desc&status=live', plusKey)).status).toBe(200);
    expect((await fts('q=bread&in=subtitles', plusKey)).status).toBe(429);
    const third = await fts('q=lathe', plusKey);
    expect(third.status).toBe(429);
    expect(third.body.error.code).toBe('RATE_LIMITED');
    expect(third.body.error.message).toContain('ftsQueriesPerMinute');
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await fts('q=', plusKey)).status).toBe(400);
  });

  it('is in the OpenAPI document with its parameters', async () => {
    const { body } = await api.call('/api/openapi.json');
    const parameters = body.paths['/api/fts'].get.parameters.map((p: { name: string }) => p.name);
    expect(parameters).toEqual(
      expect.arrayContaining(['q', 'page', 'pageSize', 'status', 'hasVideo', 'hasSubtitles', 'hasSummary', 'sort', 'in']),
    );
  });
});

import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ignoredQuery, type Route } from '../../api/http/route.ts';
import { allRoutes } from '../../api/routes/index.ts';
import { feedToken } from '../../core/watchlists/ownWatchlist.ts';
import { createEndpoint } from '../../core/webhooks/createEndpoint.ts';
import { createArchiveFixture, type ArchiveFixture } from '../kit/archive-fixture.ts';
import { createKeyedUser } from '../support/api.ts';
import { eventually } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { readStream } from '../support/sse.ts';
import { startSearchStack } from '../support/stack.ts';

// Who may keep each answer, over every route of the API, once answered and once refused: only a read that
// is the same for every caller is public; any other answer, errors included, is private (no-store, or
// no-cache with its ETag), and one that depends on the key varies on the key's headers. A shared cache
// with a default lifetime (Varnish: 120 s) would otherwise hand one key's answer to another caller.

let db: TestDatabase;
let archive: ArchiveFixture;
let dataDir: string;
let stack: Awaited<ReturnType<typeof startSearchStack>>;
let user: { key: string; id: string };
let admin: string;
/** A path parameter's value, by name: videos with subtitles, a stored summary and a stenogram of the user's. */
const values: Record<string, string> = {};
let ftsWord: string;

const post = (path: string, key: string, body: unknown) =>
  stack.api.call(path, { key, method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

beforeAll(async () => {
  db = await createTestDatabase();
  archive = await createArchiveFixture({ videos: 5, mediaEvery: 1, subtitlesEvery: 1, flatOnly: 0, legacyChannel: false, seed: 'caching' });
  dataDir = await mkdtemp(join(tmpdir(), 'afterimage-caching-'));
  // Every answer here is counted; none is to be refused for running out.
  await db.sql`update tier_limits set max_count = null where max_count > 0`;
  // yt-dlp --write-thumbnail beside every video with media, so the thumbnail route has one to serve.
  const thumbnail = await sharp({ create: { width: 320, height: 180, channels: 3, background: '#3a7bd5' } })
    .jpeg()
    .toBuffer();
  for (const mediaName of archive.mediaFiles.values())
    await writeFile(join(archive.dir, archive.channelTitle, mediaName.replace(/\.mp4$/, '.jpg')), thumbnail);
  // Webhooks to a closed port of this host: added and listed, their deliveries simply fail.
  stack = await startSearchStack(db, { ARCHIVE_DIR: archive.dir, DATA_DIR: dataDir, WEBHOOK_ALLOW_PRIVATE: 'true' });
  const created = await createKeyedUser(db.sql, { tier: 'pro', scope: 'L4' });
  user = { key: created.key, id: created.user.id };
  admin = (await createKeyedUser(db.sql, { tier: 'pro', isAdmin: true, scope: 'L4' })).key;

  const started = await post('/api/search', user.key, { query: archive.handle });
  const search = await readStream(`${stack.api.url}${started.body.data.sseEndpointUrl}`, { key: user.key, timeoutMs: 30_000 });
  expect(search.events.at(-1)!.event).toBe('search:complete');
  const [summarised, deleted, stenogram] = archive.subtitleVideoIds.filter((videoId) => archive.mediaFiles.has(videoId));
  for (const videoId of [summarised!, deleted!, stenogram!])
    await eventually(
      async () => (await stack.api.call(`/api/subtitles/${videoId}/status`, { key: user.key })).body.data?.status === 'available',
      `the subtitles of ${videoId}`,
    );
  for (const videoId of [summarised!, deleted!]) {
    await post('/api/summary/generate', user.key, { videoId });
    await readStream(`${stack.api.url}/api/summary/${videoId}/stream`, {
      key: user.key,
      until: (event) => event.event === 'summary:complete',
    });
  }
  const generated = await readStream(`${stack.api.url}/api/stenograms/${summarised}/generate`, { key: user.key, method: 'POST' });
  expect(generated.events.at(-1)!.event).toBe('stenogram:complete');
  Object.assign(values, {
    videoId: summarised!,
    deleted: deleted!,
    stenogram: stenogram!,
    channelId: archive.channelId,
    sessionId: started.body.data.searchSessionId,
    owner: `@${user.id}`,
    name: 'pro',
    docsFile: /\/api\/docs\/assets\/([^"]+)"/.exec((await stack.api.call('/api/docs')).body)![1]!,
  });
  // A watchlist watching a video (read, renamed, its item removed), and one to delete.
  const watchlist = await post('/api/watchlists', user.key, { name: 'Cached' });
  const item = await post(`/api/watchlists/${watchlist.body.data.id}/items`, user.key, { kind: 'video', videoId: summarised! });
  values.id = watchlist.body.data.id;
  values.itemId = item.body.data.id;
  values.doomedWatchlist = (await post('/api/watchlists', user.key, { name: 'Doomed' })).body.data.id;
  values.token = feedToken(stack.api.services.serverKey, watchlist.body.data.id, 1);
  const webhook = await createEndpoint(db.sql, stack.api.services.serverKey, {
    ownerId: user.id,
    watchlistId: values.id!,
    url: 'http://127.0.0.1:9/cached',
  });
  values.webhookId = webhook!.id;
  // A source's kept answer, as a status probe keeps one, so the raw-answer route has one to serve.
  const body = Buffer.from('{"items": []}');
  const [kept] = await db.sql<{ id: string }[]>`
    insert into evidence_observations (video_id, source, request_url, observed_at, http_status, content_type, decided, said,
      body_sha256, body_size, body_gzip)
    values (${summarised!}, 'youtube_api', 'https://www.googleapis.com/youtube/v3/videos?id=x&key=***', now(), 200,
      'application/json', 'suspected', 'no such video', ${createHash('sha256').update(body).digest('hex')}, ${body.length}, ${gzipSync(body)})
    returning id::text`;
  values.observationId = kept!.id;
  const [title] = await db.sql<{ title: string }[]>`select title from videos where video_id = ${summarised!}`;
  ftsWord = title!.title.split(' ')[0]!;
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await archive?.cleanup();
  await db?.drop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

interface Ask {
  key?: string;
  params?: Record<string, string>;
  query?: string;
  body?: unknown;
}

/** What each route is asked, beyond the user's key and the stored values of its path parameters, to answer 2xx. */
const asks: Record<string, () => Ask> = {
  'PATCH /api/tiers/:name': () => ({ key: admin, body: { apiAccess: true } }),
  'GET /api/docs/assets/:file': () => ({ params: { file: values.docsFile! } }),
  'POST /api/search': () => ({ body: { query: archive.handle } }),
  'GET /api/fts': () => ({ query: `q=${encodeURIComponent(ftsWord)}` }),
  'POST /api/subtitles/bulk-download': () => ({ body: { videoIds: [values.videoId] } }),
  'POST /api/summary/generate': () => ({ body: { videoId: values.videoId } }),
  'DELETE /api/summary/:videoId': () => ({ key: admin, params: { videoId: values.deleted! } }),
  'GET /sitemaps/summaries/:file': () => ({ params: { file: '1' } }),
  'POST /api/stenograms/:videoId/generate': () => ({ params: { videoId: values.stenogram! } }),
  'POST /api/stream-tokens': () => ({ body: { stream: `/api/summary/${values.videoId}/stream` } }),
  'POST /api/watchlists': () => ({ body: { name: 'Another' } }),
  'PATCH /api/watchlists/:id': () => ({ body: { name: 'Renamed' } }),
  'DELETE /api/watchlists/:id': () => ({ params: { id: values.doomedWatchlist! } }),
  'POST /api/watchlists/:id/items': () => ({ body: { kind: 'query', q: 'cached' } }),
  'POST /api/watchlists/:id/webhooks': () => ({ body: { url: `http://127.0.0.1:9/hook-${Math.random()}` } }),
};

/** The route's request, with `change` made to it; a stream is left once its headers are in. */
async function send(route: Route, change: { headers?: Record<string, string>; query?: string } = {}) {
  const ask = asks[`${route.method} ${route.path}`]?.() ?? {};
  const path = route.path.replace(/:([A-Za-z]+)/g, (_, name: string) => encodeURIComponent(ask.params?.[name] ?? values[name]!));
  const query = [ask.query, change.query].filter(Boolean).join('&');
  const leaving = new AbortController();
  const response = await fetch(`${stack.api.url}${path}${query ? `?${query}` : ''}`, {
    method: route.method,
    headers: {
      ...(route.auth === 'public' ? {} : { 'X-API-Key': ask.key ?? user.key }),
      ...(ask.body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...change.headers,
    },
    body: ask.body === undefined ? undefined : JSON.stringify(ask.body),
    signal: leaving.signal,
  });
  leaving.abort();
  return response;
}

const varyOf = (response: Response) => (response.headers.get('vary') ?? '').split(/,\s*/);
const readsTheKey = (route: Route) => route.auth !== 'public';

describe('Cache-Control and Vary on every route', () => {
  it.each(allRoutes.map((route) => [`${route.method} ${route.path}`, route] as const))('%s', async (_, route) => {
    const answered = await send(route);
    expect(answered.status, `${route.method} ${route.path}`).toBeLessThan(300);
    const cacheControl = answered.headers.get('cache-control');
    if (route.cache?.scope === 'public') expect(cacheControl).toBe(`public, max-age=${route.cache.maxAgeSeconds}`);
    // An event stream adds no-transform (no proxy may hold its events back to compress them).
    else if (readsTheKey(route))
      expect(cacheControl).toMatch(answered.headers.get('etag') ? /^private, no-cache$/ : /^private, no-store(, no-transform)?$/);
    // The same for every caller (health, the docs page and its files, the OAuth metadata): it says who may keep it.
    else expect(cacheControl).toMatch(/^(public|private|no-cache)\b/);
    if (readsTheKey(route)) expect(varyOf(answered)).toEqual(expect.arrayContaining(['X-API-Key', 'Authorization']));
    else expect(varyOf(answered)).not.toContain('X-API-Key');

    // Refused: a malformed key where the key is read; elsewhere an unknown parameter or, where the query is ignored, a stale If-Match.
    const refused = readsTheKey(route)
      ? await send(route, { headers: { 'X-API-Key': 'not-a-key' } })
      : route.query === ignoredQuery
        ? await send(route, { headers: { 'If-Match': '"stale"' } })
        : await send(route, { query: 'unknownParameter=1' });
    expect(refused.status, `${route.method} ${route.path}`).toBeGreaterThanOrEqual(400);
    expect(refused.headers.get('cache-control')).toBe('private, no-store');
    if (readsTheKey(route)) expect(varyOf(refused)).toEqual(expect.arrayContaining(['X-API-Key', 'Authorization']));
  });
});

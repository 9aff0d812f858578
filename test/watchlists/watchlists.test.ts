import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { createKeyedUser, createSignedInUser, startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { fakeSource, generateChannel } from '../support/fake-source.ts';
import { expectError, restoreTiers, snapshotTiers } from '../support/http-helpers.ts';
import { addVideos, channelIdFor, videoIdFor } from '../support/subtitles.ts';

let db: TestDatabase;
let api: TestApi;
type User = { key: string; userId: string };
let owner: User;
let other: User;
let reader: User;
/** A channel only the source knows: watching it stores it and starts its crawl. */
const remote = generateChannel(3, 'w');
const storedChannel = channelIdFor('watched');
const storedVideo = videoIdFor('watched-1');

beforeAll(async () => {
  db = await createTestDatabase();
  await updateTier(db.sql, 'pro', { limits: { requestsPerMinute: 100_000 } });
  api = await startTestApi(db.sql, {}, undefined, { sources: [fakeSource({ name: 'youtube_api', ...remote })] });
  const make = async (options: Parameters<typeof createKeyedUser>[1] = {}): Promise<User> => {
    const created = await createKeyedUser(db.sql, options);
    return { key: created.key, userId: created.user.id };
  };
  owner = await make();
  other = await make();
  reader = await make({ scope: 'L1' });
  await addVideos(db.sql, storedChannel, [{ videoId: storedVideo, title: 'A watched video' }], 'Watched Channel');
});

afterAll(async () => {
  await api?.close();
  await db?.drop();
});

const call = (path: string, user: User | undefined, init: { method?: string; body?: unknown } = {}) =>
  api.call(path, {
    ...(user ? { key: user.key } : {}),
    method: init.method ?? 'GET',
    ...(init.body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(init.body) }),
  });

async function create(user: User, name: string) {
  const created = await call('/api/watchlists', user, { method: 'POST', body: { name } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.data as { id: string; feedUrl: string; name: string };
}

const add = (user: User, id: string, item: Record<string, unknown>) =>
  call(`/api/watchlists/${id}/items`, user, { method: 'POST', body: item });

describe('watchlists over REST', () => {
  it('creates, lists, reads, renames, rotates the feed and deletes', async () => {
    const created = await call('/api/watchlists', owner, { method: 'POST', body: { name: '  Channels I follow  ' } });
    expect(created.status).toBe(201);
    const watchlist = created.body.data;
    expect(created.headers.get('location')).toBe(`/api/watchlists/${watchlist.id}`);
    expect(watchlist).toMatchObject({ name: 'Channels I follow', items: [], counts: { items: 0, channels: 0, videos: 0, queries: 0 } });
    expect(watchlist.feedUrl).toMatch(new RegExp(`^${api.url}/feeds/watchlists/${watchlist.id}/[A-Za-z0-9_-]+\\.atom$`));

    const newer = await create(owner, 'Second');
    const listed = await call('/api/watchlists', owner);
    expect(listed.status).toBe(200);
    expect(listed.body.data.watchlists.map((w: { id: string }) => w.id).slice(0, 2)).toEqual([newer.id, watchlist.id]);
    expect(listed.body.data.watchlists[1]).toEqual({
      id: watchlist.id,
      name: 'Channels I follow',
      itemCount: 0,
      createdAt: watchlist.createdAt,
      updatedAt: watchlist.updatedAt,
      feedUrl: watchlist.feedUrl,
    });

    const renamed = await call(`/api/watchlists/${watchlist.id}`, owner, { method: 'PATCH', body: { name: 'Renamed' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({ name: 'Renamed', feedUrl: watchlist.feedUrl });

    const rotated = await call(`/api/watchlists/${watchlist.id}`, owner, { method: 'PATCH', body: { rotateFeed: true } });
    expect(rotated.body.data.name).toBe('Renamed');
    expect(rotated.body.data.feedUrl).not.toBe(watchlist.feedUrl);
    expect((await call(`/api/watchlists/${watchlist.id}`, owner)).body.data.feedUrl).toBe(rotated.body.data.feedUrl);

    expectError(await call(`/api/watchlists/${watchlist.id}`, owner, { method: 'PATCH', body: {} }), 400, 'INVALID_INPUT');

    const deleted = await call(`/api/watchlists/${watchlist.id}`, owner, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toEqual({ id: watchlist.id, deleted: true });
    expectError(await call(`/api/watchlists/${watchlist.id}`, owner), 404, 'NOT_FOUND');
    await call(`/api/watchlists/${newer.id}`, owner, { method: 'DELETE' });
  });

  it('watches a stored video, a known channel and a saved query; the same item again answers the one there (200)', async () => {
    const { id } = await create(owner, 'Mixed');
    const video = await add(owner, id, { kind: 'video', videoId: storedVideo });
    expect(video.status).toBe(201);
    expect(video.body.data).toMatchObject({ kind: 'video', videoId: storedVideo, label: 'A watched video' });
    const again = await add(owner, id, { kind: 'video', videoId: storedVideo });
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(video.body.data);

    const channel = await add(owner, id, { kind: 'channel', channelId: storedChannel });
    expect(channel.status).toBe(201);
    expect(channel.body.data).toMatchObject({ kind: 'channel', channelId: storedChannel, label: 'Watched Channel' });

    const query = await add(owner, id, { kind: 'query', q: '  radio   repair ', in: 'subtitles', status: 'deleted', hasVideo: true });
    expect(query.status).toBe(201);
    expect(query.body.data).toMatchObject({
      kind: 'query',
      label: 'radio repair',
      query: { q: 'radio repair', in: 'subtitles', status: 'deleted', hasVideo: true },
    });
    // Written differently, the same question: the same saved query, the same item.
    const sameQuery = await add(owner, id, { kind: 'query', q: 'radio repair', status: 'deleted', in: 'subtitles', hasVideo: true });
    expect(sameQuery.status).toBe(200);
    expect(sameQuery.body.data.id).toBe(query.body.data.id);
    const titlesOnly = await add(owner, id, { kind: 'query', q: 'radio repair' });
    expect(titlesOnly.status).toBe(201);
    expect(titlesOnly.body.data.query).toEqual({ q: 'radio repair', in: 'videos' });

    const read = await call(`/api/watchlists/${id}`, owner);
    expect(read.body.data.counts).toEqual({ items: 4, channels: 1, videos: 1, queries: 2 });
    expect(read.body.data.items.map((item: { id: string }) => item.id)).toEqual(
      [titlesOnly, query, channel, video].map((answer) => answer.body.data.id),
    );
    const [listed] = (await call('/api/watchlists', owner)).body.data.watchlists.filter((w: { id: string }) => w.id === id);
    expect(listed.itemCount).toBe(4);

    const removed = await call(`/api/watchlists/${id}/items/${query.body.data.id}`, owner, { method: 'DELETE' });
    expect(removed.status).toBe(200);
    expect(removed.body.data).toEqual({ id: query.body.data.id, deleted: true });
    expectError(await call(`/api/watchlists/${id}/items/${query.body.data.id}`, owner, { method: 'DELETE' }), 404, 'NOT_FOUND');
    expectError(await call(`/api/watchlists/${id}/items/not-an-id`, owner, { method: 'DELETE' }), 404, 'NOT_FOUND');
    // A saved query no watchlist holds any more is forgotten; one still held is kept.
    const saved = await db.sql<{ q: string; in: string }[]>`select query->>'q' as q, query->>'in' as in from saved_queries order by id`;
    expect(saved).toEqual([{ q: 'radio repair', in: 'videos' }]);
  });

  it('a channel never crawled is resolved by the sources and crawled; one no source knows is 404', async () => {
    const { id } = await create(owner, 'Remote');
    const added = await add(owner, id, { kind: 'channel', channelId: remote.channel.channelId });
    expect(added.status).toBe(201);
    expect(added.body.data.label).toBe(remote.channel.title);
    const crawls = await db.sql`select kind, status from crawls where channel_id = ${remote.channel.channelId}`;
    expect(crawls).toEqual([{ kind: 'full', status: 'running' }]);
    // Watching it again, in another watchlist too, starts no second crawl.
    const { id: second } = await create(owner, 'Remote again');
    expect((await add(owner, second, { kind: 'channel', channelId: remote.channel.channelId })).status).toBe(201);
    expect(await db.sql`select 1 from crawls where channel_id = ${remote.channel.channelId}`).toHaveLength(1);

    const unknown = channelIdFor('nobody knows');
    expectError(await add(owner, id, { kind: 'channel', channelId: unknown }), 404, 'NOT_FOUND');
    expect(await db.sql`select 1 from watchlist_items where channel_id = ${unknown}`).toHaveLength(0);
  });

  it('a video not stored here is 404 and says to search its channel first', async () => {
    const { id } = await create(owner, 'Videos');
    const error = expectError(await add(owner, id, { kind: 'video', videoId: videoIdFor('never stored') }), 404, 'NOT_FOUND');
    expect(error.message).toMatch(/search its channel first/);
  });

  it('refuses hostile names and bad items with 400, a saved query as GET /api/fts refuses it', async () => {
    for (const name of [
      '',
      '   ',
      'x'.repeat(101),
      'line\nbreak',
      'tab\there',
      'bell\u0007',
      'evil\u202Egnp.exe',
      'nul\u0000',
      'lone\uD800',
    ]) {
      expectError(await call('/api/watchlists', owner, { method: 'POST', body: { name } }), 400, 'INVALID_INPUT');
    }
    expectError(await call('/api/watchlists', owner, { method: 'POST', body: { name: 'ok', extra: 1 } }), 400, 'INVALID_INPUT');
    const { id } = await create(owner, 'Queries');
    const ftsRefusal = async (query: Record<string, string>) =>
      expectError(await call(`/api/fts?${new URLSearchParams(query)}`, owner), 400, 'INVALID_INPUT').message;
    for (const [item, asFts] of [
      [
        { q: 'radio', status: 'private' },
        { q: 'radio', status: 'private' },
      ],
      [
        { q: 'radio', in: 'comments' },
        { q: 'radio', in: 'comments' },
      ],
      [{ q: '-only -exclusions' }, { q: '-only -exclusions' }],
      [{ q: '   ' }, { q: '   ' }],
    ] as const) {
      const error = expectError(await add(owner, id, { kind: 'query', ...item }), 400, 'INVALID_INPUT');
      const field = (await ftsRefusal(asFts)).split(':')[0]!;
      expect(error.message).toContain(field);
    }
    expectError(await add(owner, id, { kind: 'query', q: 'radio', hasVideo: 'maybe' }), 400, 'INVALID_INPUT');
    expectError(await add(owner, id, { kind: 'query', q: 'radio', sort: 'newest' }), 400, 'INVALID_INPUT');
    expectError(await add(owner, id, { kind: 'channel', channelId: 'UCshort' }), 400, 'INVALID_INPUT');
    expectError(await add(owner, id, { kind: 'playlist', id: 'x' }), 400, 'INVALID_INPUT');
    expect((await call(`/api/watchlists/${id}`, owner)).body.data.items).toEqual([]);
  });

  it("another user's watchlist is 404 on every route, and stays as it was", async () => {
    const { id } = await create(owner, 'Mine');
    const item = (await add(owner, id, { kind: 'video', videoId: storedVideo })).body.data;
    const attempts = [
      call(`/api/watchlists/${id}`, other),
      call(`/api/watchlists/${id}`, other, { method: 'PATCH', body: { name: 'Theirs' } }),
      call(`/api/watchlists/${id}`, other, { method: 'PATCH', body: { rotateFeed: true } }),
      add(other, id, { kind: 'video', videoId: storedVideo }),
      call(`/api/watchlists/${id}/items/${item.id}`, other, { method: 'DELETE' }),
      call(`/api/watchlists/${id}`, other, { method: 'DELETE' }),
    ];
    for (const attempt of await Promise.all(attempts)) expectError(attempt, 404, 'NOT_FOUND');
    expect((await call('/api/watchlists', other)).body.data.watchlists.some((w: { id: string }) => w.id === id)).toBe(false);
    const mine = await call(`/api/watchlists/${id}`, owner);
    expect(mine.body.data).toMatchObject({ name: 'Mine', items: [item] });
  });

  it('anonymous callers get 401; an L1 key reads but does not write', async () => {
    expectError(await call('/api/watchlists', undefined), 401, 'API_KEY_REQUIRED');
    expectError(await call('/api/watchlists', undefined, { method: 'POST', body: { name: 'x' } }), 401, 'API_KEY_REQUIRED');
    expect((await call('/api/watchlists', reader)).status).toBe(200);
    expectError(await call('/api/watchlists', reader, { method: 'POST', body: { name: 'x' } }), 403, 'FORBIDDEN');
  });

  it('deleting a watchlist deletes its items; the saved queries only it held go too', async () => {
    const { id } = await create(owner, 'Doomed');
    await add(owner, id, { kind: 'video', videoId: storedVideo });
    await add(owner, id, { kind: 'query', q: 'only here' });
    expect((await call(`/api/watchlists/${id}`, owner, { method: 'DELETE' })).status).toBe(200);
    expect(await db.sql`select 1 from watchlist_items where watchlist_id = ${id}`).toHaveLength(0);
    expect(await db.sql`select 1 from saved_queries where query->>'q' = 'only here'`).toHaveLength(0);
  });
});

describe('the tiers decide', () => {
  let snapshot: Awaited<ReturnType<typeof snapshotTiers>>;
  let plus: User;
  beforeAll(async () => {
    snapshot = await snapshotTiers(db.sql);
    await updateTier(db.sql, 'plus', { apiAccess: true, limits: { requestsPerMinute: 100_000 } });
    const created = await createKeyedUser(db.sql, { tier: 'plus' });
    plus = { key: created.key, userId: created.user.id };
  });
  afterAll(() => restoreTiers(db.sql, snapshot));

  it('a tier without the feature is 403 FEATURE_DISABLED', async () => {
    await updateTier(db.sql, 'plus', { features: { watchlists: false } });
    try {
      const refused = expectError(await call('/api/watchlists', plus), 403, 'FEATURE_DISABLED');
      expect(refused.details).toEqual({ feature: 'watchlists' });
      expectError(await call('/api/watchlists', plus, { method: 'POST', body: { name: 'x' } }), 403, 'FEATURE_DISABLED');
    } finally {
      await updateTier(db.sql, 'plus', { features: { watchlists: true } });
    }
  });

  it('the allowances refuse one more with 403 and details, shown by /api/features and /api/tiers', async () => {
    await updateTier(db.sql, 'plus', { allowances: { watchlists: 2, watchlistItems: 1 } });
    const tiers = await call('/api/tiers', undefined);
    const plusTier = tiers.body.data.tiers.find((tier: { name: string }) => tier.name === 'plus');
    expect(plusTier.allowances.watchlists).toMatchObject({ name: 'watchlists', max: 2, unit: 'watchlists' });
    expect(plusTier.allowances.watchlistItems.max).toBe(1);

    const first = await create(plus, 'One');
    await create(plus, 'Two');
    const refused = expectError(await call('/api/watchlists', plus, { method: 'POST', body: { name: 'Three' } }), 403, 'FORBIDDEN');
    expect(refused.details).toEqual({ allowance: 'watchlists', max: 2, held: 2 });
    expect(refused.message).toMatch(/allows 2 watchlists and you have 2/);

    expect((await add(plus, first.id, { kind: 'video', videoId: storedVideo })).status).toBe(201);
    // The item already there is answered, not refused: it is not one more.
    expect((await add(plus, first.id, { kind: 'video', videoId: storedVideo })).status).toBe(200);
    const tooMany = expectError(await add(plus, first.id, { kind: 'query', q: 'more' }), 403, 'FORBIDDEN');
    expect(tooMany.details).toEqual({ allowance: 'watchlistItems', max: 1, held: 1 });
    expect(await db.sql`select 1 from saved_queries where query->>'q' = 'more'`).toHaveLength(0);

    const features = await call('/api/features', plus);
    expect(features.body.data.allowances.watchlists).toEqual({
      description: 'Watchlists a user keeps',
      unit: 'watchlists',
      max: 2,
      held: 2,
      remaining: 0,
    });
    expect(features.body.data.allowances.watchlistItems).toMatchObject({ max: 1, held: 1, remaining: 0 });
    expect((await call('/api/features', undefined)).body.data.allowances.watchlists).toMatchObject({ max: 0, held: 0, remaining: 0 });

    // The account page shows them too, with what is held.
    const person = await createSignedInUser(db.sql, { tier: 'plus' });
    await create({ key: person.key, userId: person.user.id }, 'Shown');
    const page = await (await fetch(`${api.url}/account`, { headers: { Accept: 'text/html', Cookie: person.cookie } })).text();
    expect(page).toMatch(/<tr data-allowance="watchlists"><td>Watchlists a user keeps<\/td><td>1<\/td><td>2 watchlists<\/td><\/tr>/);

    // A lowered allowance keeps what is held and refuses more.
    await updateTier(db.sql, 'plus', { allowances: { watchlists: 1 } });
    expect((await call('/api/watchlists', plus)).body.data.watchlists).toHaveLength(2);
    expectError(await call('/api/watchlists', plus, { method: 'POST', body: { name: 'Three' } }), 403, 'FORBIDDEN');
  });

  it('two creations racing for the last watchlist: exactly one is made', async () => {
    const racer = await createKeyedUser(db.sql, { tier: 'plus' });
    const user = { key: racer.key, userId: racer.user.id };
    await updateTier(db.sql, 'plus', { allowances: { watchlists: 3 } });
    await create(user, 'One');
    await create(user, 'Two');
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(['A', 'B', 'C'].map((name) => call('/api/watchlists', user, { method: 'POST', body: { name } })));
      expect(answers.map((answer) => answer.status).sort()).toEqual(round === 0 ? [201, 403, 403] : [403, 403, 403]);
    }
    expect((await call('/api/watchlists', user)).body.data.watchlists).toHaveLength(3);
  });

  it('PATCH /api/tiers changes allowances (administrators)', async () => {
    const admin = await createKeyedUser(db.sql, { isAdmin: true });
    const patched = await call(
      '/api/tiers/plus',
      { key: admin.key, userId: admin.user.id },
      {
        method: 'PATCH',
        body: { allowances: { webhooks: 7, watchlistItems: null } },
      },
    );
    expect(patched.status).toBe(200);
    expect(patched.body.data.allowances.webhooks.max).toBe(7);
    expect(patched.body.data.allowances.watchlistItems.max).toBeNull();
    const bad = await call(
      '/api/tiers/plus',
      { key: admin.key, userId: admin.user.id },
      {
        method: 'PATCH',
        body: { allowances: { webhooks: -1 } },
      },
    );
    expectError(bad, 400, 'INVALID_INPUT');
  });
});

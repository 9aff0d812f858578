import { request } from 'node:http';
import { createParser } from 'eventsource-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.ts';
import { appendEvents, crawlStream } from '../../core/events/events.ts';
import { searchEvents } from '../../core/events/searchEvents.ts';
import { createLogger } from '../../core/log.ts';
import { buildServices } from '../../core/services/buildServices.ts';
import { DefiniteError } from '../../core/sources/httpErrors.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import type { VideoSource } from '../../core/sources/types.ts';
import { startWorker, type WorkerHandle } from '../../pipeline/worker.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { fakeSource, generateChannel } from '../support/fake-source.ts';
import { readStream } from '../support/sse.ts';

let db: TestDatabase;
let api: TestApi;
let otherApi: TestApi;
let worker: WorkerHandle;
let key: string;
const sources: VideoSource[] = [];
const log = createLogger((process.env.TEST_LOG as 'debug') ?? 'silent');

const big = generateChannel(230);
let releaseGate: () => void = () => {};
const gated = generateChannel(40);
const broken = generateChannel(5);
const slow = generateChannel(3);
let releaseSlow: () => void = () => {};
const partly = generateChannel(12);
const stalled = generateChannel(2);
let releaseStalled: () => void = () => {};

beforeAll(async () => {
  db = await createTestDatabase();
  sources.push(
    fakeSource({ name: 'archive', channel: big.channel, videos: big.videos, pageSize: 100 }),
    fakeSource({
      name: 'archive',
      channel: gated.channel,
      videos: gated.videos,
      gate: new Promise<void>((resolve) => (releaseGate = resolve)),
    }),
    fakeSource({ name: 'youtube_api', channel: partly.channel, videos: partly.videos }),
    fakeSource({
      name: 'archive',
      channel: slow.channel,
      videos: slow.videos,
      gate: new Promise<void>((resolve) => (releaseSlow = resolve)),
    }),
    fakeSource({
      name: 'archive',
      channel: stalled.channel,
      videos: stalled.videos,
      gate: new Promise<void>((resolve) => (releaseStalled = resolve)),
    }),
  );
  // Every source answers for its own channel only; a combined source routes by channel id.
  const bySource: VideoSource = {
    name: 'archive',
    async resolveChannel(query) {
      for (const source of sources) {
        const found = await source.resolveChannel(query);
        if (found) return found;
      }
      if (query.kind === 'channelId' && query.channelId === broken.channel.channelId) throw new DefiniteError('archive answered 403', 403);
      return undefined;
    },
    async listVideos(channel, cursor) {
      if (channel.channelId === broken.channel.channelId) throw new DefiniteError('archive answered 403', 403);
      for (const source of sources)
        if (await source.resolveChannel({ kind: 'channelId', channelId: channel.channelId })) return source.listVideos(channel, cursor);
      return { videos: [] };
    },
  };
  api = await startTestApi(db.sql, { SSE_HEARTBEAT_SECONDS: '1' }, log, { sources: [bySource] });
  otherApi = await startTestApi(db.sql, {}, log, { sources: [bySource] });
  const config = loadConfig({ DATABASE_URL: db.url, WORKER_CONCURRENCY: '2', DATA_DIR: '.afterimage-test' });
  const services = await buildServices(config, { sql: db.sql, log }, { sources: [bySource] });
  worker = await startWorker(config, { sql: db.sql, url: db.url, embedded: false, close: async () => {} }, log, services);
  ({ key } = await createKeyedUser(db.sql));
  // The broken channel must be known to be searchable at all: it exists in the database already.
  await db.sql`insert into channels (channel_id, title) values (${broken.channel.channelId}, 'Broken')`;
});

afterAll(async () => {
  releaseGate();
  releaseSlow();
  releaseStalled();
  await worker.stop();
  await api.close();
  await otherApi.close();
  await db.drop();
});

const search = (query: string, withKey = key) =>
  api.call('/api/search', {
    method: 'POST',
    key: withKey,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ query }),
  });
const streamUrl = (path: string) => `${api.url}${path}`;
const done = (event: { event: string }) => event.event === 'search:complete' || event.event === 'search:error';

describe('POST /api/search', () => {
  it('rejects what is not a channel or video reference, listing the accepted forms', async () => {
    for (const query of ['', 'not a channel', 'https://example.com/@someone', '@x']) {
      const response = await search(query);
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('INVALID_INPUT');
    }
    const response = await search('hello world');
    expect(response.body.error.message).toContain('@handle');
    expect(response.body.error.message).toContain('youtu.be');
  });

  it('answers 404 for a channel no source knows', async () => {
    const response = await search('@nobody-knows-this');
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('NOT_FOUND');
  });

  it('counts channel searches against the hourly quota, with the limit named in the 429', async () => {
    const { key: own } = await createKeyedUser(db.sql);
    await updateTier(db.sql, 'pro', { limits: { channelSearchesPerHour: 2 } });
    try {
      expect((await search(big.channel.channelId, own)).status).toBe(200);
      expect((await search(big.channel.channelId, own)).status).toBe(200);
      const refused = await search(big.channel.channelId, own);
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('RATE_LIMITED');
      expect(refused.body.error.message).toContain('Limit reached: 2 channel searches per hour (channelSearchesPerHour)');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await updateTier(db.sql, 'pro', { limits: { channelSearchesPerHour: 30 } });
    }
  });

  it('needs a key', async () => {
    const response = await api.call('/api/search', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ query: '@x' }),
    });
    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('API_KEY_REQUIRED');
  });
});

describe('a channel search streamed over SSE', () => {
  it('resolves the channel at once and streams every video once, in batches too, then search:complete', async () => {
    const started = await search(`https://www.youtube.com/${big.channel.handle}/videos`);
    expect(started.status).toBe(200);
    expect(started.body.data).toMatchObject({ channelId: big.channel.channelId, channelTitle: big.channel.title });
    expect(started.body.data.sseEndpointUrl).toBe(`/api/search/${started.body.data.searchSessionId}/stream`);

    const { events, ended } = await readStream(streamUrl(started.body.data.sseEndpointUrl), { key });
    expect(ended).toBe(true);
    expect(events[0]!.event).toBe('search:channel_resolved');
    expect(events[0]!.data.channelId).toBe(big.channel.channelId);
    expect(events.at(-1)!.event).toBe('search:complete');
    expect(events.at(-1)!.data.totals.videos).toBe(230);
    const videos = events.filter((event) => event.event === 'search:video');
    expect(videos.map((event) => event.data.videoId).sort()).toEqual(big.videos.map((video) => video.videoId).sort());
    expect(videos.every((event) => event.id && event.data.title && event.data.channelId === big.channel.channelId)).toBe(true);
    const batched = events
      .filter((event) => event.event === 'search:video_batch')
      .flatMap((event) => event.data.videos.map((video: { videoId: string }) => video.videoId));
    expect(new Set(batched)).toEqual(new Set(videos.map((event) => event.data.videoId)));
    expect(events.some((event) => event.event === 'search:progress' && typeof event.data.percent === 'number' && event.data.stage)).toBe(
      true,
    );
    expect(events.some((event) => event.event === 'search:caption_info')).toBe(true);
    const ids = events.filter((event) => event.id).map((event) => event.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('streams what the database has at once on a second search, and resumes from Last-Event-ID exactly', async () => {
    const before = await search(big.channel.channelId);
    await readStream(streamUrl(before.body.data.sseEndpointUrl), { key, until: done });
    const started = await search(big.channel.channelId);
    const url = streamUrl(started.body.data.sseEndpointUrl);
    const full = await readStream(url, { key });
    expect(full.events.at(-1)!.event).toBe('search:complete');
    const stored = full.events.filter((event) => event.event === 'search:video' && event.id?.startsWith('s:'));
    expect(stored).toHaveLength(230);

    // Cut the stream after 100 videos, then resume twice: from the snapshot and from the live part.
    const withIds = full.events.filter((event) => event.id).length;
    for (const cut of [100, withIds - 1]) {
      const first = await readStream(url, { key, until: (_event, all) => all.filter((e) => e.id).length >= cut });
      const lastId = first.events.filter((event) => event.id).at(-1)!.id!;
      const rest = await readStream(url, { key, lastEventId: lastId });
      const seen = [...first.events, ...rest.events].filter((event) => event.id).map((event) => event.id);
      expect(seen).toEqual(full.events.filter((event) => event.id).map((event) => event.id));
      expect(rest.events.at(-1)!.event).toBe('search:complete');
    }
    const viaQuery = await readStream(`${url}?lastEventId=${encodeURIComponent(full.events.filter((e) => e.id).at(-2)!.id!)}`, { key });
    expect(viaQuery.events.filter((event) => event.id).map((event) => event.id)).toEqual([full.events.filter((e) => e.id).at(-1)!.id]);
  });

  it('joins a running crawl: background status points at it and both streams get the videos', async () => {
    const first = await search(gated.channel.channelId);
    const status = await api.call(`/api/search/background-status/${gated.channel.channelId}`, { key });
    expect(status.body.data).toEqual({ running: true, searchSessionId: first.body.data.searchSessionId });
    const second = await search(gated.channel.handle!);
    const crawls = await db.sql`select count(*)::int as n from crawls where channel_id = ${gated.channel.channelId}`;
    expect(crawls[0]!.n).toBe(1);
    const streams = [first, second].map((started) => readStream(streamUrl(started.body.data.sseEndpointUrl), { key }));
    releaseGate();
    for (const { events } of await Promise.all(streams)) {
      expect(events.filter((event) => event.event === 'search:video')).toHaveLength(40);
      expect(events.at(-1)!.event).toBe('search:complete');
    }
    const after = await api.call(`/api/search/background-status/${gated.channel.channelId}`, { key });
    // Nothing runs: no session to name, and no null where the spec types a string.
    expect(after.body.data).toEqual({ running: false });
  });

  it('resumes on another API process, and keeps idle streams alive with comments while the crawl works', async () => {
    const started = await search(slow.channel.channelId);
    const path = started.body.data.sseEndpointUrl;
    const first = await readStream(streamUrl(path), { key, timeoutMs: 2_500 });
    expect(first.comments.filter((comment) => comment.includes('keep-alive')).length).toBeGreaterThanOrEqual(1);
    const lastId = first.events.filter((event) => event.id).at(-1)!.id!;
    const resumed = readStream(`${otherApi.url}${path}`, { key, lastEventId: lastId });
    releaseSlow();
    const { events } = await resumed;
    expect(
      events
        .filter((event) => event.event === 'search:video')
        .map((event) => event.data.videoId)
        .sort(),
    ).toEqual(slow.videos.map((video) => video.videoId).sort());
    expect(events.at(-1)!.event).toBe('search:complete');
    const ids = [...first.events, ...events].filter((event) => event.id).map((event) => event.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('ends the stream of a client that stops reading, which then resumes exactly with Last-Event-ID', async () => {
    const started = await search(stalled.channel.channelId);
    const path: string = started.body.data.sseEndpointUrl;
    // A client that reads up to the end of the stored part, then nothing: what the API sends piles up.
    const ids: string[] = [];
    let resume = () => {};
    let ended: Promise<unknown> = Promise.resolve();
    const live = new Promise<void>((subscribed) => {
      const parser = createParser({
        onEvent(message) {
          if (message.id) ids.push(message.id);
          if (message.id === 's:~') subscribed();
        },
      });
      const req = request(streamUrl(path), { headers: { Accept: 'text/event-stream', 'X-API-Key': key } }, (response) => {
        response.setEncoding('utf8');
        const read = (chunk: string) => {
          parser.feed(chunk);
          if (ids.includes('s:~')) response.off('data', read).pause();
        };
        response.on('data', read);
        resume = () => response.on('data', (chunk: string) => parser.feed(chunk)).resume();
        ended = new Promise((done) => response.on('end', done));
      });
      req.end();
    });
    await live;

    // Three hub pages of events far bigger than what the sockets hold: the second finds the client too far behind.
    const [session] = await db.sql<
      { crawlId: string }[]
    >`select crawl_id::text as "crawlId" from search_sessions where id = ${started.body.data.searchSessionId}`;
    // Padded progress events: the schema's fields, plus the index the reader waits for.
    const bulky = Array.from({ length: 600 }, (_, index) =>
      searchEvents.progress({ stage: 'test', percent: 0, ...{ index, padding: 'x'.repeat(40_000) } }),
    );
    await db.sql.begin((tx) => appendEvents(tx, crawlStream(session!.crawlId), bulky));
    // Once a client that reads has them all, the hub has made its deliveries to the stalled one, which joined first.
    await readStream(streamUrl(path), { key, until: (event) => event.data.index === 599, timeoutMs: 30_000 });
    resume();
    await ended;
    expect(ids.at(-1)).toMatch(/^c:/);
    expect(ids.length).toBeLessThan(2 + bulky.length);

    const rest = readStream(streamUrl(path), { key, lastEventId: ids.at(-1)!, timeoutMs: 30_000 });
    releaseStalled();
    const resumed = await rest;
    expect(resumed.events.at(-1)!.event).toBe('search:complete');
    const whole = await readStream(streamUrl(path), { key, timeoutMs: 30_000 });
    expect([...ids, ...resumed.events.filter((event) => event.id).map((event) => event.id)]).toEqual(
      whole.events.filter((event) => event.id).map((event) => event.id),
    );
  });

  it('ends with search:error when every source fails', async () => {
    const started = await search(broken.channel.channelId);
    const { events } = await readStream(streamUrl(started.body.data.sseEndpointUrl), { key, until: done });
    expect(events.at(-1)!.event).toBe('search:error');
    expect(events.at(-1)!.data.code).toBe('SERVICE_UNAVAILABLE');
    expect(events.at(-1)!.data.message).toContain('403');
  });

  it('hides sessions of other accounts and unknown sessions behind 404', async () => {
    const started = await search(partly.channel.channelId);
    const other = await createKeyedUser(db.sql);
    const foreign = await readStream(streamUrl(started.body.data.sseEndpointUrl), { key: other.key });
    expect(foreign.status).toBe(404);
    const unknown = await api.call('/api/search/00000000-0000-4000-8000-000000000000/stream', { key });
    expect(unknown.status).toBe(404);
    const malformed = await api.call('/api/search/not-a-uuid/stream', { key });
    expect(malformed.status).toBe(400);
    const badResume = await api.call(`${started.body.data.sseEndpointUrl}?lastEventId=zzz`, { key });
    expect(badResume.status).toBe(400);
    await readStream(streamUrl(started.body.data.sseEndpointUrl), { key, until: done });
  });

  it('answers continue without archive look-ups with a stream that says there is nothing further, uncharged', async () => {
    const started = await search(partly.channel.channelId);
    await readStream(streamUrl(started.body.data.sseEndpointUrl), { key, until: done });
    const searchesCharged = async () =>
      Number(
        (await db.sql`select coalesce(sum(used), 0) as used from usage_counters where limit_name = 'channelSearchesPerHour'`)[0]!.used,
      );
    const chargedBefore = await searchesCharged();
    const response = await api.call(`/api/search/${started.body.data.searchSessionId}/continue`, { method: 'POST', key });
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ channelId: partly.channel.channelId });
    expect(response.body.data.sseEndpointUrl).not.toBe(started.body.data.sseEndpointUrl);
    expect(await searchesCharged()).toBe(chargedBefore);
    const { events, ended } = await readStream(streamUrl(response.body.data.sseEndpointUrl), { key });
    expect(ended).toBe(true);
    // What is stored comes first, as on every search stream; then the one final event.
    expect(events.filter((event) => event.event === 'search:video')).toHaveLength(partly.videos.length);
    const complete = events.at(-1)!;
    expect(complete.event).toBe('search:complete');
    expect(complete.data).toMatchObject({ channelId: partly.channel.channelId, morePages: false, failedSources: [] });
    expect(complete.data.reason).toContain('WAYBACK_ENABLED');
    expect(searchEvents.complete.schema.safeParse(complete.data).success).toBe(true);
    // A session of another account stays unknown to continue.
    const other = await createKeyedUser(db.sql);
    expect((await api.call(`/api/search/${started.body.data.searchSessionId}/continue`, { method: 'POST', key: other.key })).status).toBe(
      404,
    );
  });
});

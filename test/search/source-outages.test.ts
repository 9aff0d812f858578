import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawlProgress } from '../../core/crawl/searchSession.ts';
import { searchEvents } from '../../core/events/searchEvents.ts';
import { createKeyedUser, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { readStream, type ReceivedEvent } from '../support/sse.ts';
import { startSearchStack } from '../support/stack.ts';
import { fakeChannelId, fakeVideoId } from '../kit/ids.ts';
import { start as startWayback, ts, type ChannelFixture, type VideoFixture, type WaybackServer } from '../kit/servers/wayback-server.ts';
import { start as startYoutubeApi, type YoutubeApiServer } from '../kit/servers/youtube-api-server.ts';

// Sources that fail or stop answering mid-search, through the real Data API and Wayback sources
// against their stand-in servers, with real workers. The wait budget is short so the outages end
// quickly; nothing here measures time.
let db: TestDatabase;
let api: TestApi;
let stack: Awaited<ReturnType<typeof startSearchStack>>;
let youtube: YoutubeApiServer;
let wayback: WaybackServer;
let key: string;

const apiChannel = fakeChannelId('outage-api-channel');
/** A channel only the archive knows, with `count` archived videos listed on one capture of its /videos tab. */
function archivedChannel(seed: string, count: number) {
  const channel: ChannelFixture = { channelId: fakeChannelId(seed), title: `Archived ${seed}` };
  const videos: VideoFixture[] = Array.from({ length: count }, (_, index) => ({
    videoId: fakeVideoId(`${seed}-${index}`),
    channelId: channel.channelId,
    title: `${seed} video ${index}`,
    lengthSeconds: 60 + index,
    author: channel.title,
  }));
  return { channel, videos };
}
const flaky = archivedChannel('outage-flaky', 12);
const down = archivedChannel('outage-down', 8);

beforeAll(async () => {
  db = await createTestDatabase();
  youtube = await startYoutubeApi();
  youtube.createChannel({ channelId: apiChannel, handle: '@outageapi', title: 'Outage API', videoCount: 60, deleted: [] });
  wayback = await startWayback();
  for (const { channel, videos } of [flaky, down]) {
    for (const video of videos) wayback.addVideo(video, [{ timestamp: ts(2016, 3) }]);
    wayback.addListing(channel, {
      timestamp: ts(2016, 6),
      form: 'channel',
      tab: '/videos',
      videoIds: videos.map((video) => video.videoId),
    });
    // Known already (an earlier search), so starting a search asks no source.
    await db.sql`insert into channels (channel_id, title) values (${channel.channelId}, ${channel.title})`;
  }
  stack = await startSearchStack(db, {
    ARCHIVE_DIR: '/nonexistent/afterimage-archive',
    YOUTUBE_API_KEY: youtube.apiKey,
    YOUTUBE_API_URL: youtube.url,
    WAYBACK_ENABLED: 'true',
    WAYBACK_URL: wayback.url,
    SOURCE_TIMEOUT_MS: '500',
    SOURCE_WAIT_BUDGET_MS: '4000',
  });
  api = stack.api;
  ({ key } = await createKeyedUser(db.sql));
});

afterAll(async () => {
  await stack?.close();
  await youtube?.close();
  await wayback?.close();
  await db?.drop();
});

const post = (path: string, body?: unknown) =>
  api.call(path, { method: 'POST', key, ...(body ? { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) } : {}) });
async function searchToEnd(query: string) {
  const started = await post('/api/search', { query });
  expect(started.status).toBe(200);
  const { events, ended } = await readStream(`${api.url}${started.body.data.sseEndpointUrl}`, { key, timeoutMs: 25_000 });
  expect(ended).toBe(true);
  return { session: started.body.data.searchSessionId as string, events };
}
const retriesOf = (events: ReceivedEvent[], stage: string) =>
  events.filter((event) => event.event === 'search:progress' && event.data.stage === stage && event.data.retry);
const videoIdsOf = (events: ReceivedEvent[]) =>
  events.filter((event) => event.event === 'search:video').map((event) => event.data.videoId as string);
const storedCount = async (channelId: string) =>
  Number((await db.sql`select count(*)::int as n from videos where channel_id = ${channelId}`)[0]!.n);

describe('a source that fails or answers nothing during a search', () => {
  it('reports the Data API retrying, then completes without it, naming it, and keeps what was stored', async () => {
    const healthy = await searchToEnd(apiChannel);
    expect(healthy.events.at(-1)).toMatchObject({ event: 'search:complete', data: { failedSources: [] } });
    expect(await storedCount(apiChannel)).toBe(60);

    youtube.failNext(100_000, 503);
    try {
      const { session, events } = await searchToEnd(apiChannel);
      const retries = retriesOf(events, 'youtube_api');
      expect(retries.length).toBeGreaterThan(0);
      for (const retry of retries) {
        expect(searchEvents.progress.schema.safeParse(retry.data).success).toBe(true);
        expect(retry.data.retry).toMatchObject({ attempt: expect.any(Number), error: expect.stringContaining('503') });
        expect(Date.parse(retry.data.retry.giveUpAt)).toBeGreaterThan(0);
        expect(Date.parse(retry.data.retry.nextTryAt)).toBeGreaterThan(0);
      }
      // The retries are told before the step's own events.
      const failedStep = events.findIndex(
        (event) => event.event === 'search:progress' && event.data.stage === 'youtube_api' && event.data.warning,
      );
      expect(events.indexOf(retries.at(-1)!)).toBeLessThan(failedStep);

      const complete = events.at(-1)!;
      expect(complete.event).toBe('search:complete');
      expect(searchEvents.complete.schema.safeParse(complete.data).success).toBe(true);
      // Given up by the wait budget or at the end of its retries, whichever comes first (the backoff is random).
      expect(complete.data.failedSources).toEqual([{ source: 'youtube_api', error: expect.stringContaining('503') }]);
      expect(complete.data.totals.sources.youtube_api.error).toBe(complete.data.failedSources[0].error);
      // `afterimage status` counts the crawl's steps: a retry is not one.
      const [row] = await db.sql<{ crawlId: string }[]>`select crawl_id::text as "crawlId" from search_sessions where id = ${session}`;
      const steps = events.filter(
        (event) => event.event === 'search:progress' && event.data.stage !== 'database' && !event.data.retry,
      ).length;
      expect((await crawlProgress(db.sql, row!.crawlId))!.steps).toBe(steps);
      expect(await storedCount(apiChannel)).toBe(60);
    } finally {
      youtube.clearFailures();
    }
    // The next search asks it again and finds everything, none twice.
    const again = await searchToEnd(apiChannel);
    expect(again.events.at(-1)!.data.failedSources).toEqual([]);
    expect(await storedCount(apiChannel)).toBe(60);
  });

  it('rides out an archive failure within the wait budget: every video once, nothing reported failed', async () => {
    wayback.failNext(1, 503, 'cdx');
    const { events } = await searchToEnd(flaky.channel.channelId);
    expect(retriesOf(events, 'wayback').length).toBe(1);
    const complete = events.at(-1)!;
    expect(complete).toMatchObject({ event: 'search:complete', data: { failedSources: [], morePages: false } });
    const ids = videoIdsOf(events);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids)).toEqual(new Set(flaky.videos.map((video) => video.videoId)));
    expect(await storedCount(flaky.channel.channelId)).toBe(flaky.videos.length);
  });

  it('completes without an archive that is down, and a later continue asks it again', async () => {
    wayback.failNext(100_000, 503);
    let first: Awaited<ReturnType<typeof searchToEnd>>;
    try {
      first = await searchToEnd(down.channel.channelId);
    } finally {
      wayback.clearFailures();
    }
    expect(retriesOf(first.events, 'wayback').length).toBeGreaterThan(0);
    const complete = first.events.at(-1)!;
    expect(complete.event).toBe('search:complete');
    expect(complete.data.failedSources).toEqual([{ source: 'wayback', error: expect.stringContaining('503') }]);
    // The look-ups never got going: continue starts them again.
    expect(complete.data.morePages).toBe(true);
    expect(videoIdsOf(first.events)).toEqual([]);

    const next = await post(`/api/search/${first.session}/continue`);
    expect(next.status).toBe(200);
    const { events } = await readStream(`${api.url}${next.body.data.sseEndpointUrl}`, { key, timeoutMs: 25_000 });
    expect(events.at(-1)).toMatchObject({ event: 'search:complete', data: { failedSources: [], morePages: false } });
    expect(new Set(videoIdsOf(events))).toEqual(new Set(down.videos.map((video) => video.videoId)));
    expect(await storedCount(down.channel.channelId)).toBe(down.videos.length);
  });
});

/**
 * What watching changes in the pipeline: watched channels are re-crawled every WATCH_RECRAWL_HOURS
 * (once, however many watch them), watched videos are checked at least daily, and saved queries are
 * re-run after crawls and imports, their first run a silent baseline.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCrontab } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log.ts';
import { recrawlDueChannels } from '../../core/crawl/startSearch.ts';
import type { FtsRequest } from '../../core/fts/backend.ts';
import { createPostgresBackend } from '../../core/fts/postgres.ts';
import type { VideoRecord } from '../../core/sources/types.ts';
import { recordObservations } from '../../core/status/recordObservations.ts';
import { upsertVideos } from '../../core/videos/upsertVideos.ts';
import { RESULTS_PER_RUN, runSavedQueries } from '../../core/watchlists/savedQueries.ts';
import type { SavedQuery } from '../../core/watchlists/watchlists.ts';
import { crontab } from '../../pipeline/tasks/index.ts';
import { createArchiveFixture, type ArchiveFixture } from '../kit/archive-fixture.ts';
import { createKeyedUser } from '../support/api.ts';
import { runCommand } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { fakeSource, generateChannel } from '../support/fake-source.ts';
import { runJobsOnce } from '../support/jobs.ts';
import { searchToEnd, startSearchStack } from '../support/stack.ts';

let db: TestDatabase;
let ownerId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  ({
    user: { id: ownerId },
  } = await createKeyedUser(db.sql));
});
afterAll(async () => db?.drop());

const channelId = (name: string) => `UC${name.padEnd(22, '0')}`;
const newWatchlist = async () =>
  (await db.sql<{ id: string }[]>`insert into watchlists (owner_id, name) values (${ownerId}, 'list') returning id`)[0]!.id;
const watchChannel = async (channel: string, watchlistId?: string) =>
  db.sql`insert into watchlist_items (watchlist_id, kind, channel_id) values (${watchlistId ?? (await newWatchlist())}, 'channel', ${channel})`;
const watchVideo = async (videoId: string) =>
  db.sql`insert into watchlist_items (watchlist_id, kind, video_id) values (${await newWatchlist()}, 'video', ${videoId})`;
const saveQuery = async (query: SavedQuery) => {
  const [saved] = await db.sql<{ id: string }[]>`insert into saved_queries (query) values (${db.sql.json(query)}) returning id::text`;
  await db.sql`insert into watchlist_items (watchlist_id, kind, saved_query_id) values (${await newWatchlist()}, 'query', ${saved!.id})`;
  return saved!.id;
};
const store = (records: VideoRecord[]) => db.sql.begin((tx) => upsertVideos(tx, 'youtube_api', records));
const video = (videoId: string, channel: string, fields: Partial<VideoRecord> = {}): VideoRecord => ({
  videoId,
  channelId: channel,
  title: `Video ${videoId}`,
  uploadDate: '2020-01-01',
  availability: 'live',
  ...fields,
});

describe('watched channels are re-crawled every WATCH_RECRAWL_HOURS', () => {
  const channels = {
    watched: channelId('UCrecrawlWatched'),
    watchedTwice: channelId('UCrecrawlTwice'),
    watchedFresh: channelId('UCrecrawlFresh'),
    watchedNeverCrawled: channelId('UCrecrawlNever'),
    unwatched: channelId('UCrecrawlUnwatched'),
    unwatchedStale: channelId('UCrecrawlStale'),
  };
  const crawledHoursAgo = async (channel: string, hours: number) => {
    await db.sql`insert into channels (channel_id) values (${channel}) on conflict do nothing`;
    await db.sql`insert into crawls (channel_id, kind, status, started_at, finished_at)
      values (${channel}, 'full', 'complete', now() - make_interval(hours => ${hours + 1}), now() - make_interval(hours => ${hours}))`;
  };
  const running = async () =>
    (
      await db.sql<
        { channelId: string }[]
      >`select channel_id as "channelId" from crawls where status = 'running' and kind = 'full' order by channel_id`
    ).map((row) => row.channelId);

  it('crawls a watched channel after 6 h, once however many watch it, and one watched before its first crawl; others wait RECRAWL_HOURS', async () => {
    await crawledHoursAgo(channels.watched, 7);
    await crawledHoursAgo(channels.watchedTwice, 7);
    await crawledHoursAgo(channels.watchedFresh, 5);
    await crawledHoursAgo(channels.unwatched, 7);
    await crawledHoursAgo(channels.unwatchedStale, 25);
    await watchChannel(channels.watched);
    await watchChannel(channels.watchedTwice);
    await watchChannel(channels.watchedTwice);
    await watchChannel(channels.watchedFresh);
    await watchChannel(channels.watchedNeverCrawled);

    expect(await recrawlDueChannels(db.sql, { everyHours: 24, watchedEveryHours: 6 })).toBe(4);
    expect(await running()).toEqual(
      [channels.watched, channels.watchedTwice, channels.watchedNeverCrawled, channels.unwatchedStale].sort(),
    );
    const [{ crawls }] = await db.sql<
      [{ crawls: number }]
    >`select count(*)::int as crawls from crawls where channel_id = ${channels.watchedTwice}`;
    expect(crawls).toBe(2); // the old one and one new: two watchlists, one crawl
    // Running crawls are not started again.
    expect(await recrawlDueChannels(db.sql, { everyHours: 24, watchedEveryHours: 6 })).toBe(0);
  });

  it('runs every 10 minutes, so the 6 hours hold within minutes', () => {
    const recrawl = parseCrontab(crontab).find((item) => item.task === 'recrawl_channels')!;
    const at = (min: number) => ({ min, hour: 3, date: 15, month: 6, dow: 3 });
    expect([0, 10, 20, 30, 40, 50].every((min) => recrawl.match(at(min)))).toBe(true);
    expect(recrawl.match(at(5))).toBe(false);
  });
});

describe('watched videos are checked at least daily', () => {
  const channel = channelId('UCchecksWatched');
  const other = channelId('UCchecksOther');
  const ids = { inChannel: 'chkWatchCh1', suspected: 'chkSuspect1', single: 'chkSingle01', unwatched: 'chkNotWatch' };
  const nextCheck = async (videoId: string) =>
    (
      await db.sql<{ inHours: number }[]>`
        select (extract(epoch from next_check_at - now()) / 3600)::float8 as "inHours" from video_checks where video_id = ${videoId}`
    )[0]!.inHours;

  beforeAll(async () => {
    await store([video(ids.inChannel, channel), video(ids.suspected, channel), video(ids.single, other), video(ids.unwatched, other)]);
    // Checked two hours ago, next in a month, as an old video's recheck window leaves it.
    await db.sql`update video_checks set checked_at = now() - interval '2 hours', next_check_at = now() + interval '30 days'
      where video_id = any(${Object.values(ids)})`;
    // A first "gone" two hours ago: its confirmation probe is due in two days (STATUS_CONFIRM_MINUTES of 2 days).
    await db.sql`update video_checks set suspected_at = now() - interval '2 hours', suspected_reason = 'private',
      next_check_at = now() + interval '46 hours' where video_id = ${ids.suspected}`;
  });

  it('pulls the next check of what becomes watched in to a day after its last one; a confirmation probe keeps its time', async () => {
    await watchChannel(channel);
    await watchVideo(ids.single);
    expect(await nextCheck(ids.inChannel)).toBeCloseTo(22, 1);
    expect(await nextCheck(ids.single)).toBeCloseTo(22, 1);
    expect(await nextCheck(ids.suspected)).toBeCloseTo(46, 1);
    expect(await nextCheck(ids.unwatched)).toBeCloseTo(30 * 24, 1);
  });

  it('sets the next check of a watched video a day ahead after each check, and leaves the confirmation schedule alone', async () => {
    const schedule = { confirmMinutes: 2 * 24 * 60, recheckDays: 30 };
    const available = (videoId: string) => ({
      videoId,
      outcome: 'available' as const,
      source: 'watch_page' as const,
      evidence: 'playable',
    });
    await db.sql.begin((tx) =>
      recordObservations(
        tx,
        [
          available(ids.inChannel),
          available(ids.single),
          available(ids.unwatched),
          { videoId: ids.suspected, outcome: 'gone', reason: 'private', source: 'watch_page', evidence: 'This video is private' },
        ],
        schedule,
      ),
    );
    expect(await nextCheck(ids.inChannel)).toBeCloseTo(24, 1);
    expect(await nextCheck(ids.single)).toBeCloseTo(24, 1);
    expect(await nextCheck(ids.unwatched)).toBeGreaterThan(24 * 26); // the recheck window, ±10 %
    // Still the first "gone" two hours ago plus the confirmation wait: not pulled in, not pushed out.
    expect(await nextCheck(ids.suspected)).toBeCloseTo(46, 1);
  });
});

describe('saved queries are re-run after crawls and imports', () => {
  const changesOf = (savedQueryId: string) => db.sql<{ videoId: string; details: { title: string; query: string } }[]>`
    select video_id as "videoId", details from changes where kind = 'query.new_match' and saved_query_id = ${savedQueryId} order by id`;
  const matchesOf = async (savedQueryId: string) =>
    (
      await db.sql<
        { videoId: string }[]
      >`select video_id as "videoId" from saved_query_matches where saved_query_id = ${savedQueryId} order by video_id`
    ).map((row) => row.videoId);
  const runDeps = () => ({
    sql: db.sql,
    search: createPostgresBackend({ sql: db.sql, timeoutMs: 5_000 }),
    timeoutMs: 5_000,
    log: createLogger('silent'),
  });

  it('records the first run as a silent baseline, then logs each video a crawl adds that matches', async () => {
    const { channel, videos } = generateChannel(3, 'l');
    videos[0]!.title = 'Lighthouse keepers of the north';
    videos[1]!.title = 'Lighthouse at night';
    videos[1]!.uploadDate = '2025-03-01';
    await store([videos[0]!]);
    const queryId = await saveQuery({ q: 'lighthouse', in: 'videos' });

    const baseline = await runSavedQueries(runDeps());
    expect(baseline.failed).toBe(0);
    expect(await matchesOf(queryId)).toEqual([videos[0]!.videoId]);
    expect(await changesOf(queryId)).toEqual([]);

    // A crawl of the channel stores the new video: finishing, it queues the re-run, which the worker takes.
    const stack = await startSearchStack(db, {}, { sources: [fakeSource({ name: 'youtube_api', channel, videos })] });
    try {
      const { key } = await createKeyedUser(db.sql);
      const events = await searchToEnd(stack.api, key, channel.channelId);
      expect(events.at(-1)?.event).toBe('search:complete');
      for (const deadline = Date.now() + 20_000; (await changesOf(queryId)).length === 0 && Date.now() < deadline; )
        await new Promise((done) => setTimeout(done, 100));
    } finally {
      await stack.close();
    }
    expect(await changesOf(queryId)).toEqual([
      { videoId: videos[1]!.videoId, details: { title: 'Lighthouse at night', query: 'lighthouse' } },
    ]);
    expect(await matchesOf(queryId)).toEqual([videos[0]!.videoId, videos[1]!.videoId].sort());

    // Nothing new, nothing logged: a run again appends no change.
    expect((await runSavedQueries(runDeps())).newMatches).toBe(0);
  });

  it(`looks at no more than ${RESULTS_PER_RUN} results of a query in a run, and past the baseline stops at a page of known matches`, async () => {
    const channel = channelId('UCmanyMatches');
    const many = Array.from({ length: RESULTS_PER_RUN + 50 }, (_, index) =>
      video(`many${String(index).padStart(7, '0')}`, channel, { title: `Harbour crane ${index}`, uploadDate: '2021-01-01' }),
    );
    await store(many);
    const queryId = await saveQuery({ q: 'harbour crane', in: 'videos' });
    await runSavedQueries(runDeps());
    expect(await matchesOf(queryId)).toHaveLength(RESULTS_PER_RUN);
    // One newer match: found on the first page; the older ones past the bound stay unlooked-at.
    await store([video('manyNewest1', channel, { title: 'Harbour crane at dawn', uploadDate: '2026-01-01' })]);
    // The real backend, its pages counted: the first holds the new match, the second only known ones and ends the walk.
    const deps = runDeps();
    const pages: string[] = [];
    const search = (request: FtsRequest) => {
      pages.push(
        `${request.query.groups
          .flat()
          .map((term) => term.text)
          .join(' ')} from ${request.offset}`,
      );
      return deps.search.search(request);
    };
    expect((await runSavedQueries({ ...deps, search: { ...deps.search, search } })).newMatches).toBe(1);
    expect(pages.filter((page) => page.startsWith('harbour crane'))).toEqual(['harbour crane from 0', 'harbour crane from 100']);
    expect((await changesOf(queryId)).map((change) => change.videoId)).toEqual(['manyNewest1']);
  });

  describe('after an import', () => {
    let fixture: ArchiveFixture;
    let runtimeDir: string;
    beforeAll(async () => {
      fixture = await createArchiveFixture({
        videos: 4,
        mediaEvery: 0,
        subtitlesEvery: 0,
        flatOnly: 0,
        legacyChannel: false,
        seed: 'saved-query-import',
      });
      runtimeDir = await mkdtemp(join(tmpdir(), 'afterimage-runtime-'));
    });
    afterAll(async () => {
      await fixture?.cleanup();
      if (runtimeDir) await rm(runtimeDir, { recursive: true, force: true });
    });

    it('queues one re-run, which logs the imported videos that match, even as the first run of a query saved before', async () => {
      // Saved, and imported into before its first run: what is stored since it was saved is news at once.
      const queryId = await saveQuery({ q: 'part', in: 'videos' });

      const imported = await runCommand(['import', fixture.dir], { DATABASE_URL: db.url, XDG_RUNTIME_DIR: runtimeDir });
      // 3: imported, the fixture's deliberately malformed file skipped.
      expect(imported.code, imported.stderr).toBe(3);
      const queued =
        await db.sql`select 1 from graphile_worker.jobs where task_identifier = 'run_saved_queries' and key = 'run_saved_queries'`;
      expect(queued).toHaveLength(1);
      await runJobsOnce(db.url, db.sql);
      expect((await changesOf(queryId)).map((change) => change.videoId).sort()).toEqual([...fixture.videoIds].sort());
    });
  });
});

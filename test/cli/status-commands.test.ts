import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log.ts';
import { statusChecks, videosCrawled } from '../../core/metrics.ts';
import { buildServices } from '../../core/services/buildServices.ts';
import { loadConfig } from '../../core/config.ts';
import { startWorker, type WorkerHandle } from '../../pipeline/worker.ts';
import { eventually, parseJson, runCli, runCommand } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { start as startYoutubeApi, generatedVideoId, type YoutubeApiServer } from '../kit/servers/youtube-api-server.ts';

// `afterimage backfill` and `afterimage refresh`, with a worker running: each once as a real process (runCli), the other cases in this process.

const CHANNEL = 'UCbackfillbackfillback01';

/** A counter of this process as /metrics shows it (the worker of these tests runs here). */
const counted = async (counter: typeof videosCrawled | typeof statusChecks, labels: Record<string, string>) =>
  (await counter.get()).values.find((value) =>
    Object.entries(labels).every(([name, given]) => (value.labels as Record<string, string | number | undefined>)[name] === given),
  )?.value ?? 0;
let db: TestDatabase;
let youtube: YoutubeApiServer;
let worker: WorkerHandle;
let env: Record<string, string>;

beforeAll(async () => {
  db = await createTestDatabase();
  youtube = await startYoutubeApi({ apiKey: 'cli-key' });
  youtube.createChannel({
    channelId: CHANNEL,
    handle: '@backfilled',
    title: 'Backfilled',
    videoCount: 120,
    deleted: [generatedVideoId(CHANNEL, 7)],
  });
  env = {
    DATABASE_URL: db.url,
    YOUTUBE_API_KEY: 'cli-key',
    YOUTUBE_API_URL: youtube.url,
    STATUS_CONFIRM_MINUTES: '0',
    ARCHIVE_DIR: '/nonexistent-afterimage-archive',
  };
  const config = loadConfig(env);
  worker = await startWorker(
    config,
    { sql: db.sql, url: db.url, embedded: false, close: async () => {} },
    createLogger('silent'),
    await buildServices(config, { sql: db.sql, log: createLogger('silent') }),
  );
});
afterAll(async () => {
  await worker?.stop();
  await youtube?.close();
  await db?.drop();
});

describe('operator status commands', () => {
  it('backfill crawls a channel from every source, then checks its videos, with progress', async () => {
    const crawledBefore = await counted(videosCrawled, { source: 'youtube_api' });
    const result = await runCli(['backfill', '@backfilled', '@nobody-knows-this', '--json'], env);
    expect(result.code, result.stderr).toBe(1); // one of the two is unknown
    const printed = parseJson(result);
    expect(printed.channels[0]).toMatchObject({ query: '@backfilled', channelId: CHANNEL, videos: 120, crawl: 'complete', statusJobs: 3 });
    expect(printed.channels[1]).toMatchObject({ query: '@nobody-knows-this', channelId: null });
    expect(result.stderr).toMatch(/crawling/);
    // The worker (this process) counted them for /metrics.
    expect((await counted(videosCrawled, { source: 'youtube_api' })) - crawledBefore).toBe(120);
  });

  it('backfill waits on a source that answers nothing for SOURCE_WAIT_BUDGET_MS, as the API and the worker do', async () => {
    youtube.failNext(100, 'hang');
    try {
      // A timeout per request far longer than the budget: only the budget can end the wait.
      const result = await runCommand(['backfill', '@never-answered', '--json'], {
        ...env,
        SOURCE_TIMEOUT_MS: '600000',
        SOURCE_WAIT_BUDGET_MS: '1000',
      });
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toMatch(/youtube_api gave no answer for 1 s/);
    } finally {
      youtube.clearFailures();
    }
  }, 45_000);

  it('refresh checks the given videos now and waits for the checks', async () => {
    const gone = generatedVideoId(CHANNEL, 3);
    youtube.setVideoState(gone, 'deleted');
    // STATUS_CONFIRM_MINUTES=0: the second look confirms at once.
    for (let i = 0; i < 2; i++) {
      const result = await runCli(['refresh', `--video=${gone}`, `--video=${generatedVideoId(CHANNEL, 4)}`, '--json'], env);
      expect(result.code, result.stderr + result.stdout).toBe(0);
      expect(parseJson(result)).toMatchObject({ videos: 2, jobs: 1, finished: true, failedJobs: 0 });
    }
    const [row] = await db.sql`select status, status_reason from videos where video_id = ${gone}`;
    expect(row).toMatchObject({ status: 'deleted', status_reason: 'unknown' });
  });

  it('refresh --channel checks a whole channel; bad ids are usage errors', async () => {
    // Video 7 was gone from the start, video 3 since the test above.
    const checkedBefore = await counted(statusChecks, { outcome: 'available' });
    const result = await runCommand(['refresh', '--channel', CHANNEL, '--json'], env);
    expect(result.code, result.stderr).toBe(0);
    expect(parseJson(result)).toMatchObject({ videos: 120, jobs: 3, finished: true, statuses: { live: 118, deleted: 2, checking: 0 } });
    expect((await counted(statusChecks, { outcome: 'available' })) - checkedBefore).toBe(118);
    const bad = await runCommand(['refresh', '--video', 'nope'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--video nope: expected an 11-character video id/);
  });

  it('the worker registers the status and re-crawl schedules in its crontab; a due channel is re-crawled', async () => {
    const known = await db.sql<{ identifier: string }[]>`select identifier from graphile_worker._private_known_crontabs`;
    expect(known.map((row) => row.identifier)).toEqual(expect.arrayContaining(['schedule_status_checks', 'recrawl_channels', 'cleanup']));
    await db.sql`update crawls set finished_at = now() - interval '25 hours' where channel_id = ${CHANNEL}`;
    await db.sql`select graphile_worker.add_job('recrawl_channels', '{}'::json)`;
    await eventually(async () => {
      const [row] = await db.sql<{ n: number }[]>`select count(*)::int as n from crawls where channel_id = ${CHANNEL}`;
      return row!.n === 2 ? row : undefined;
    }, 'a second crawl of the channel');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.ts';
import { createLogger } from '../../core/log.ts';
import { activeArchiveRoots } from '../../core/archives/archiveRoots.ts';
import { configuredSources } from '../../core/sources/configured.ts';
import { createArchiveFixture, type ArchiveFixture } from '../kit/archive-fixture.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { eventually, killService, startService, temporaryDataDir, testServerKey, type Service } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { countOf, latestCrawl, postJson, searchStreamToEnd, streamedVideoIds } from '../support/faults.ts';

// A real `afterimage worker` killed with SIGKILL (no chance to clean up) at the worst moment of a crawl,
// and a new one started: nothing lost, nothing twice. It times nothing, so it runs side by side with the
// rest, like test/fault/import-kill and two-apis; the files that kill a postmaster run alone (vitest.config.ts).

describe('kill -9 of a worker in the middle of a crawl', () => {
  let db: TestDatabase;
  let archive: ArchiveFixture;
  let api: TestApi;
  let dataDir: Awaited<ReturnType<typeof temporaryDataDir>>;
  let secretKey: string;
  const workers: Service[] = [];

  beforeAll(async () => {
    [db, archive, dataDir] = await Promise.all([
      createTestDatabase(),
      createArchiveFixture({ videos: 3_000, seed: 'fault-crawl', formats: 1, mediaEvery: 0, subtitlesEvery: 0, legacyChannel: false }),
      temporaryDataDir(),
    ]);
    const env = { ARCHIVE_DIR: archive.dir };
    secretKey = await testServerKey();
    api = await startTestApi(db.sql, env, createLogger('silent'), {
      sources: configuredSources(loadConfig({ DATABASE_URL: db.url, ...env }), () => activeArchiveRoots(db.sql)),
    });
  }, 120_000);
  afterAll(async () => {
    for (const worker of workers) await killService(worker);
    await api?.close();
    await archive?.cleanup();
    await dataDir?.remove();
    await db?.drop();
  });

  const startWorker = () => {
    const worker = startService(['worker'], {
      DATABASE_URL: db.url,
      ARCHIVE_DIR: archive.dir,
      DATA_DIR: dataDir.dir,
      LOG_LEVEL: 'info',
      SECRET_KEY: secretKey,
    });
    workers.push(worker);
    return worker;
  };

  it('a new worker finishes the crawl: every video stored and streamed exactly once, the totals count each once', async () => {
    const { key } = await createKeyedUser(db.sql);
    const first = startWorker();
    await first.waitForStderr(/afterimage ready/, 60_000);
    const started = await postJson(`${api.url}/api/search`, key, { query: archive.handle });
    expect(started.status).toBe(200);
    const session = ((await started.json()) as { data: { searchSessionId: string; sseEndpointUrl: string } }).data;

    // The first step has committed and the crawl goes on: the worst moment to lose the worker.
    const stored = await eventually(
      async () => {
        const [crawl] = await db.sql<
          { status: string; videos: number }[]
        >`select status, (select count(*)::int from videos) as videos from crawls order by started_at desc limit 1`;
        return crawl && crawl.videos > 0 ? crawl : undefined;
      },
      'the first stored batch',
      60_000,
    );
    await killService(first, 'SIGKILL');
    expect(stored.status, 'the crawl must still run when its worker is killed').toBe('running');
    expect(stored.videos).toBeLessThan(archive.allVideoIds.length);

    startWorker();
    const events = await searchStreamToEnd(`${api.url}${session.sseEndpointUrl}`, key, () => latestCrawl(db.sql));
    const complete = events.at(-1)!;

    const streamed = streamedVideoIds(events);
    expect(new Set(streamed).size, 'a video streamed twice').toBe(streamed.length);
    expect([...streamed].sort()).toEqual([...archive.allVideoIds].sort());
    expect(await countOf(db, 'videos')).toBe(archive.allVideoIds.length);
    expect(complete.data.totals).toMatchObject({ videos: archive.allVideoIds.length, new: archive.allVideoIds.length });
    const duplicates = await db.sql`
      select payload->>'videoId' as "videoId", count(*)::int as n from events where type = 'search:video' group by 1 having count(*) > 1`;
    expect(duplicates).toEqual([]);
    const histories = await db.sql`select video_id from video_status_history group by video_id having count(*) > 1`;
    expect(histories, 'a video recorded as new twice').toEqual([]);
    // The test's own limit: searchStreamToEnd's bound on the crawl (test/support/faults.ts) and a minute.
  }, 240_000);
});

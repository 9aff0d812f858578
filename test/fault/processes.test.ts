import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.ts';
import { createLogger } from '../../core/log.ts';
import { activeArchiveRoots } from '../../core/archives/listArchiveRoots.ts';
import { configuredSources } from '../../core/sources/configured.ts';
import { createArchiveFixture, type ArchiveFixture } from '../kit/archive-fixture.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { eventually, killService, parseJson, runCli, startService, temporaryDataDir, type Service } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { readStream, type ReceivedEvent } from '../support/sse.ts';

// Faults with real processes: `afterimage worker`, `afterimage import` and `afterimage api` run as
// child processes over a database of their own, and are killed with SIGKILL (no chance to clean up)
// at the worst moment, or run side by side. What must hold afterwards: nothing lost, nothing twice.

const post = (url: string, key: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'X-API-Key': key, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

/** The video ids a search stream delivered, in order (a search:video_batch only announces the search:video events that follow it). */
const streamedVideoIds = (events: ReceivedEvent[]) =>
  events.filter((event) => event.event === 'search:video').map((event) => event.data.videoId as string);

async function countOf(
  db: TestDatabase,
  table: 'videos' | 'channels' | 'subtitle_tracks' | 'video_status_history' | 'events',
): Promise<number> {
  const [row] = await db.sql<{ n: number }[]>`select count(*)::int as n from ${db.sql(table)}`;
  return row!.n;
}

/** The API's address from its 'API listening' log line. */
async function listeningUrl(service: Service): Promise<string> {
  const [line] = await service.waitForStderr(/\{[^\n]*"msg":"API listening"[^\n]*\}/);
  return (JSON.parse(line) as { url: string }).url;
}

describe('kill -9 of a worker in the middle of a crawl', () => {
  let db: TestDatabase;
  let archive: ArchiveFixture;
  let api: TestApi;
  let dataDir: Awaited<ReturnType<typeof temporaryDataDir>>;
  const workers: Service[] = [];

  beforeAll(async () => {
    [db, archive, dataDir] = await Promise.all([
      createTestDatabase(),
      createArchiveFixture({ videos: 3_000, seed: 'fault-crawl', formats: 1, mediaEvery: 0, subtitlesEvery: 0, legacyChannel: false }),
      temporaryDataDir(),
    ]);
    const env = { ARCHIVE_DIR: archive.dir };
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
    const worker = startService(['worker'], { DATABASE_URL: db.url, ARCHIVE_DIR: archive.dir, DATA_DIR: dataDir.dir, LOG_LEVEL: 'info' });
    workers.push(worker);
    return worker;
  };

  it('a new worker finishes the crawl: every video stored and streamed exactly once, the totals count each once', async () => {
    const { key } = await createKeyedUser(db.sql);
    const first = startWorker();
    await first.waitForStderr(/afterimage ready/);
    const started = await post(`${api.url}/api/search`, key, { query: archive.handle });
    expect(started.status).toBe(200);
    const session = ((await started.json()) as { data: { searchSessionId: string; sseEndpointUrl: string } }).data;

    // The first step has committed and the crawl goes on: the worst moment to lose the worker.
    const stored = await eventually(async () => {
      const [crawl] = await db.sql<
        { status: string; videos: number }[]
      >`select status, (select count(*)::int from videos) as videos from crawls order by started_at desc limit 1`;
      return crawl && crawl.videos > 0 ? crawl : undefined;
    }, 'the first stored batch');
    await killService(first, 'SIGKILL');
    expect(stored.status, 'the crawl must still run when its worker is killed').toBe('running');
    expect(stored.videos).toBeLessThan(archive.allVideoIds.length);

    startWorker();
    const { events } = await readStream(`${api.url}${session.sseEndpointUrl}`, { key, timeoutMs: 60_000 });
    const complete = events.at(-1)!;
    expect(complete.event).toBe('search:complete');

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
  }, 120_000);
});

describe('kill -9 of `afterimage import` half-way', () => {
  let killed: TestDatabase;
  let clean: TestDatabase;
  let archive: ArchiveFixture;

  beforeAll(async () => {
    [killed, clean, archive] = await Promise.all([
      createTestDatabase(),
      createTestDatabase(),
      createArchiveFixture({ videos: 2_500, seed: 'fault-import', formats: 1, mediaEvery: 0, subtitlesEvery: 20 }),
    ]);
  }, 120_000);
  afterAll(async () => {
    await archive?.cleanup();
    await Promise.all([killed?.drop(), clean?.drop()]);
  });

  const state = async (db: TestDatabase) => ({
    videos: await countOf(db, 'videos'),
    channels: await countOf(db, 'channels'),
    subtitleVersions: await countOf(db, 'subtitle_tracks'),
    statusHistory: await countOf(db, 'video_status_history'),
    newestVersion: (await db.sql<{ v: number }[]>`select coalesce(max(version), 0)::int as v from subtitle_tracks`)[0]!.v,
  });

  it('imported again, the database ends as after one clean import: same rows, no second subtitle version', async () => {
    const interrupted = startService(['import', archive.dir, '--json'], { DATABASE_URL: killed.url });
    await eventually(async () => (await countOf(killed, 'videos')) > 0, 'the first imported batch', 60_000);
    const stillRunning = interrupted.child.exitCode === null;
    await killService(interrupted, 'SIGKILL');
    expect(stillRunning, 'the import must still run when it is killed').toBe(true);
    const half = await state(killed);
    expect(half.videos).toBeLessThan(archive.allVideoIds.length + archive.legacy!.videoIds.length);

    const [again, once] = await Promise.all([
      runCli(['import', archive.dir, '--json'], { DATABASE_URL: killed.url }),
      runCli(['import', archive.dir, '--json'], { DATABASE_URL: clean.url }),
    ]);
    // 3: imported, with the fixture's malformed file skipped.
    expect([again.code, once.code], again.stderr + once.stderr).toEqual([3, 3]);
    expect(parseJson(again).videos).toBe(parseJson(once).videos);
    const [after, reference] = [await state(killed), await state(clean)];
    expect(after).toEqual(reference);
    expect(reference.newestVersion).toBe(1);
    expect(reference.videos).toBe(archive.allVideoIds.length + archive.legacy!.videoIds.length);
  }, 120_000);
});

describe('two API processes over one database', () => {
  let db: TestDatabase;
  let archive: ArchiveFixture;
  let dataDir: Awaited<ReturnType<typeof temporaryDataDir>>;
  const services: Service[] = [];
  let urls: string[];

  beforeAll(async () => {
    [db, archive, dataDir] = await Promise.all([
      createTestDatabase(),
      createArchiveFixture({ videos: 40, seed: 'fault-two-apis', legacyChannel: false }),
      temporaryDataDir(),
    ]);
    // Set before the processes start, so that neither holds an older copy of the tier in its cache.
    await db.sql`update tier_limits set max_count = 12 where tier = 'registered' and limit_name = 'requestsPerMinute'`;
    const env = { DATABASE_URL: db.url, ARCHIVE_DIR: archive.dir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' };
    for (const [index, role] of (['api', 'api', 'worker'] as const).entries())
      services.push(startService([role], { ...env, DATA_DIR: join(dataDir.dir, `${role}-${index}`) }));
    urls = await Promise.all(services.slice(0, 2).map(listeningUrl));
    await services[2]!.waitForStderr(/afterimage ready/);
  }, 120_000);
  afterAll(async () => {
    for (const service of services) await killService(service, 'SIGTERM');
    await archive?.cleanup();
    await dataDir?.remove();
    await db?.drop();
  });

  it('a per-minute quota holds across both: 40 concurrent requests through two processes, exactly 12 answered', async () => {
    const { key } = await createKeyedUser(db.sql, { tier: 'registered' });
    const responses = await Promise.all(
      Array.from({ length: 40 }, (_, index) => fetch(`${urls[index % 2]}/api/features`, { headers: { 'X-API-Key': key } })),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(12);
    expect(statuses.filter((status) => status === 429)).toHaveLength(28);
    const refused = responses.find((response) => response.status === 429)!;
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('RATE_LIMITED');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('a search stream started on one resumes on the other with Last-Event-ID: the events missed, each once', async () => {
    const { key } = await createKeyedUser(db.sql);
    const started = await post(`${urls[0]}/api/search`, key, { query: archive.handle });
    expect(started.status).toBe(200);
    const path = ((await started.json()) as { data: { sseEndpointUrl: string } }).data.sseEndpointUrl;
    const whole = await readStream(`${urls[0]}${path}`, { key, timeoutMs: 30_000 });
    expect(whole.events.at(-1)!.event).toBe('search:complete');
    const withIds = whole.events.filter((event) => event.id);
    expect(withIds.length).toBeGreaterThan(4);

    // A client that lost its connection to the first process after some events reconnects to the second.
    const cut = Math.floor(withIds.length / 2);
    const seen = whole.events.slice(0, whole.events.indexOf(withIds[cut - 1]!) + 1);
    const resumed = await readStream(`${urls[1]}${path}`, { key, lastEventId: withIds[cut - 1]!.id, timeoutMs: 30_000 });
    expect(resumed.status).toBe(200);
    expect(resumed.events.at(-1)!.event).toBe('search:complete');
    expect(resumed.events.map((event) => event.id).filter(Boolean)).toEqual(withIds.slice(cut).map((event) => event.id));
    const videos = [...streamedVideoIds(seen), ...streamedVideoIds(resumed.events)];
    expect(new Set(videos).size, 'a video delivered twice').toBe(videos.length);
    expect([...videos].sort()).toEqual([...archive.allVideoIds].sort());
  }, 60_000);
});

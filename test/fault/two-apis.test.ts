import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createArchiveFixture, type ArchiveFixture } from '../kit/archive-fixture.ts';
import { createKeyedUser } from '../support/api.ts';
import { killService, startService, temporaryDataDir, testServerKey, type Service } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { listeningUrl, postJson, streamedVideoIds } from '../support/faults.ts';
import { awaitFreshWindow } from '../support/http-helpers.ts';
import { readStream } from '../support/sse.ts';

// Two real `afterimage api` processes and a worker over one database: a quota and a stream hold across
// both. Nothing is killed or timed, so it runs beside the other files.

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
    const env = {
      DATABASE_URL: db.url,
      ARCHIVE_DIR: archive.dir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      SECRET_KEY: await testServerKey(),
    };
    for (const [index, role] of (['api', 'api', 'worker'] as const).entries())
      services.push(startService([role], { ...env, DATA_DIR: join(dataDir.dir, `${role}-${index}`) }));
    urls = await Promise.all(services.slice(0, 2).map(listeningUrl));
    await services[2]!.waitForStderr(/afterimage ready/, 60_000);
  }, 120_000);
  afterAll(async () => {
    for (const service of services) await killService(service, 'SIGTERM');
    await archive?.cleanup();
    await dataDir?.remove();
    await db?.drop();
  });

  it('a per-minute quota holds across both: 40 concurrent requests through two processes, exactly 12 answered', async () => {
    const { key } = await createKeyedUser(db.sql, { tier: 'registered' });
    // Within one minute's bucket: across two, the sliding estimate rounds the previous bucket's share down.
    await awaitFreshWindow(db.sql);
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
    const started = await postJson(`${urls[0]}/api/search`, key, { query: archive.handle });
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

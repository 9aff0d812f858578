import { copyFile, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finishCrawl } from '../../core/crawl/crawlStep.ts';
import { storeArchiveScan } from '../../core/import/storeArchiveScan.ts';
import { scanArchive } from '../../core/sources/archive.ts';
import { createArchiveFixture, type ArchiveFixture } from '../kit/archive-fixture.ts';
import { describeReal } from '../kit/describeReal.ts';
import { realFixture } from '../kit/realFixtures.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { killService, parseJson, runCli, runCommand, startService, type CliResult, type Service } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { searchToEnd, startSearchStack } from '../support/stack.ts';

// `afterimage import` run as the real command over a yt-dlp folder: the archive-fixture kit's
// channel, plus real files of the wild copied in (an anonymised dump, "Me at the zoo" and a real
// caption file beside it).

const ZOO = 'jNQXAC9IVRw';
const ZOO_BASE = `Me at the zoo [${ZOO}]`;

let db: TestDatabase;
let other: TestDatabase;
let fixture: ArchiveFixture;
let runtimeDir: string;
let api: TestApi;
let key: string;
let first: CliResult;

/** The test database's URL with a password in it: trust authentication ignores it, the summary must hide it. */
const withPassword = (url: string) => url.replace('postgresql://postgres@', 'postgresql://postgres:s3cret-pw@');
const importEnv = (database: TestDatabase) => ({ DATABASE_URL: withPassword(database.url), XDG_RUNTIME_DIR: runtimeDir });
/** `afterimage import` of the fixture in this process; the first import runs as a real process (runCli). */
const importInto = (database: TestDatabase, ...flags: string[]) => runCommand(['import', fixture.dir, ...flags], importEnv(database));

describeReal('afterimage import', () => {
  beforeAll(async () => {
    [db, other] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    fixture = await createArchiveFixture({ videos: 9, seed: 'import-command' });
    const real = join(fixture.dir, 'real');
    await mkdir(real);
    await copyFile(realFixture('pinchflat/media_metadata.json'), join(real, 'Pinchflat Example Video [ABC123].info.json'));
    await copyFile(realFixture('peace/video_with_subs.json'), join(real, `${ZOO_BASE}.info.json`));
    await copyFile(realFixture('wrolpi/example1.en.vtt'), join(real, `${ZOO_BASE}.en.vtt`));
    runtimeDir = await mkdtemp(join(tmpdir(), 'afterimage-runtime-'));
    api = await startTestApi(db.sql);
    ({ key } = await createKeyedUser(db.sql));
    first = await runCli(['import', fixture.dir, '--json'], importEnv(db));
  }, 120_000);

  afterAll(async () => {
    await api?.close();
    await fixture?.cleanup();
    if (runtimeDir) await rm(runtimeDir, { recursive: true, force: true });
    await Promise.all([db?.drop(), other?.drop()]);
  });

  it("skips a file whose ids are not YouTube's and a malformed one, listed with the reason, imports the rest and exits 3", async () => {
    expect(first.code, first.stderr).toBe(3);
    const summary = parseJson(first);
    expect(summary.partial).toBe(true);
    expect(summary.skipped).toEqual(
      expect.arrayContaining([
        {
          file: join(fixture.dir, 'real', 'Pinchflat Example Video [ABC123].info.json'),
          reason: 'video id "ABC123" is not a YouTube video id (11 letters, digits, - or _)',
        },
        { file: fixture.malformedFile, reason: expect.stringMatching(/^not valid JSON/) },
      ]),
    );
    expect(summary.skipped).toHaveLength(2);
    const expected = [...fixture.allVideoIds, ...fixture.legacy!.videoIds, ZOO];
    expect(summary).toMatchObject({ videos: expected.length, new: expected.length, updated: 0, unchanged: 0 });
    const stored = await db.sql<{ videoId: string }[]>`select video_id as "videoId" from videos`;
    expect(stored.map((row) => row.videoId).sort()).toEqual([...expected].sort());
  });

  it("documents exit code 3 in the command's usage", async () => {
    const usage = await runCommand(['import']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('3 imported but some files skipped');
  });

  it('loads the subtitle files beside each info.json: manual and auto as the info.json says, served at once', async () => {
    const summary = parseJson(first);
    const subtitled = [...fixture.subtitleVideoIds, ZOO];
    // The kit writes en (manual) and de (auto) per subtitled video; the zoo has its real en track.
    expect(summary.subtitles).toEqual({
      videos: subtitled.length,
      tracks: fixture.subtitleVideoIds.length * 2 + 1,
      newVersions: fixture.subtitleVideoIds.length * 2 + 1,
      problems: [],
    });
    const tracks = await db.sql<{ videoId: string; language: string; kind: string; source: string }[]>`
      select video_id as "videoId", language, kind, source from subtitle_tracks order by 1, 2`;
    expect(tracks.filter((track) => track.videoId === fixture.subtitleVideoIds[0])).toEqual([
      { videoId: fixture.subtitleVideoIds[0], language: 'de', kind: 'auto', source: 'archive' },
      { videoId: fixture.subtitleVideoIds[0], language: 'en', kind: 'manual', source: 'archive' },
    ]);
    // "Me at the zoo" lists en under `subtitles`: a manual track.
    expect(tracks.filter((track) => track.videoId === ZOO)).toEqual([{ videoId: ZOO, language: 'en', kind: 'manual', source: 'archive' }]);

    const srt = await api.call(`/api/subtitles/${ZOO}`, { key });
    expect(srt.status).toBe(200);
    expect(srt.body).toContain('kinetic bunny');
    const status = await api.call(`/api/subtitles/${fixture.subtitleVideoIds[0]}/status`, { key });
    expect(status.body.data).toMatchObject({ status: 'available', transcript: { state: 'completed' } });
    const video = await db.sql`select has_subtitles from videos where video_id = ${ZOO}`;
    expect(video[0]!.has_subtitles).toBe(true);
  });

  it('names the database it wrote to, password masked, in --json and in text', async () => {
    expect(parseJson(first).database).toEqual({ embedded: false, location: withPassword(db.url).replace('s3cret-pw', '****') });
    expect(first.stdout).not.toContain('s3cret-pw');
    const text = await importInto(db);
    expect(text.stdout).toContain(`into:      ${withPassword(db.url).replace('s3cret-pw', '****')} (DATABASE_URL)`);
    expect(text.stdout).not.toContain('s3cret-pw');
    expect(text.stdout).toMatch(/skipped:\s+2 \(not imported\)/);
  });

  it('a second import changes nothing: no new video, no new subtitle version', async () => {
    const versions = async () => (await db.sql<{ n: number }[]>`select count(*)::int as n from subtitle_tracks`)[0]!.n;
    const before = await versions();
    const again = await importInto(db, '--json');
    expect(again.code).toBe(3);
    const summary = parseJson(again);
    expect(summary).toMatchObject({ new: 0, updated: 0, unchanged: summary.videos });
    expect(summary.subtitles).toMatchObject({ tracks: before, newVersions: 0 });
    expect(await versions()).toBe(before);
  });

  it('knows the imported words for did-you-mean as soon as it ends', async () => {
    const typo = await api.call('/api/fts?q=microplastcs', { key });
    expect(typo.status).toBe(200);
    expect(typo.body.data).toMatchObject({ total: 0, suggestion: 'microplastics' });
    expect(parseJson(first).vocabulary.videos).toBeGreaterThan(0);
  });

  it('a channel search over the imported folder finds the subtitles stored, with nothing left to fetch', async () => {
    const stack = await startSearchStack(db, { ARCHIVE_DIR: fixture.dir });
    try {
      const events = await searchToEnd(stack.api, key, fixture.handle);
      expect(events.at(-1)!.event).toBe('search:complete');
      const videos = new Map(events.filter((event) => event.event === 'search:video').map((event) => [event.data.videoId, event.data]));
      for (const videoId of fixture.subtitleVideoIds) expect(videos.get(videoId)).toMatchObject({ hasSubtitles: true });
      const fetches =
        await db.sql`select 1 from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id where t.identifier = 'fetch_subtitles'`;
      expect(fetches).toHaveLength(0);
    } finally {
      await stack.close();
    }
  });

  describe('with a service running on this machine', () => {
    let service: Service | undefined;
    afterAll(() => killService(service, 'SIGTERM'));

    it('says so when the service uses another database, and not when it uses this one', async () => {
      service = startService(['api'], {
        DATABASE_URL: withPassword(other.url),
        DATA_DIR: join(runtimeDir, 'data'),
        PORT: '0',
        LOG_LEVEL: 'info',
        XDG_RUNTIME_DIR: runtimeDir,
      });
      await service.waitForStderr(/afterimage ready/);
      const pid = service.child.pid!;

      const elsewhere = await importInto(db, '--json');
      expect(parseJson(elsewhere).servicesOnOtherDatabases).toEqual([
        {
          pid,
          role: 'api',
          startedAt: expect.any(String),
          database: { embedded: false, location: withPassword(other.url).replace('s3cret-pw', '****') },
          archiveDir: expect.any(String),
          url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
        },
      ]);
      const text = await importInto(db);
      expect(text.stdout).toContain(
        `note: a running afterimage service (api, pid ${pid}) uses ${withPassword(other.url).replace('s3cret-pw', '****')} (DATABASE_URL), not this database`,
      );

      const same = await importInto(other, '--json');
      expect(parseJson(same).servicesOnOtherDatabases).toEqual([]);

      // Stopped, the service leaves no record behind.
      await killService(service, 'SIGTERM');
      expect(await readdir(join(runtimeDir, 'afterimage', 'services'))).toEqual([]);
    });
  });
});

describe('storing a scan', () => {
  let database: TestDatabase;
  let archive: ArchiveFixture;
  beforeAll(async () => {
    database = await createTestDatabase();
    archive = await createArchiveFixture({ videos: 5, seed: 'store-scan', legacyChannel: false });
  });
  afterAll(async () => {
    await archive?.cleanup();
    await database?.drop();
  });

  it('stores a batch the database refuses row by row: the bad row skips itself with the reason, the rest is stored', async () => {
    const scan = await scanArchive(archive.dir);
    const evidence = join(archive.dir, 'hand-made.info.json');
    // Past the parser's checks (a record built by hand): the database's constraint refuses it.
    scan.videos.push({ videoId: 'ABC123', channelId: archive.channelId, title: 'Refused', evidenceUrl: pathToFileURL(evidence).href });
    const stored = await storeArchiveScan(database.sql, scan);
    expect(stored.skipped).toEqual([{ file: evidence, reason: expect.stringMatching(/^video ABC123: .*videos_video_id_check/) }]);
    expect(stored.new).toBe(archive.allVideoIds.length);
    const [row] = await database.sql<{ n: number }[]>`select count(*)::int as n from videos`;
    expect(row!.n).toBe(archive.allVideoIds.length);
  });
});

describe('a crawl that stored videos', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database?.drop());

  const refreshJobs = () =>
    database.sql<
      { key: string | null }[]
    >`select key from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id where t.identifier = 'refresh_search_words'`;

  const crawl = async (changed: number) => {
    const channelId = 'UCcrawlrefresh0000000000';
    await database.sql`insert into channels (channel_id) values (${channelId}) on conflict do nothing`;
    const totals = { videos: changed, new: changed, sources: { archive: { videos: changed, changed } } };
    const [row] = await database.sql<{ id: string }[]>`
      insert into crawls (channel_id, kind, status, totals) values (${channelId}, 'full', 'running', ${JSON.stringify(totals)}::text::jsonb) returning id::text`;
    await database.sql.begin((tx) => finishCrawl(tx, { id: row!.id, channelId }));
  };

  it('queues one refresh of the did-you-mean vocabulary as it finishes; crawls that stored nothing queue none', async () => {
    await crawl(0);
    expect(await refreshJobs()).toEqual([]);
    await crawl(3);
    await crawl(5);
    expect(await refreshJobs()).toEqual([{ key: 'refresh_search_words' }]);
  });
});

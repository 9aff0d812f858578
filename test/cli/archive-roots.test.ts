import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activeArchiveRoots } from '../../core/archives/archiveRoots.ts';
import { loadConfig } from '../../core/config.ts';
import { createLogger } from '../../core/log.ts';
import { configuredSources } from '../../core/sources/configured.ts';
import { fetchSubtitles } from '../../core/subtitles/fetchSubtitles.ts';
import { archiveSubtitleSource } from '../../core/subtitles/sources.ts';
import { createArchiveFixture, type ArchiveFixture } from '../kit/archive-fixture.ts';
import { createKeyedUser } from '../support/api.ts';
import { eventually, parseJson, runCli, runCommand } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { searchToEnd, startSearchStack } from '../support/stack.ts';

// An imported folder is an archive root: a later channel search reads the files added to it since
// (ARCHIVE_DIR points elsewhere), their subtitles are fetched from it and their media served; once
// removed, nothing is read from it any more, and nothing is deleted.

const ADDED = 'AddedLater1';

let db: TestDatabase;
let fixture: ArchiveFixture;
let elsewhere: string;
let key: string;
// archives once as a real process (spawned; import is one in import.test.ts), the other calls in this process.
const cli = (args: string[]) => runCommand([...args, '--json'], { DATABASE_URL: db.url });
const spawned = (args: string[]) => runCli([...args, '--json'], { DATABASE_URL: db.url });

/** A video yt-dlp wrote into the folder after the import: a copy of a subtitled one under a new id, with a media file. */
async function addVideo(videoId: string) {
  const channelDir = join(fixture.dir, fixture.channelTitle);
  const model = fixture.subtitleVideoIds[0]!;
  const base = (await readdir(channelDir)).find((name) => name.endsWith(`[${model}].info.json`))!.slice(0, -'.info.json'.length);
  const added = join(channelDir, `Added later [${videoId}]`);
  await writeFile(`${added}.info.json`, (await readFile(join(channelDir, `${base}.info.json`), 'utf8')).replaceAll(model, videoId));
  await copyFile(join(channelDir, `${base}.en.vtt`), `${added}.en.vtt`);
  await writeFile(`${added}.mp4`, Buffer.alloc(4096, 9));
}

describe('archive roots', () => {
  beforeAll(async () => {
    [db, fixture] = await Promise.all([
      createTestDatabase(),
      createArchiveFixture({ videos: 4, seed: 'archive-roots', legacyChannel: false }),
    ]);
    elsewhere = await mkdtemp(join(tmpdir(), 'afterimage-elsewhere-'));
    ({ key } = await createKeyedUser(db.sql));
  });
  afterAll(async () => {
    await fixture?.cleanup();
    if (elsewhere) await rm(elsewhere, { recursive: true, force: true });
    await db?.drop();
  });

  it('an import stores its folder as an archive root, once, listed by afterimage archives list', async () => {
    const first = await cli(['import', fixture.dir]);
    expect(parseJson(first).archiveRoot).toEqual({ path: fixture.dir, added: true });
    const again = await cli(['import', fixture.dir]);
    expect(parseJson(again).archiveRoot).toEqual({ path: fixture.dir, added: false });
    const listed = await spawned(['archives', 'list']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(parseJson(listed).roots).toEqual([{ path: fixture.dir, addedAt: expect.any(String), removedAt: null }]);
  }, 60_000);

  it('a channel search then finds the files added to it since; their subtitles are fetched from it and their media served', async () => {
    await addVideo(ADDED);
    const stack = await startSearchStack(db, { ARCHIVE_DIR: elsewhere });
    try {
      const events = await searchToEnd(stack.api, key, fixture.handle);
      expect(events.at(-1)!.event).toBe('search:complete');
      const found = events.filter((event) => event.event === 'search:video').map((event) => event.data.videoId);
      expect(found).toContain(ADDED);

      await eventually(
        async () =>
          (await db.sql`select 1 from subtitle_tracks where video_id = ${ADDED} and language = 'en' and source = 'archive'`).length,
        'the added video subtitles fetched from the root',
      );
      const media = await stack.api.call(`/api/videos/${ADDED}/file`, { key });
      expect(media.status).toBe(200);
      expect(media.headers.get('content-length')).toBe('4096');
    } finally {
      await stack.close();
    }
  }, 60_000);

  it('removed, a root is read no more: no crawl, no subtitle file, no media; its files and stored rows stay', async () => {
    const videosBefore = (await db.sql`select video_id from videos`).length;
    const removed = await cli(['archives', 'remove', fixture.dir]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(await activeArchiveRoots(db.sql)).toEqual([]);
    expect(parseJson(await cli(['archives', 'list', '--all'])).roots).toEqual([
      { path: fixture.dir, addedAt: expect.any(String), removedAt: expect.any(String) },
    ]);
    const again = await cli(['archives', 'remove', fixture.dir]);
    expect(again.code).toBe(2);
    expect(parseJson(again).error.message).toContain('is not an archive root in use; npx afterimage archives list shows them');

    const [archive] = configuredSources(loadConfig({ DATABASE_URL: db.url, ARCHIVE_DIR: elsewhere }), () => activeArchiveRoots(db.sql));
    expect(await archive!.resolveChannel({ kind: 'handle', handle: fixture.handle })).toBeUndefined();

    const stack = await startSearchStack(db, { ARCHIVE_DIR: elsewhere });
    try {
      const media = await stack.api.call(`/api/videos/${ADDED}/file`, { key });
      expect(media.status).toBe(404);
      expect(media.body.error.details).toEqual({ reason: 'archive_removed' });
    } finally {
      await stack.close();
    }
    const report = await fetchSubtitles(db.sql, [archiveSubtitleSource()], ADDED, { log: createLogger('silent'), finalAttempt: true });
    expect(report).toMatchObject({ found: 0, stored: [] });

    expect((await db.sql`select video_id from videos`).length).toBe(videosBefore);
    expect((await db.sql`select 1 from subtitle_tracks where video_id = ${ADDED}`).length).toBeGreaterThan(0);
    expect(await readdir(join(fixture.dir, fixture.channelTitle))).toContain(`Added later [${ADDED}].mp4`);

    // Added again, it is read again.
    expect(parseJson(await cli(['archives', 'add', fixture.dir]))).toEqual({ path: fixture.dir, action: 'add', changed: true });
    expect(await archive!.resolveChannel({ kind: 'handle', handle: fixture.handle })).toMatchObject({ channelId: fixture.channelId });
  }, 60_000);
});

import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addBatch } from '../../core/crawl/crawlStep.ts';
import { resolveChannel } from '../../core/crawl/startSearch.ts';
import { loadConfig } from '../../core/config.ts';
import { storeArchiveScan } from '../../core/import/storeArchiveScan.ts';
import { createLogger } from '../../core/log.ts';
import { scanArchive } from '../../core/sources/archive.ts';
import { DefiniteError, TransientError } from '../../core/sources/httpErrors.ts';
import type { VideoSource } from '../../core/sources/types.ts';
import { parseChannelQuery } from '../../core/youtube/channelQuery.ts';
import { describeReal } from '../kit/describeReal.ts';
import { realFixture } from '../kit/realFixtures.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const log = createLogger('silent');
/** The configured default (SOURCE_WAIT_BUDGET_MS): these sources answer at once. */
const budget = loadConfig({}).SOURCE_WAIT_BUDGET_MS;
const failing = (name: VideoSource['name'], error: Error): VideoSource => ({
  name,
  resolveChannel: async () => Promise.reject(error),
  listVideos: async () => ({ videos: [] }),
});
const unknowing = (name: VideoSource['name']): VideoSource => ({
  name,
  resolveChannel: async () => undefined,
  listVideos: async () => ({ videos: [] }),
});
const query = { kind: 'handle', handle: '@nobody-at-all' } as const;

describe('resolveChannel', () => {
  it('is a 503 only when every source failed and a retry could help (a failure was transient)', async () => {
    const sources = [
      failing('archive', new DefiniteError('archive answered 403', 403)),
      failing('youtube_api', new TransientError('youtube answered 500', 500)),
    ];
    await expect(resolveChannel(db.sql, sources, query, log, budget)).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      message: expect.stringContaining('youtube_api: youtube answered 500'),
    });
  });

  it('is "unknown" (404) when every source failed definitely, or one answered', async () => {
    expect(
      await resolveChannel(
        db.sql,
        [failing('archive', new DefiniteError('403', 403)), failing('youtube_api', new DefiniteError('404', 404))],
        query,
        log,
        budget,
      ),
    ).toBeUndefined();
    expect(
      await resolveChannel(db.sql, [failing('archive', new TransientError('timeout')), unknowing('youtube_api')], query, log, budget),
    ).toBeUndefined();
    expect(await resolveChannel(db.sql, [], query, log, budget)).toBeUndefined();
  });
});

/** Imports a folder holding these info.json files (name → document) as `afterimage import` stores it. */
async function importArchive(files: Record<string, unknown>, copies: Record<string, string> = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'afterimage-names-'));
  try {
    for (const [name, document] of Object.entries(files)) await writeFile(join(dir, name), JSON.stringify(document));
    for (const [name, from] of Object.entries(copies)) await copyFile(from, join(dir, name));
    await storeArchiveScan(db.sql, await scanArchive(dir, { parseThreads: 0 }));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
/** The channel the database alone resolves a pasted URL to (no source asked). */
const resolvedId = async (input: string) => (await resolveChannel(db.sql, [], parseChannelQuery(input)!, log, budget))?.channelId;

describe('an imported channel is found by every URL name its archive recorded', () => {
  it('/c/ names from uploader_url and channel_url, and /user/ names, each way they can be pasted', async () => {
    const channelId = 'UCnames0000000000000000a';
    await importArchive({
      'v.info.json': {
        id: 'namesVideo1',
        title: 'A video',
        extractor: 'youtube',
        channel_id: channelId,
        channel: 'Names',
        uploader_url: 'https://www.youtube.com/c/FirstName',
        channel_url: 'https://www.youtube.com/c/SecondName',
        uploader_id: 'legacyuser',
      },
    });
    for (const url of [
      'youtube.com/c/FirstName',
      'youtube.com/c/secondname',
      'https://www.youtube.com/SecondName/videos',
      'youtube.com/user/legacyuser',
      'youtube.com/c/legacyuser',
    ])
      expect(await resolvedId(url), url).toBe(channelId);
    expect(await resolvedId('youtube.com/c/NoSuchName')).toBeUndefined();
  });
});

describeReal('an imported real yt-dlp dump', () => {
  it('is found by its /user/ URL and the /c/ and bare forms of that name', async () => {
    await importArchive({}, { 'gogEJyoSB9s.info.json': realFixture('tubesync/metadata_low_formats.json') });
    for (const url of ['youtube.com/user/aboveandbeyondtv', 'youtube.com/c/aboveandbeyondtv', 'https://www.youtube.com/aboveandbeyondtv'])
      expect(await resolvedId(url), url).toBe('UCVE-ybBDg3UHSUylEVdPAsw');
  });
});

describe('crawl totals', () => {
  it('add a batch to the whole and to its source, keeping a source error until another replaces it', () => {
    const first = addBatch({}, 'archive', { videos: 3, inserted: 2, changed: 3, failure: 'archive answered 403' });
    expect(first).toEqual({ videos: 3, new: 2, sources: { archive: { videos: 3, changed: 3, error: 'archive answered 403' } } });
    const second = addBatch(first, 'archive', { videos: 2, inserted: 0, changed: 1 });
    expect(second).toEqual({ videos: 5, new: 2, sources: { archive: { videos: 5, changed: 4, error: 'archive answered 403' } } });
    expect(addBatch(second, 'wayback', { videos: 0, inserted: 0, changed: 0 }).sources).toEqual({
      ...second.sources,
      wayback: { videos: 0, changed: 0 },
    });
  });
});

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeArchiveScan } from '../../core/import/storeArchiveScan.ts';
import { createLogger } from '../../core/log.ts';
import { scanArchive } from '../../core/sources/archive.ts';
import { sanitiseText } from '../../core/text/sanitiseText.ts';
import { upsertVideos } from '../../core/videos/upsertVideos.ts';
import { start as startYoutubeApi, type YoutubeApiServer } from '../kit/servers/youtube-api-server.ts';
import { createKeyedUser } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { readStream } from '../support/sse.ts';
import { startSearchStack } from '../support/stack.ts';

// Text Postgres refuses (U+0000 anywhere; a lone surrogate inside the JSON the records are stored
// as) reaches the database from sources: each is stored as U+FFFD instead of failing the batch.

const ARCHIVE_CHANNEL = 'UCsanitisearchive000000A';
const API_CHANNEL = 'UCsanitiseapi0000000000A';
const ARCHIVE_VIDEO = 'nulTitle001';
const API_VIDEO = 'nulTitle002';
const LONE_SURROGATE = '\ud800';

let db: TestDatabase;
let youtube: YoutubeApiServer;
let archiveDir: string;

/** A modern yt-dlp info.json whose title, description and tags hold a NUL character (escaped as \u0000 in the file, as JSON.stringify writes it). */
const infoJson = (videoId: string) =>
  JSON.stringify({
    id: videoId,
    title: 'Before\u0000after',
    description: `line one\u0000 and a lone ${LONE_SURROGATE} surrogate`,
    tags: ['ok', 'n\u0000l'],
    channel_id: ARCHIVE_CHANNEL,
    channel: 'Archive \u0000 Channel',
    uploader_id: '@sanitisearchive',
    upload_date: '20200102',
    duration: 61,
    extractor: 'youtube',
    webpage_url: `https://www.youtube.com/watch?v=${videoId}`,
  });

beforeAll(async () => {
  db = await createTestDatabase();
  archiveDir = await mkdtemp(join(tmpdir(), 'afterimage-sanitise-'));
  await writeFile(join(archiveDir, `Before after [${ARCHIVE_VIDEO}].info.json`), infoJson(ARCHIVE_VIDEO));
  youtube = await startYoutubeApi();
  youtube.createChannel({
    channelId: API_CHANNEL,
    handle: '@sanitiseapi',
    title: `API ${LONE_SURROGATE} channel\u0000`,
    videos: [{ videoId: API_VIDEO, title: `Data\u0000API ${LONE_SURROGATE}`, description: 'nul \u0000 here', tags: ['t\u0000g'] }],
  });
});

afterAll(async () => {
  await youtube?.close();
  if (archiveDir) await rm(archiveDir, { recursive: true, force: true });
  await db?.drop();
});

const storedVideo = async (videoId: string) => {
  const [row] = await db.sql<
    { title: string; description: string; tags: string[] }[]
  >`select title, description, tags from videos where video_id = ${videoId}`;
  return row;
};

describe('sanitiseText', () => {
  it('replaces NUL and lone surrogates (either half) by U+FFFD and keeps surrogate pairs', () => {
    expect(sanitiseText('a\u0000b\ud800c\udc00d😀')).toEqual({ text: 'a\ufffdb\ufffdc\ufffdd😀', substituted: 3 });
    const clean = 'nothing to do 😀';
    expect(sanitiseText(clean)).toEqual({ text: clean, substituted: 0 });
  });
});

describe('records with unstorable text', () => {
  it('a channel crawl over the archive and the Data API stores them with U+FFFD and completes', async () => {
    const stack = await startSearchStack(db, {
      ARCHIVE_DIR: archiveDir,
      YOUTUBE_API_KEY: youtube.apiKey,
      YOUTUBE_API_URL: youtube.url,
      SOURCE_TIMEOUT_MS: '2000',
    });
    try {
      const { key } = await createKeyedUser(db.sql);
      for (const query of [ARCHIVE_CHANNEL, API_CHANNEL]) {
        const started = await stack.api.call('/api/search', {
          method: 'POST',
          key,
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ query }),
        });
        expect(started.status, JSON.stringify(started.body)).toBe(200);
        const { events } = await readStream(`${stack.api.url}${started.body.data.sseEndpointUrl}`, { key, timeoutMs: 20_000 });
        expect(events.at(-1)!.event).toBe('search:complete');
      }
    } finally {
      await stack.close();
    }
    expect(await storedVideo(ARCHIVE_VIDEO)).toEqual({
      title: 'Before\ufffdafter',
      description: 'line one\ufffd and a lone \ufffd surrogate',
      tags: ['ok', 'n\ufffdl'],
    });
    expect(await storedVideo(API_VIDEO)).toMatchObject({
      title: 'Data\ufffdAPI \ufffd',
      description: 'nul \ufffd here',
      tags: ['t\ufffdg'],
    });
    const channels = await db.sql<
      { title: string }[]
    >`select title from channels where channel_id in (${ARCHIVE_CHANNEL}, ${API_CHANNEL}) order by channel_id`;
    expect(channels.map((row) => row.title).sort()).toEqual(['API \ufffd channel\ufffd', 'Archive \ufffd Channel']);
  });

  it('an import stores them instead of skipping the file', async () => {
    const database = await createTestDatabase();
    try {
      const stored = await storeArchiveScan(database.sql, await scanArchive(archiveDir));
      expect(stored.skipped).toEqual([]);
      expect(stored.new).toBe(1);
      const [row] = await database.sql<{ title: string }[]>`select title from videos where video_id = ${ARCHIVE_VIDEO}`;
      expect(row!.title).toBe('Before\ufffdafter');
    } finally {
      await database.drop();
    }
  });

  it('logs one line per batch with the substitutions counted by field', async () => {
    const lines: string[] = [];
    const log = createLogger('info', {}, (line) => lines.push(line));
    const records = ['nulBatch001', 'nulBatch002'].map((videoId) => ({
      videoId,
      channelId: API_CHANNEL,
      title: 'two\u0000nul\u0000',
      tags: ['a\u0000'],
      captions: [{ language: `e${LONE_SURROGATE}n`, kind: 'manual' as const }],
    }));
    await db.sql.begin((tx) => upsertVideos(tx, 'youtube_api', records, log));
    const logged = lines.map((line) => JSON.parse(line));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({
      level: 'warn',
      source: 'youtube_api',
      records: 2,
      substitutions: { title: 4, tags: 2, 'captions.language': 2 },
    });
  });
});

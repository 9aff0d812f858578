import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeyedUser, type TestApi } from '../support/api.ts';
import { createArchiveFixture, type ArchiveFixture } from '../kit/archive-fixture.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { eventually } from '../support/cli.ts';
import { readStream } from '../support/sse.ts';
import { startSearchStack } from '../support/stack.ts';
import { start as startYoutubeApi, type YoutubeApiServer } from '../kit/servers/youtube-api-server.ts';

// The real sources (local archive directory, Data API v3 client) against a yt-dlp directory and a
// local server that answers in the Data API's formats.
let db: TestDatabase;
let api: TestApi;
let stack: Awaited<ReturnType<typeof startSearchStack>>;
let youtube: YoutubeApiServer;
let archive: ArchiveFixture;
let key: string;
const apiChannel = 'UCapiflowchannel0000000A';

beforeAll(async () => {
  db = await createTestDatabase();
  youtube = await startYoutubeApi();
  youtube.createChannel({ channelId: apiChannel, handle: '@apiflow', title: 'API Flow', videoCount: 120, deleted: [] });
  archive = await createArchiveFixture({ videos: 60 });
  stack = await startSearchStack(db, {
    ARCHIVE_DIR: archive.dir,
    YOUTUBE_API_KEY: youtube.apiKey,
    YOUTUBE_API_URL: youtube.url,
    SOURCE_TIMEOUT_MS: '2000',
  });
  api = stack.api;
  ({ key } = await createKeyedUser(db.sql));
});

afterAll(async () => {
  await stack?.close();
  await youtube?.close();
  await archive?.cleanup();
  await db?.drop();
});

const search = (query: string) =>
  api.call('/api/search', { method: 'POST', key, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ query }) });

describe('channel search over the real sources', () => {
  it('finds a channel by handle through the Data API and streams its uploads to search:complete', async () => {
    const started = await search('youtube.com/@apiflow');
    expect(started.status).toBe(200);
    expect(started.body.data.channelId).toBe(apiChannel);
    const { events } = await readStream(`${api.url}${started.body.data.sseEndpointUrl}`, { key, timeoutMs: 20_000 });
    expect(events.at(-1)!.event).toBe('search:complete');
    const videos = events.filter((event) => event.event === 'search:video');
    expect(new Set(videos.map((event) => event.data.videoId)).size).toBe(120);
    expect(videos[0]!.data).toMatchObject({ channelId: apiChannel, status: 'live' });
    expect(typeof videos[0]!.data.duration).toBe('number');
    const provenance = await db.sql`select count(*)::int as n from video_sources where source = 'youtube_api'`;
    expect(provenance[0]!.n).toBe(120);
    expect(events.some((event) => event.event === 'search:channel_update')).toBe(true);
  });

  it('resolves a video URL to its channel from the archive directory, with media files as videoFileUrl', async () => {
    const videoId = archive.videoIds[0]!;
    const started = await search(`https://youtu.be/${videoId}`);
    expect(started.status).toBe(200);
    expect(started.body.data.channelId).toBe(archive.channelId);
    const { events } = await readStream(`${api.url}${started.body.data.sseEndpointUrl}`, { key, timeoutMs: 20_000 });
    expect(events.at(-1)!.event).toBe('search:complete');
    const found = new Set(events.filter((event) => event.event === 'search:video').map((event) => event.data.videoId));
    for (const id of archive.allVideoIds) expect(found.has(id)).toBe(true);
    const withFile = events.filter((event) => event.event === 'search:video' && event.data.hasVideo);
    expect(withFile.length).toBe([...archive.mediaFiles.keys()].filter((id) => found.has(id)).length);
    // Served by the API, never a path on the server's disk.
    expect(withFile.every((event) => event.data.videoFileUrl === `/api/videos/${event.data.videoId}/file`)).toBe(true);
    expect(events.some((event) => event.event === 'search:caption_info')).toBe(true);
  });

  it('fetches the announced captions of stored videos no fetch was ever asked for, on a crawl that changes nothing', async () => {
    const announcing = await db.sql<{ video_id: string }[]>`
      select video_id from videos where channel_id = ${archive.channelId} and jsonb_array_length(caption_languages) > 0`;
    expect(announcing.length).toBeGreaterThan(0);
    const ids = announcing.map((row) => row.video_id);
    await eventually(
      async () => (await db.sql`select 1 from graphile_worker.jobs where task_identifier = 'fetch_subtitles'`).length === 0 || undefined,
      "the first crawl's fetches to finish",
    );
    // As if stored by an import that loaded no subtitles: no track, no fetch ever asked for.
    await db.sql`delete from transcripts where video_id = any(${ids})`;
    await db.sql`delete from subtitle_tracks where video_id = any(${ids})`;

    const started = await search(`https://youtu.be/${archive.videoIds[0]!}`);
    const { events } = await readStream(`${api.url}${started.body.data.sseEndpointUrl}`, { key, timeoutMs: 20_000 });
    expect(events.at(-1)!.event).toBe('search:complete');
    const stored = await eventually(async () => {
      const rows = await db.sql<{ n: number }[]>`select count(*)::int as n from videos where video_id = any(${ids}) and has_subtitles`;
      return rows[0]!.n === ids.length || undefined;
    }, 'the announced captions to be fetched again');
    expect(stored).toBe(true);
  });

  it('retries a failing Data API and still completes', async () => {
    youtube.failNext(2, 500);
    const started = await search(apiChannel);
    const { events } = await readStream(`${api.url}${started.body.data.sseEndpointUrl}`, { key, timeoutMs: 30_000 });
    expect(events.at(-1)!.event).toBe('search:complete');
  });
});

import type { Task } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log.ts';
import { createArchiveSource } from '../../core/sources/archive.ts';
import type { VideoSource } from '../../core/sources/types.ts';
import { createWaybackSource } from '../../core/sources/wayback/source.ts';
import { createYoutubeApiSource } from '../../core/sources/youtubeApi.ts';
import { archiveSubtitleSource } from '../../core/subtitles/sources.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { fetchSubtitlesTask } from '../../pipeline/tasks/fetch_subtitles.ts';
import { createArchiveFixture, type ArchiveFixture } from '../kit/archive-fixture.ts';
import { fakeChannelId, fakeVideoId } from '../kit/ids.ts';
import { start as startWayback, ts, type WaybackServer } from '../kit/servers/wayback-server.ts';
import { generatedVideoId, start as startYoutubeApi, type YoutubeApiServer } from '../kit/servers/youtube-api-server.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

// POST /api/subtitles/:videoId/fetch for a video that is not stored: the job looks it up in the
// configured video sources (archive, Data API, Wayback), stores it with its channel, then fetches.
let db: TestDatabase;
let api: TestApi;
let key: string;
let archive: ArchiveFixture;
let youtube: YoutubeApiServer;
let wayback: WaybackServer;
let videoSources: VideoSource[];
const log = createLogger('silent');

const apiChannel = fakeChannelId('lookup-api-channel');
const waybackChannel = fakeChannelId('lookup-wayback-channel');
const waybackVideo = fakeVideoId('lookup-wayback-video');
const fastFetch = { timeoutMs: 2000, retries: 0 };

beforeAll(async () => {
  db = await createTestDatabase();
  await updateTier(db.sql, 'pro', { limits: { subtitleDownloadsPerDay: 5 } });
  api = await startTestApi(db.sql);
  ({ key } = await createKeyedUser(db.sql));
  archive = await createArchiveFixture({ videos: 4, legacyChannel: false, flatOnly: 0, subtitlesEvery: 1 });
  youtube = await startYoutubeApi();
  youtube.createChannel({ channelId: apiChannel, title: 'Data API Channel', handle: '@dataapichannel', videoCount: 3 });
  wayback = await startWayback();
  wayback.addVideo(
    {
      videoId: waybackVideo,
      channelId: waybackChannel,
      title: 'Only on Wayback',
      author: 'Archived Channel',
      ownerProfileUrl: 'http://www.youtube.com/@archivedchannel',
    },
    [{ timestamp: ts(2019, 4) }],
  );
  videoSources = [
    createArchiveSource({ dir: archive.dir }),
    createYoutubeApiSource({ apiKey: youtube.apiKey, baseUrl: youtube.url, fetchOptions: fastFetch }),
    createWaybackSource({ cdxUrl: wayback.cdxUrl, captureBaseUrl: wayback.captureBaseUrl, fetchOptions: fastFetch }),
  ];
});

afterAll(async () => {
  await api?.close();
  await youtube?.close();
  await wayback?.close();
  await archive?.cleanup();
  await db?.drop();
});

const post = (videoId: string) => api.call(`/api/subtitles/${videoId}/fetch`, { method: 'POST', key });
const status = async (videoId: string) => (await api.call(`/api/subtitles/${videoId}/status`, { key })).body.data;
const lookupsCharged = async () =>
  Number((await db.sql`select coalesce(sum(used), 0) as used from usage_counters where limit_name = 'subtitleDownloadsPerDay'`)[0]!.used);
const jobsFor = (videoId: string) =>
  db.sql<{ key: string }[]>`select key from graphile_worker._private_jobs where key = ${`subtitles:${videoId}`}`;

const keptAnswers = (videoId: string) => db.sql`
  select source, request_url, http_status, decided, wayback_timestamp, cdx_digest from evidence_observations where video_id = ${videoId} order by id`;

/** Runs the fetch job as graphile-worker would for the given attempt. */
function runJob(videoId: string, options: { attempt?: number; sources?: VideoSource[] } = {}) {
  const task: Task = fetchSubtitlesTask({
    sql: db.sql,
    log,
    subtitleSources: [archiveSubtitleSource()],
    videoSources: options.sources ?? videoSources,
  });
  return task({ videoId }, {
    job: { attempts: options.attempt ?? 3, max_attempts: 3 },
    abortSignal: new AbortController().signal,
  } as unknown as Parameters<Task>[1]);
}

describe('POST /api/subtitles/:videoId/fetch for a video that is not stored', () => {
  it('answers 202 with the poll URL, queues one job, and is charged once: a repeated call joins the pending lookup for free', async () => {
    const videoId = archive.subtitleVideoIds[0]!;
    const first = await post(videoId);
    expect(first.status).toBe(202);
    expect(first.body.data).toEqual({ status: 'pending', videoId, pollUrl: `/api/subtitles/${videoId}/status` });
    expect(first.headers.get('location')).toBe(`/api/subtitles/${videoId}/status`);
    expect(await lookupsCharged()).toBe(1);
    const again = await post(videoId);
    expect(again.status).toBe(202);
    expect(await lookupsCharged()).toBe(1);
    expect(await jobsFor(videoId)).toHaveLength(1);
    expect(await status(videoId)).toMatchObject({
      videoId,
      status: 'pending',
      tracks: [],
      transcript: { state: 'pending', error: null, checkedAt: null },
    });
    expect((await api.call('/api/subtitles/not-an-id/fetch', { method: 'POST', key })).status).toBe(400);
  });

  it('stores a video the local archive knows, with its channel, then fetches its subtitles', async () => {
    const videoId = archive.subtitleVideoIds[0]!;
    await runJob(videoId, { attempt: 1 });
    const [stored] =
      await db.sql`select v.channel_id, c.title from videos v join channels c using (channel_id) where v.video_id = ${videoId}`;
    expect(stored).toEqual({ channel_id: archive.channelId, title: archive.channelTitle });
    const after = await status(videoId);
    expect(after.status).toBe('available');
    expect(after.tracks.map((track: { language: string; kind: string }) => `${track.language}/${track.kind}`).sort()).toEqual([
      'de/auto',
      'en/manual',
    ]);
    expect(await db.sql`select 1 from video_lookups where video_id = ${videoId}`).toHaveLength(0);
  });

  it('stores a video only the Data API knows (videos.list, then its channel)', async () => {
    const videoId = generatedVideoId(apiChannel, 1);
    expect((await post(videoId)).status).toBe(202);
    youtube.resetCounts();
    await runJob(videoId, { attempt: 1 });
    expect(youtube.counts()).toMatchObject({ videos: 1, channels: 1, playlistItems: 0, search: 0 });
    const [stored] =
      await db.sql`select v.title, v.status, c.title as channel from videos v join channels c using (channel_id) where v.video_id = ${videoId}`;
    expect(stored).toEqual({ title: youtube.video(videoId)!.title, status: 'live', channel: 'Data API Channel' });
    // No subtitle source has its captions: a finished fetch that found nothing.
    expect(await status(videoId)).toMatchObject({ status: 'none', transcript: { state: 'none', checkedAt: expect.any(String) } });
  });

  it('stores a video only a Wayback watch capture knows, with the channel the capture names', async () => {
    expect((await post(waybackVideo)).status).toBe(202);
    await runJob(waybackVideo, { attempt: 1 });
    const [stored] = await db.sql`select v.title, v.channel_id, v.archive_url from videos v where v.video_id = ${waybackVideo}`;
    expect(stored).toMatchObject({
      title: 'Only on Wayback',
      channel_id: waybackChannel,
      archive_url: expect.stringContaining(`watch?v=${waybackVideo}`),
    });
    // The watch capture it was read from is kept as the answer behind its metadata, with the capture's timestamp and CDX digest.
    expect(await keptAnswers(waybackVideo)).toEqual([
      {
        source: 'wayback',
        request_url: `https://web.archive.org/web/${ts(2019, 4)}id_/https://www.youtube.com/watch?v=${waybackVideo}`,
        http_status: 200,
        decided: 'metadata_filled',
        wayback_timestamp: ts(2019, 4),
        cdx_digest: expect.stringMatching(/^[A-Z2-7]{32}$/),
      },
    ]);
  });

  it('reports failed, naming the sources asked, when none knows the video; asking again starts (and charges) a new lookup', async () => {
    const videoId = fakeVideoId('lookup-nobody-knows');
    expect((await post(videoId)).status).toBe(202);
    await runJob(videoId, { attempt: 1 });
    const failed = await status(videoId);
    expect(failed).toMatchObject({ videoId, status: 'failed', tracks: [], transcript: { state: 'failed', checkedAt: expect.any(String) } });
    expect(failed.transcript.error).toBe('no configured source knows this video (asked: archive, youtube_api, wayback)');
    expect(await db.sql`select 1 from videos where video_id = ${videoId}`).toHaveLength(0);
    const again = await post(videoId);
    expect(again.status).toBe(202);
    expect(await lookupsCharged()).toBe(5);
    expect(await status(videoId)).toMatchObject({ status: 'pending', transcript: { error: null } });
  });

  it('refuses a lookup the quota cannot cover, queuing nothing', async () => {
    const videoId = fakeVideoId('lookup-over-quota');
    const refused = await post(videoId);
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('RATE_LIMITED');
    expect(await jobsFor(videoId)).toHaveLength(0);
    expect((await api.call(`/api/subtitles/${videoId}/status`, { key })).status).toBe(404);
  });

  it('retries while a source fails transiently, and names the failure on the last attempt', async () => {
    const videoId = fakeVideoId('lookup-api-down');
    await db.sql`insert into video_lookups (video_id, state) values (${videoId}, 'pending')`;
    const apiOnly = [videoSources[1]!];
    youtube.failNext(1, 503, 'videos');
    await expect(runJob(videoId, { attempt: 1, sources: apiOnly })).rejects.toThrow(
      /video lookup will be retried: .*youtube_api: YouTube Data API videos\.list/,
    );
    expect(await status(videoId)).toMatchObject({ status: 'pending' });
    youtube.failNext(1, 503, 'videos');
    await runJob(videoId, { attempt: 3, sources: apiOnly });
    const failed = await status(videoId);
    expect(failed.status).toBe('failed');
    expect(failed.transcript.error).toMatch(
      /^no configured source knows this video \(asked: youtube_api\); youtube_api: YouTube Data API videos\.list/,
    );
  });
});

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataApiProbe, combineProbes, watchPageProbe, type StatusProbe } from '../../core/status/probes.ts';
import { linkReuploads } from '../../core/status/linkReuploads.ts';
import { recordObservations } from '../../core/status/recordObservations.ts';
import { scheduleAllStatusChecks, scheduleStatusChecks } from '../../core/status/scheduleChecks.ts';
import { crawlStream } from '../../core/events/events.ts';
import { startSearch } from '../../core/crawl/startSearch.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { upsertVideos } from '../../core/videos/upsertVideos.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { start as startYoutubeApi, generatedVideoId, type YoutubeApiServer } from '../kit/servers/youtube-api-server.ts';
import { botCheckHtml, watchPageHtml } from '../kit/servers/wayback-server.ts';

const CHANNEL = 'UCstatusstatusstatus0001';
const OTHER_CHANNEL = 'UCstatusstatusstatus0002';
const schedule = { confirmMinutes: 60, recheckDays: 30 };

/** What the platform's watch pages say, per video id: a player response, or a bot check. */
const pages = new Map<string, Record<string, unknown> | 'bot-check'>();
let web: Server;
let webUrl: string;
let youtube: YoutubeApiServer;
let db: TestDatabase;
let api: TestApi;
let key: string;
let probe: StatusProbe;

/** The platform's answer for a deleted video (as in the real youtube_video_unavailable fixture). */
const unavailablePlayer = {
  playabilityStatus: {
    status: 'ERROR',
    reason: 'This video is unavailable',
    errorScreen: { playerErrorMessageRenderer: { reason: { runs: [{ text: 'This video is unavailable' }] } } },
  },
};
const privatePlayer = {
  playabilityStatus: {
    status: 'LOGIN_REQUIRED',
    reason: 'This video is private',
    messages: ['If the owner of this video has granted you access, please sign in.'],
  },
};
const copyrightPlayer = {
  playabilityStatus: {
    status: 'ERROR',
    reason: 'Video unavailable',
    errorScreen: {
      playerErrorMessageRenderer: {
        subreason: { runs: [{ text: 'This video is no longer available due to a copyright claim by Example Records Ltd.' }] },
      },
    },
  },
};

beforeAll(async () => {
  db = await createTestDatabase();
  youtube = await startYoutubeApi({ apiKey: 'status-key' });
  youtube.createChannel({ channelId: CHANNEL, handle: '@statuschannel', title: 'Status channel', videoCount: 6 });
  youtube.createChannel({ channelId: OTHER_CHANNEL, handle: '@reuploader', title: 'Reuploads', videoCount: 1 });
  web = createServer((req, res) => {
    const id = new URL(req.url ?? '/', 'http://x').searchParams.get('v') ?? '';
    const page = pages.get(id);
    const html =
      page === 'bot-check'
        ? botCheckHtml()
        : watchPageHtml(page ?? { playabilityStatus: { status: 'OK' }, videoDetails: { videoId: id, title: 'x' } });
    res.writeHead(200, { 'Content-Type': 'text/html' }).end(html);
  });
  await new Promise<void>((done) => web.listen(0, '127.0.0.1', done));
  webUrl = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
  probe = combineProbes({
    dataApi: dataApiProbe({ apiKey: 'status-key', baseUrl: youtube.url, fetchOptions: { retries: 0, timeoutMs: 5_000 } }),
    reasons: watchPageProbe({ webUrl, fetchOptions: { retries: 0, timeoutMs: 5_000 } }),
  })!;
  await db.sql.begin(async (tx) => {
    await upsertVideos(
      tx,
      'youtube_api',
      ids().map((videoId, index) => ({
        videoId,
        channelId: CHANNEL,
        title: `Restoring lathe number ${index}`,
        durationSeconds: 600 + index * 10,
        availability: 'live' as const,
      })),
    );
  });
  api = await startTestApi(db.sql);
  ({ key } = await createKeyedUser(db.sql));
});

afterAll(async () => {
  await api?.close();
  await new Promise((done) => web?.close(done));
  await youtube?.close();
  await db?.drop();
});

const ids = () => Array.from({ length: 6 }, (_, index) => generatedVideoId(CHANNEL, index));
const video = (index: number) => generatedVideoId(CHANNEL, index);

async function check(videoIds: string[]) {
  return db.sql.begin(async (tx) => recordObservations(tx, await probe(videoIds), schedule));
}
async function statusOf(videoId: string) {
  const [row] = await db.sql<
    { status: string; reason: string | null; claimant: string | null; suspectedAt: Date | null; nextCheckAt: Date }[]
  >`
    select status, status_reason as reason, status_claimant as claimant, suspected_at as "suspectedAt", next_check_at as "nextCheckAt"
    from videos join video_checks using (video_id) where video_id = ${videoId}`;
  return row!;
}
/** As if the first "gone" had been seen this long ago: the confirmation may come now. */
async function ageSuspicion(videoId: string, minutes: number) {
  await db.sql`update video_checks set suspected_at = now() - make_interval(mins => ${minutes}) where video_id = ${videoId} and suspected_at is not null`;
}
const history = async (videoId: string) =>
  (await api.call(`/api/videos/${videoId}/status-history`, { key })).body.data as {
    current: { status: string; reason: string | null; claimant: string | null };
    history: Array<{
      status: string;
      previousStatus: string | null;
      reason: string | null;
      source: string;
      evidence: string;
      linkedVideoId: string | null;
    }>;
  };

describe('video status', () => {
  it('starts with one history row per stored video, as the source saw it', async () => {
    const data = await history(video(0));
    expect(data.current).toMatchObject({ status: 'live', reason: null });
    expect(data.history).toEqual([expect.objectContaining({ status: 'live', previousStatus: null, source: 'youtube_api' })]);
  });

  it('records a deletion only after a second probe, spaced in time, confirms it; then links the re-upload', async () => {
    youtube.setVideoState(video(1), 'deleted');
    pages.set(video(1), unavailablePlayer);
    await check([video(1)]);
    expect(await statusOf(video(1))).toMatchObject({ status: 'live', suspectedAt: expect.any(Date) });
    await check([video(1)]); // too soon to confirm
    expect((await statusOf(video(1))).status).toBe('live');

    await ageSuspicion(video(1), 61);
    const { changes } = await check([video(1)]);
    expect(changes).toEqual([expect.objectContaining({ videoId: video(1), previousStatus: 'live', status: 'deleted', reason: 'unknown' })]);
    let data = await history(video(1));
    expect(data.history.map((entry) => [entry.previousStatus, entry.status])).toEqual([
      [null, 'live'],
      ['live', 'deleted'],
    ]);
    expect(data.history[1]).toMatchObject({
      source: 'watch_page',
      evidence: expect.stringMatching(/ERROR: This video is unavailable.*then: ERROR: This video is unavailable/),
    });
    // The job that looks for its re-upload was queued in the same transaction.
    const [job] =
      await db.sql`select j.payload from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id where t.identifier = 'link_reuploads' order by j.id desc limit 1`;
    expect(job!.payload).toEqual({ videoIds: [video(1)] });

    const reupload = generatedVideoId(OTHER_CHANNEL, 0);
    await db.sql.begin((tx) =>
      upsertVideos(tx, 'youtube_api', [
        {
          videoId: reupload,
          channelId: OTHER_CHANNEL,
          title: 'Restoring Lathe Number 1 (reupload)',
          durationSeconds: 611,
          availability: 'live',
        },
      ]),
    );
    const unrelated = generatedVideoId(OTHER_CHANNEL, 1);
    await db.sql.begin((tx) =>
      upsertVideos(tx, 'youtube_api', [
        { videoId: unrelated, channelId: OTHER_CHANNEL, title: 'Restoring lathe number 1', durationSeconds: 900, availability: 'live' },
      ]),
    );
    const linked = await db.sql.begin((tx) => linkReuploads(tx, [video(1)]));
    expect(linked).toEqual([expect.objectContaining({ videoId: video(1), reuploadedAs: reupload })]);
    data = await history(video(1));
    expect(data.current.status).toBe('re-uploaded');
    expect(data.history.at(-1)).toMatchObject({
      previousStatus: 'deleted',
      status: 're-uploaded',
      linkedVideoId: reupload,
      source: 'reupload_link',
    });
    const [back] = await db.sql`select reupload_of from videos where video_id = ${reupload}`;
    expect(back!.reupload_of).toBe(video(1));
  });

  it('never changes a status on a bot check, however often it comes', async () => {
    youtube.setVideoState(video(2), 'deleted');
    pages.set(video(2), 'bot-check');
    for (let i = 0; i < 3; i++) {
      await ageSuspicion(video(2), 61);
      await check([video(2)]);
    }
    // The Data API's "gone" still counts (confirmed by its second answer); a bot check alone never does.
    expect(await statusOf(video(2))).toMatchObject({ status: 'deleted', reason: 'unknown' });
    const watchOnly = watchPageProbe({ webUrl, fetchOptions: { retries: 0 } });
    pages.set(video(3), 'bot-check');
    for (let i = 0; i < 3; i++) {
      await db.sql.begin(async (tx) => recordObservations(tx, await watchOnly([video(3)]), schedule));
      await ageSuspicion(video(3), 61);
    }
    const after = await statusOf(video(3));
    expect(after).toMatchObject({ status: 'live', suspectedAt: null });
    expect(after.nextCheckAt.getTime()).toBeGreaterThan(Date.now() + 50 * 60_000);
    expect((await history(video(3))).history).toHaveLength(1);
  });

  it('reports a private video with reason private, and a copyright claim with its claimant', async () => {
    youtube.setVideoState(video(4), 'private');
    pages.set(video(4), privatePlayer);
    await check([video(4)]);
    await ageSuspicion(video(4), 61);
    await check([video(4)]);
    expect(await statusOf(video(4))).toMatchObject({ status: 'deleted', reason: 'private' });

    youtube.setVideoState(video(5), 'deleted');
    pages.set(video(5), copyrightPlayer);
    await check([video(5)]);
    await ageSuspicion(video(5), 61);
    await check([video(5)]);
    expect(await statusOf(video(5))).toMatchObject({ status: 'deleted', reason: 'copyright', claimant: 'Example Records Ltd' });
    // The evidence names the platform's page, never the configured YOUTUBE_WEB_URL (a proxy, here a local server).
    const evidence = (await history(video(5))).history.map((entry) => entry.evidence ?? '').join(' ');
    expect(evidence).toContain(`https://www.youtube.com/watch?v=${video(5)}`);
    expect(evidence).not.toContain(new URL(webUrl).host);
  });

  it('returns a reinstated video to live, and tells the open search streams of its channel', async () => {
    const { crawlId } = await startSearch(db.sql, { userId: null, channel: { channelId: CHANNEL }, query: '@statuschannel', kind: 'full' });
    youtube.setVideoState(video(4), 'public');
    pages.delete(video(4));
    const { changes } = await check([video(4)]);
    const events = await db.sql<{ type: string; payload: { videoId: string; status: string; previousStatus?: string } }[]>`
      select type, payload from events where stream = ${crawlStream(crawlId)} order by id`;
    expect(events.map((event) => [event.type, event.payload.videoId, event.payload.status])).toEqual([
      ['search:status_change', video(4), 'live'],
      ['search:video', video(4), 'live'],
    ]);
    expect(events[0]!.payload.previousStatus).toBe('deleted');
    expect(changes).toEqual([expect.objectContaining({ videoId: video(4), previousStatus: 'deleted', status: 'live', reason: null })]);
    expect((await history(video(4))).history.map((entry) => entry.status)).toEqual(['live', 'deleted', 'live']);
  });

  it('rechecks gone videos further apart each time', async () => {
    const gaps: number[] = [];
    for (let i = 0; i < 3; i++) {
      await check([video(5)]);
      gaps.push(Math.round(((await statusOf(video(5))).nextCheckAt.getTime() - Date.now()) / 86_400_000));
    }
    expect(gaps).toEqual([2, 4, 8]);
  });

  it('keeps the history append-only', async () => {
    await expect(db.sql`update video_status_history set status = 'live' where video_id = ${video(1)}`).rejects.toThrow(/append-only/);
    await expect(db.sql`delete from video_status_history where video_id = ${video(1)}`).rejects.toThrow(/append-only/);
    // Even a direct write to the video leaves its trace.
    await db.sql`update videos set status = 'live', status_reason = null, reuploaded_as = null, status_source = 'operator' where video_id = ${video(5)}`;
    expect((await history(video(5))).history.at(-1)).toMatchObject({ previousStatus: 'deleted', status: 'live', source: 'operator' });
  });

  it('queues due videos 50 to a job, each once', async () => {
    await db.sql`update video_checks set next_check_at = now() - interval '1 minute'`;
    const first = await db.sql.begin((tx) => scheduleStatusChecks(tx, { limit: 1000 }));
    const [count] = await db.sql<{ n: number }[]>`select count(*)::int as n from videos`;
    expect(first).toMatchObject({ videos: count!.n, jobs: Math.ceil(count!.n / 50) });
    expect(first.jobIds).toHaveLength(first.jobs);
    expect(await db.sql.begin((tx) => scheduleStatusChecks(tx, { limit: 1000 }))).toMatchObject({ videos: 0, jobs: 0, jobIds: [] });
    // Explicit selections are walked in chunks, each video once, due or not.
    const chunks: number[] = [];
    const all = await scheduleAllStatusChecks(db.sql, { channelIds: [CHANNEL], chunk: 4 }, (sofar) => chunks.push(sofar.videos));
    expect(all).toMatchObject({ videos: 6, jobs: 2 });
    expect(chunks).toEqual([4, 6]);
    const queuedIds = await db.sql<{ id: string }[]>`
      select jsonb_array_elements_text((j.payload::jsonb)->'videoIds') as id from graphile_worker._private_jobs j where j.id = any(${all.jobIds}::bigint[])`;
    expect(queuedIds.map((row) => row.id).sort()).toEqual([...ids()].sort());
  });

  it('answers 400 for a malformed id and 404 for an unknown video, in the envelope', async () => {
    const bad = await api.call('/api/videos/short/status-history', { key });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'INVALID_INPUT', message: expect.stringMatching(/videoId/) });
    const unknown = await api.call('/api/videos/AAAAAAAAAAA/status-history', { key });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('NOT_FOUND');
    expect((await api.call(`/api/videos/${video(0)}/status-history`)).status).toBe(401);
  });

  it("answers 403 FEATURE_DISABLED when the caller's tier has statusHistory switched off", async () => {
    const path = `/api/videos/${video(0)}/status-history`;
    expect((await api.call(path, { key })).status).toBe(200);
    await updateTier(db.sql, 'pro', { features: { statusHistory: false } });
    try {
      const refused = await api.call(path, { key });
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({ code: 'FEATURE_DISABLED', message: 'statusHistory is not part of the Pro tier' });
    } finally {
      await updateTier(db.sql, 'pro', { features: { statusHistory: true } });
    }
    expect((await api.call(path, { key })).status).toBe(200);
  });
});

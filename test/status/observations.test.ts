/**
 * Status truth for archived videos: what sources saw of availability is recorded with the time they
 * saw it (an archive's download time, a Wayback capture's, a crawl's listing now), an older
 * observation never overrides a newer one, and every video object says how old its last
 * confirmation is. Clients never see the server's paths in evidence.
 */
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseYtDlpDocument, scanArchive, type ArchiveScan } from '../../core/sources/archive.ts';
import type { VideoRecord } from '../../core/sources/types.ts';
import { recordObservations } from '../../core/status/recordObservations.ts';
import { loadVideos } from '../../core/videos/loadVideos.ts';
import { upsertChannel, upsertVideos } from '../../core/videos/upsertVideos.ts';
import { videoObject, type VideoObject } from '../../core/videos/videoObject.ts';
import { createArchiveFixture, type ArchiveFixture } from '../kit/archive-fixture.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

/** The epoch the archive fixture's yt-dlp documents carry: when yt-dlp extracted them. */
const DOWNLOADED_AT = new Date(1_763_675_106_000).toISOString();

let fx: ArchiveFixture;
let scan: ArchiveScan;
let db: TestDatabase;
let api: TestApi;
let key: string;

/** What `afterimage import` does with a scan: channels first, then the videos that name one, in a transaction. */
async function importScan(): Promise<void> {
  for (const channel of scan.channels) await upsertChannel(db.sql, channel);
  await db.sql.begin((tx) =>
    upsertVideos(
      tx,
      'archive',
      scan.videos.filter((video) => video.channelId),
    ),
  );
}

const videoOf = async (videoId: string): Promise<VideoObject> => videoObject.parse((await loadVideos(db.sql, [videoId]))[0]);

interface History {
  current: { status: string; since: string; confirmedAt: string | null; confirmedBy: string | null };
  history: Array<{ status: string; previousStatus: string | null; observedAt: string; source: string | null; evidence: string | null }>;
}
async function historyOf(videoId: string): Promise<History> {
  const response = await api.call(`/api/videos/${videoId}/status-history`, { key });
  expect(response.status).toBe(200);
  return response.body.data as History;
}

/** Two probe answers "gone", an instant apart, with no wait required between them: a confirmed deletion. */
async function probeFindsGone(videoId: string): Promise<void> {
  const gone = {
    videoId,
    outcome: 'gone' as const,
    reason: 'removed_by_uploader' as const,
    source: 'watch_page' as const,
    evidence: 'ERROR: This video has been removed by the uploader',
  };
  for (let answer = 0; answer < 2; answer++)
    await db.sql.begin((tx) => recordObservations(tx, [gone], { confirmMinutes: 0, recheckDays: 30 }));
}

beforeAll(async () => {
  fx = await createArchiveFixture({ videos: 6, mediaEvery: 0, subtitlesEvery: 0, flatOnly: 2, seed: 'status-observations' });
  scan = await scanArchive(fx.dir);
  db = await createTestDatabase();
  await importScan();
  api = await startTestApi(db.sql);
  ({ key } = await createKeyedUser(db.sql));
});

afterAll(async () => {
  await api?.close();
  await db?.drop();
  await fx?.cleanup();
});

describe('observations of availability from the sources', () => {
  it('an imported yt-dlp download is an observation of "live" at its epoch, shown with its source and age', async () => {
    for (const videoId of fx.videoIds) {
      expect(await videoOf(videoId)).toMatchObject({
        status: 'live',
        statusSince: DOWNLOADED_AT,
        statusConfirmedAt: DOWNLOADED_AT,
        statusConfirmedBy: 'archive',
        metadataCompleteness: 'full',
      });
    }
    // A flat playlist entry is a listing, not the platform serving the video: still unverified.
    for (const videoId of fx.flatOnlyVideoIds)
      expect(await videoOf(videoId)).toMatchObject({ status: 'checking', statusConfirmedAt: null, statusConfirmedBy: null });
    // youtube-dl-era dumps have no epoch: the upload date, which the video outlived, is the observation's time.
    const legacy = scan.videos.find((video) => video.videoId === fx.legacy!.videoIds[0])!;
    expect(await videoOf(legacy.videoId)).toMatchObject({
      status: 'live',
      statusConfirmedAt: `${legacy.uploadDate}T00:00:00.000Z`,
      statusConfirmedBy: 'archive',
    });
  });

  it('the status history shows the transition at the download time, naming the file but never the server path', async () => {
    const videoId = fx.videoIds[0]!;
    const evidenceUrl = scan.videos.find((video) => video.videoId === videoId)!.evidenceUrl!;
    const { current, history } = await historyOf(videoId);
    expect(current).toMatchObject({ status: 'live', since: DOWNLOADED_AT, confirmedAt: DOWNLOADED_AT, confirmedBy: 'archive' });
    expect(history).toEqual([
      {
        status: 'live',
        previousStatus: null,
        reason: null,
        claimant: null,
        observedAt: DOWNLOADED_AT,
        source: 'archive',
        evidence: `yt-dlp archive: ${basename(fileURLToPath(evidenceUrl))}`,
        linkedVideoId: null,
      },
    ]);
    expect(JSON.stringify(history)).not.toContain(fx.dir);
    expect(JSON.stringify(history)).not.toContain('file:');
  });

  it('/api/fts?status=live finds imported videos on an install without probes', async () => {
    const title = (await videoOf(fx.videoIds[0]!)).title!;
    const word = title.split(/\W+/).sort((a, b) => b.length - a.length)[0]!;
    const response = await api.call(`/api/fts?q=${encodeURIComponent(word)}&status=live`, { key });
    expect(response.status).toBe(200);
    const hits = response.body.data.videos as VideoObject[];
    expect(hits.map((hit) => hit.videoId)).toContain(fx.videoIds[0]);
    for (const hit of hits) expect(hit).toMatchObject({ status: 'live', statusConfirmedBy: 'archive', statusConfirmedAt: DOWNLOADED_AT });
  });

  it('an older observation never overrides a newer one; a crawl listing the video now does', async () => {
    const videoId = fx.videoIds[1]!;
    await probeFindsGone(videoId);
    const deleted = await videoOf(videoId);
    expect(deleted).toMatchObject({ status: 'deleted', statusReason: 'removed_by_uploader', statusConfirmedBy: 'watch_page' });
    expect(Date.parse(deleted.statusConfirmedAt!)).toBeGreaterThan(Date.parse(DOWNLOADED_AT));

    // The archive says "live" again, as of its (older) download: nothing changes.
    await importScan();
    expect(await videoOf(videoId)).toEqual(deleted);
    expect((await historyOf(videoId)).history.map((entry) => entry.status)).toEqual(['live', 'deleted']);

    // The Data API lists it in a crawl now: newer than the deletion, so the video is live again.
    const { changed } = await db.sql.begin((tx) =>
      upsertVideos(tx, 'youtube_api', [{ videoId, channelId: fx.channelId, availability: 'live' }]),
    );
    // What a crawl's search stream sends (search:video) carries the new status and its confirmation.
    expect(changed.find((video) => video.videoId === videoId)).toMatchObject({ status: 'live', statusConfirmedBy: 'youtube_api' });
    const reinstated = await videoOf(videoId);
    expect(reinstated).toMatchObject({ status: 'live', statusReason: null, statusConfirmedBy: 'youtube_api' });
    expect(Date.parse(reinstated.statusConfirmedAt!)).toBeGreaterThanOrEqual(Date.parse(deleted.statusConfirmedAt!));
    const { history } = await historyOf(videoId);
    expect(history.at(-1)).toMatchObject({
      status: 'live',
      previousStatus: 'deleted',
      source: 'youtube_api',
      observedAt: reinstated.statusConfirmedAt,
    });
  });

  it('a crawl listing is recorded as a confirmation at crawl time; a re-import of an older download moves nothing back', async () => {
    const videoId = fx.videoIds[2]!;
    const before = Date.now();
    await db.sql.begin((tx) => upsertVideos(tx, 'youtube_api', [{ videoId, channelId: fx.channelId, availability: 'live' }]));
    const listed = await videoOf(videoId);
    expect(listed).toMatchObject({ status: 'live', statusSince: DOWNLOADED_AT, statusConfirmedBy: 'youtube_api' });
    expect(Date.parse(listed.statusConfirmedAt!)).toBeGreaterThanOrEqual(before - 1000);
    await importScan();
    expect(await videoOf(videoId)).toMatchObject({ statusConfirmedAt: listed.statusConfirmedAt, statusConfirmedBy: 'youtube_api' });
    // Agreeing observations change no status: no history row.
    expect((await historyOf(videoId)).history).toHaveLength(1);
  });

  it('a source never makes a live video deleted: that is for the probes to confirm', async () => {
    const videoId = fx.videoIds[3]!;
    await db.sql.begin((tx) => upsertVideos(tx, 'youtube_api', [{ videoId, channelId: fx.channelId, availability: 'deleted' }]));
    expect(await videoOf(videoId)).toMatchObject({ status: 'live', statusConfirmedBy: 'archive' });
  });

  it('a Wayback removal notice settles an unverified video as deleted at the capture time; a later download makes it live', async () => {
    const videoId = fx.flatOnlyVideoIds[0]!;
    const capture = `https://web.archive.org/web/20190101120000/https://www.youtube.com/watch?v=${videoId}`;
    await db.sql.begin((tx) =>
      upsertVideos(tx, 'wayback', [
        {
          videoId,
          channelId: fx.channelId,
          availability: 'deleted',
          observedAt: '2019-01-01T12:00:00Z',
          archiveUrl: capture,
          evidenceUrl: capture,
        },
      ]),
    );
    expect(await videoOf(videoId)).toMatchObject({
      status: 'deleted',
      statusSince: '2019-01-01T12:00:00.000Z',
      statusConfirmedAt: '2019-01-01T12:00:00.000Z',
      statusConfirmedBy: 'wayback',
    });
    const later: VideoRecord = {
      videoId,
      channelId: fx.channelId,
      availability: 'live',
      observedAt: '2020-06-01T00:00:00.000Z',
      evidenceUrl: 'file:///srv/private/layout/Clip%20%5Bx%5D.info.json',
    };
    await db.sql.begin((tx) => upsertVideos(tx, 'archive', [later]));
    const { history } = await historyOf(videoId);
    expect(history.map(({ status, observedAt, source }) => ({ status, observedAt, source }))).toEqual([
      { status: 'checking', observedAt: expect.any(String), source: 'archive' },
      { status: 'deleted', observedAt: '2019-01-01T12:00:00.000Z', source: 'wayback' },
      { status: 'live', observedAt: '2020-06-01T00:00:00.000Z', source: 'archive' },
    ]);
    expect(history.at(-1)!.evidence).toBe('yt-dlp archive: Clip [x].info.json');
  });

  it('an observation dated in the future counts as now', async () => {
    const videoId = fx.flatOnlyVideoIds[1]!;
    await db.sql.begin((tx) =>
      upsertVideos(tx, 'archive', [{ videoId, channelId: fx.channelId, availability: 'live', observedAt: '2999-01-01T00:00:00.000Z' }]),
    );
    const video = await videoOf(videoId);
    expect(video.status).toBe('live');
    expect(Date.parse(video.statusConfirmedAt!)).toBeLessThanOrEqual(Date.now());
    expect(video.statusSince).toBe(video.statusConfirmedAt);
  });

  it('metadataCompleteness tells a deleted video known only by its id from one with its metadata', async () => {
    const [idOnly, titled] = ['statusIdOnl', 'statusTitle'];
    await db.sql.begin((tx) =>
      upsertVideos(tx, 'youtube_api', [
        { videoId: idOnly, channelId: fx.channelId, availability: 'deleted', uploadDate: '2020-01-01' },
        { videoId: titled, channelId: fx.channelId, availability: 'deleted', title: 'A talk, gone since' },
      ]),
    );
    expect(await videoOf(idOnly)).toMatchObject({ status: 'deleted', metadataCompleteness: 'id_only' });
    expect(await videoOf(titled)).toMatchObject({ status: 'deleted', metadataCompleteness: 'full' });
  });

  it('evidence stored with a server path before this release is shown with the file name only', async () => {
    const videoId = fx.videoIds[4]!;
    await db.sql`update videos set status = 'deleted', status_reason = 'unknown', status_source = 'archive',
      status_evidence = ${'file:///home/someone/yt/Old%20Clip%20%5Babc%5D.info.json | then: videos.list did not return it'} where video_id = ${videoId}`;
    const { history } = await historyOf(videoId);
    expect(history.at(-1)!.evidence).toBe('yt-dlp archive: Old Clip [abc].info.json | then: videos.list did not return it');
  });

  it('the OpenAPI document describes the new fields of the video object and the status history', async () => {
    const document = JSON.stringify((await api.call('/api/openapi.json')).body);
    for (const field of ['statusConfirmedAt', 'statusConfirmedBy', 'metadataCompleteness', 'confirmedAt', 'confirmedBy'])
      expect(document).toContain(`"${field}"`);
    const statusHistory = JSON.stringify((await api.call('/api/openapi.json')).body.paths['/api/videos/{videoId}/status-history']);
    expect(statusHistory).toContain('confirmedAt');
  });
});

describe('reading a yt-dlp document as an observation', () => {
  const base = {
    id: 'abcdefghijk',
    channel_id: 'UCuAXFkgsw1L7xaCfnd5JJOw',
    title: 'A video',
    extractor_key: 'Youtube',
    webpage_url: 'https://www.youtube.com/watch?v=abcdefghijk',
  };
  const read = (document: Record<string, unknown>) => {
    const outcome = parseYtDlpDocument({ ...base, ...document }, { evidenceUrl: 'file:///x/A%20video%20%5Babcdefghijk%5D.info.json' });
    const item = outcome.ok ? outcome.items.find((entry) => entry.kind === 'video') : undefined;
    return item?.kind === 'video' ? { availability: item.video.availability, observedAt: item.video.observedAt } : undefined;
  };

  it('takes the epoch, else the upload time; private, members-only and flat entries are no observation', () => {
    expect(read({ epoch: 1_700_000_000, timestamp: 1_600_000_000, availability: 'public' })).toEqual({
      availability: 'live',
      observedAt: '2023-11-14T22:13:20.000Z',
    });
    expect(read({ timestamp: 1_600_000_000, availability: 'unlisted' })).toEqual({
      availability: 'live',
      observedAt: '2020-09-13T12:26:40.000Z',
    });
    expect(read({ upload_date: '20200102', availability: 'needs_auth' })).toEqual({
      availability: 'live',
      observedAt: '2020-01-02T00:00:00.000Z',
    });
    expect(read({ epoch: 1_700_000_000, availability: 'private' })).toEqual({ availability: 'unknown', observedAt: undefined });
    expect(read({ epoch: 1_700_000_000, availability: 'subscriber_only' })).toEqual({ availability: 'unknown', observedAt: undefined });
    expect(
      read({
        epoch: 1_700_000_000,
        _type: 'url',
        ie_key: 'Youtube',
        url: 'https://www.youtube.com/watch?v=abcdefghijk',
        webpage_url: undefined,
      }),
    ).toEqual({ availability: 'unknown', observedAt: undefined });
    expect(read({ webpage_url: undefined, extractor_key: undefined, formats: [] })).toEqual({
      availability: 'unknown',
      observedAt: undefined,
    });
  });
});

import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import type { Task } from 'graphile-worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../core/log.ts';
import { cdxDigest } from '../../core/sources/wayback/cdxDigest.ts';
import { scanArchive } from '../../core/sources/archive.ts';
import { TransientError } from '../../core/sources/httpErrors.ts';
import { archiveSubtitleSource, waybackSubtitleSource, youtubeSubtitleSource, type SubtitleSource } from '../../core/subtitles/sources.ts';
import { markTranscriptsPending, readTranscript } from '../../core/subtitles/transcript.ts';
import { latestTracks, readCues } from '../../core/subtitles/tracks.ts';
import { describeTimedtextUrl } from '../../core/subtitles/waybackCaptions.ts';
import { upsertVideos } from '../../core/videos/upsertVideos.ts';
import { fetchSubtitlesTask } from '../../pipeline/tasks/fetch_subtitles.ts';
import { createArchiveFixture, type ArchiveFixture } from '../kit/archive-fixture.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import {
  botCheckHtml,
  playerResponse,
  start as startWayback,
  ts,
  watchPageHtml,
  type WaybackServer,
} from '../kit/servers/wayback-server.ts';
import { addVideos, channelIdFor, json3Of, srtOf, srv3Of, videoIdFor } from '../support/subtitles.ts';

let db: TestDatabase;
let archive: ArchiveFixture;
let wayback: WaybackServer;
let youtube: { url: string; server: Server; requests: string[] };
let scratch: string;
const log = createLogger((process.env.TEST_LOG as 'debug') ?? 'silent');

const channelId = channelIdFor('fetching');
const yt = {
  captioned: videoIdFor('yt-captioned'),
  botCheck: videoIdFor('yt-botcheck'),
  gone: videoIdFor('yt-gone'),
  mixed: videoIdFor('yt-mixed'),
};
const wb = { captured: videoIdFor('wb-captured'), other: videoIdFor('wb-other') };
const local = { mediaOnly: videoIdFor('media-only') };

/** A stand-in for the platform's web pages: watch pages with a player response, timedtext json3. */
async function startYoutubeWeb() {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://local');
    requests.push(`${url.pathname}${url.search}`);
    const v = url.searchParams.get('v') ?? '';
    if (url.pathname === '/watch') {
      if (v === yt.botCheck) return void res.writeHead(200, { 'Content-Type': 'text/html' }).end(botCheckHtml());
      if (v === yt.captioned || v === yt.mixed) {
        const player = playerResponse({
          videoId: v,
          channelId,
          title: 'Captioned',
          captions: [{ languageCode: 'en' }, { languageCode: 'en', kind: 'asr' }, { languageCode: 'xx' }],
        });
        return void res.writeHead(200, { 'Content-Type': 'text/html' }).end(watchPageHtml(player));
      }
      return void res.writeHead(404, { 'Content-Type': 'text/html' }).end('<html>404</html>');
    }
    if (url.pathname === '/api/timedtext') {
      if (url.searchParams.get('fmt') !== 'json3') return void res.writeHead(400).end();
      const lang = url.searchParams.get('lang');
      if (lang === 'xx') return void res.writeHead(200, { 'Content-Type': 'application/json' }).end('');
      const auto = url.searchParams.get('kind') === 'asr';
      return void res
        .writeHead(200, { 'Content-Type': 'application/json' })
        .end(json3Of(auto ? ['so today we look at lathes', 'and how they work'] : ['Today we look at lathes.', 'And how they work.']));
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, requests };
}

beforeAll(async () => {
  db = await createTestDatabase();
  archive = await createArchiveFixture({ videos: 6, legacyChannel: false, flatOnly: 0 });
  const scan = await scanArchive(archive.dir, { parseThreads: 0 });
  await db.sql.begin((tx) => upsertVideos(tx, 'archive', scan.videos));
  wayback = await startWayback();
  youtube = await startYoutubeWeb();
  scratch = await mkdtemp(join(tmpdir(), 'afterimage-subs-'));
  await addVideos(
    db.sql,
    channelId,
    [...Object.values(yt), ...Object.values(wb), ...Object.values(local)].map((videoId) => ({ videoId })),
  );
});

afterAll(async () => {
  await new Promise((resolve) => youtube?.server.close(resolve));
  await wayback?.close();
  await archive?.cleanup();
  if (scratch) await rm(scratch, { recursive: true, force: true });
  await db?.drop();
});

/** Runs the task as graphile-worker would for the given attempt. */
function run(sources: SubtitleSource[], videoId: string, attempt = 1, maxAttempts = 3) {
  const task: Task = fetchSubtitlesTask({ sql: db.sql, log, subtitleSources: sources, videoSources: [] });
  return task({ videoId }, {
    job: { attempts: attempt, max_attempts: maxAttempts },
    abortSignal: new AbortController().signal,
  } as unknown as Parameters<Task>[1]);
}

const tracksOf = async (videoId: string) =>
  (await latestTracks(db.sql, [videoId])).map((track) => `${track.language}/${track.kind}/${track.source}/v${track.version}`);
const fastFetch = { timeoutMs: 2000, retries: 0 };

describe('fetching from the local archive', () => {
  const source = archiveSubtitleSource();

  it('stores the files beside the info.json with their kinds and completes the transcript', async () => {
    const videoId = archive.subtitleVideoIds[0]!;
    await run([source], videoId);
    expect(await tracksOf(videoId)).toEqual(['de/auto/archive/v1', 'en/manual/archive/v1']);
    const [en] = (await latestTracks(db.sql, [videoId])).filter((track) => track.language === 'en');
    expect(en!.originUrl).toMatch(/^file:\/\/.*\.en\.vtt$/);
    const cues = (await readCues(db.sql, [en!.id])).get(en!.id)!;
    expect(cues[0]!.text).toBe('Welcome back to the workshop.');
    expect(await readTranscript(db.sql, videoId)).toMatchObject({ state: 'completed', language: 'en', kind: 'manual', version: 1 });
    const [video] = await db.sql`select has_subtitles from videos where video_id = ${videoId}`;
    expect(video!.has_subtitles).toBe(true);
  });

  it('finds nothing for a video without subtitle files, and says it looked', async () => {
    const videoId = archive.videoIds.find((id) => !archive.subtitleVideoIds.includes(id))!;
    await run([source], videoId);
    expect(await tracksOf(videoId)).toEqual([]);
    const transcript = await readTranscript(db.sql, videoId);
    expect(transcript.state).toBe('none');
    expect(transcript.checkedAt).toBeInstanceOf(Date);
  });

  it('adds no version when the files are unchanged, and version 2 when one changed', async () => {
    const videoId = archive.subtitleVideoIds[1]!;
    await run([source], videoId);
    await run([source], videoId);
    expect(await tracksOf(videoId)).toEqual(['de/auto/archive/v1', 'en/manual/archive/v1']);
    const [en] = (await latestTracks(db.sql, [videoId])).filter((track) => track.language === 'en');
    const path = new URL(en!.originUrl!);
    await writeFile(path, 'WEBVTT\n\n00:00:00.000 --> 00:00:03.000\nWelcome back, everyone.\n');
    await run([source], videoId);
    expect(await tracksOf(videoId)).toEqual(['de/auto/archive/v1', 'en/manual/archive/v2']);
    const [count] = await db.sql<{ n: number }[]>`select count(*)::int as n from subtitle_tracks where video_id = ${videoId}`;
    expect(count!.n).toBe(3);
  });

  it('looks beside the media file when no info.json is known', async () => {
    const media = join(scratch, `Media only [${local.mediaOnly}].mp4`);
    await writeFile(media, Buffer.alloc(16));
    await writeFile(join(scratch, `Media only [${local.mediaOnly}].en.srt`), srtOf(['Only the media and this file.']));
    await writeFile(join(scratch, `Media only [${local.mediaOnly}].live_chat.json`), '{}');
    await db.sql`update videos set video_file_url = ${pathToFileURL(media).href} where video_id = ${local.mediaOnly}`;
    await run([source], local.mediaOnly);
    expect(await tracksOf(local.mediaOnly)).toEqual(['en/auto/archive/v1']);
  });
});

describe("fetching the platform's caption tracks", () => {
  const source = () => youtubeSubtitleSource({ webUrl: youtube.url, fetchOptions: fastFetch });

  it('reads the tracks the watch page lists, as json3, manual and auto; an empty answer is no track', async () => {
    await run([source()], yt.captioned);
    expect(await tracksOf(yt.captioned)).toEqual(['en/auto/youtube/v1', 'en/manual/youtube/v1']);
    const tracks = await latestTracks(db.sql, [yt.captioned]);
    expect(tracks.every((track) => track.format === 'json3')).toBe(true);
    // Provenance without the signature parameters, on the public form of the URL.
    expect(tracks.find((track) => track.kind === 'auto')!.originUrl).toBe(
      `${youtube.url}/api/timedtext?v=${yt.captioned}&lang=en&kind=asr`,
    );
    expect(youtube.requests.some((path) => path.startsWith('/api/timedtext') && path.includes('lang=xx'))).toBe(true);
    expect(await readTranscript(db.sql, yt.captioned)).toMatchObject({ state: 'completed', kind: 'manual' });
    // The answers each version was read from are kept as its evidence, on the platform's origin, unsigned.
    const kept = await db.sql`
      select e.source, e.request_url, e.http_status, t.kind from evidence_observations e join subtitle_tracks t on t.id = e.subtitle_track_id
      where e.video_id = ${yt.captioned} and e.decided = 'subtitle_version' order by t.kind`;
    expect(kept).toEqual([
      {
        source: 'youtube',
        request_url: `https://www.youtube.com/api/timedtext?v=${yt.captioned}&lang=en&kind=asr`,
        http_status: 200,
        kind: 'auto',
      },
      {
        source: 'youtube',
        request_url: `https://www.youtube.com/api/timedtext?v=${yt.captioned}&lang=en`,
        http_status: 200,
        kind: 'manual',
      },
    ]);
  });

  it('treats a missing watch page as no subtitles', async () => {
    await run([source()], yt.gone);
    expect(await tracksOf(yt.gone)).toEqual([]);
    expect((await readTranscript(db.sql, yt.gone)).state).toBe('none');
  });

  it('retries a bot check, then records the failure on the last attempt without failing the job', async () => {
    await db.sql.begin((tx) => markTranscriptsPending(tx, [yt.botCheck]));
    await expect(run([source()], yt.botCheck, 1)).rejects.toThrow(/bot check/);
    expect((await readTranscript(db.sql, yt.botCheck)).state).toBe('pending');
    await expect(run([source()], yt.botCheck, 3)).resolves.toBeUndefined();
    const transcript = await readTranscript(db.sql, yt.botCheck);
    expect(transcript.state).toBe('failed');
    expect(transcript.error).toMatch(/youtube: .*bot check/);
  });

  it('keeps what one source found while another is retried', async () => {
    const flaky: SubtitleSource = {
      name: 'wayback',
      fetchTracks: async () => Promise.reject(new TransientError('web.archive.org answered 503', 503)),
    };
    await expect(run([flaky, source()], yt.mixed, 1)).rejects.toThrow(/503/);
    expect(await tracksOf(yt.mixed)).toEqual(['en/auto/youtube/v1', 'en/manual/youtube/v1']);
    expect((await readTranscript(db.sql, yt.mixed)).state).toBe('completed');
  });
});

describe('fetching archived caption captures', () => {
  const source = () => waybackSubtitleSource({ cdxUrl: wayback.cdxUrl, captureBaseUrl: wayback.captureBaseUrl, fetchOptions: fastFetch });
  const timedtext = (query: string) => `https://www.youtube.com/api/timedtext?${query}`;

  beforeAll(() => {
    const v = wb.captured;
    wayback.addCapture({
      url: timedtext(`v=${v}&lang=en&fmt=srv3`),
      timestamp: ts(2019, 5, 1),
      body: srv3Of(['An older caption.']),
      mimetype: 'text/xml',
    });
    wayback.addCapture({
      url: timedtext(`v=${v}&lang=en&fmt=srv3`),
      timestamp: ts(2021, 5, 1),
      body: srv3Of(['The newest caption.', 'Second line.']),
      mimetype: 'text/xml',
    });
    wayback.addCapture({
      url: timedtext(`caps=asr&v=${v}&kind=asr&lang=en&fmt=json3`),
      timestamp: ts(2020, 1, 1),
      body: json3Of(['the newest caption', 'second line']),
      mimetype: 'application/json',
    });
    wayback.addCapture({
      url: timedtext(`v=${v}&lang=en&tlang=de&fmt=json3`),
      timestamp: ts(2020, 2, 1),
      body: json3Of(['Die neueste Untertitelung.']),
      mimetype: 'application/json',
    });
    wayback.addCapture({
      url: timedtext(`type=list&v=${v}`),
      timestamp: ts(2020, 3, 1),
      body: '<transcript_list><track lang_code="en"/></transcript_list>',
      mimetype: 'text/xml',
    });
    wayback.addCapture({
      url: timedtext(`v=${wb.other}&lang=fr`),
      timestamp: ts(2020, 4, 1),
      body: srv3Of(['Pas cette vidéo.']),
      mimetype: 'text/xml',
    });
    wayback.addCapture({
      url: `http://video.google.com/timedtext?lang=fr&v=${v}`,
      timestamp: ts(2012, 6, 1),
      body: '<?xml version="1.0" encoding="utf-8" ?><transcript><text start="0" dur="2.5">Bonjour à tous</text></transcript>',
      mimetype: 'text/xml',
    });
    wayback.addCapture({ url: timedtext(`v=${v}&lang=es`), timestamp: ts(2020, 4, 1), status: 404, body: 'gone' });
  });

  it('reads the newest capture of each language and kind, translations included', async () => {
    await run([source()], wb.captured);
    expect(await tracksOf(wb.captured)).toEqual([
      'de/translated/wayback/v1',
      'en/auto/wayback/v1',
      'en/manual/wayback/v1',
      'fr/manual/wayback/v1',
    ]);
    const tracks = await latestTracks(db.sql, [wb.captured]);
    const manual = tracks.find((track) => track.language === 'en' && track.kind === 'manual')!;
    expect(manual.originUrl).toBe(`https://web.archive.org/web/${ts(2021, 5, 1)}/${timedtext(`v=${wb.captured}&lang=en&fmt=srv3`)}`);
    expect((await readCues(db.sql, [manual.id])).get(manual.id)!.map((cue) => cue.text)).toEqual(['The newest caption.', 'Second line.']);
    expect(tracks.find((track) => track.language === 'fr')!.format).toBe('srv1');
    expect(await tracksOf(wb.other)).toEqual([]);
  });

  it('keeps the capture each version was read from, with its timestamp and CDX digest, linked to the version', async () => {
    const newest = srv3Of(['The newest caption.', 'Second line.']);
    const kept = await db.sql`
      select e.source, e.request_url, e.http_status, e.content_type, e.decided, e.wayback_timestamp, e.cdx_digest, e.body_sha256, e.body_gzip
      from evidence_observations e join subtitle_tracks t on t.id = e.subtitle_track_id
      where e.video_id = ${wb.captured} and t.language = 'en' and t.kind = 'manual'`;
    expect(kept).toEqual([
      {
        source: 'wayback',
        // The exact request, on the public Wayback: the original bytes (id_) of the newest capture.
        request_url: `https://web.archive.org/web/${ts(2021, 5, 1)}id_/${timedtext(`v=${wb.captured}&lang=en&fmt=srv3`)}`,
        http_status: 200,
        content_type: 'text/xml',
        decided: 'subtitle_version',
        wayback_timestamp: ts(2021, 5, 1),
        cdx_digest: cdxDigest(newest),
        body_sha256: createHash('sha256').update(newest).digest('hex'),
        body_gzip: expect.any(Buffer),
      },
    ]);
    expect(gunzipSync(kept[0]!.body_gzip).toString()).toBe(newest);
    // Every version of the video (four tracks) names the capture it was read from.
    const linked = await db.sql`
      select 1 from evidence_observations where video_id = ${wb.captured} and source = 'wayback' and subtitle_track_id is not null`;
    expect(linked).toHaveLength(4);
  });

  it('tells the kind from the captured URL', () => {
    expect(describeTimedtextUrl(timedtext('v=abcdefghijk&lang=en&kind=asr'), 'abcdefghijk')).toEqual({ language: 'en', kind: 'auto' });
    expect(describeTimedtextUrl(timedtext('v=abcdefghijk&lang=en&tlang=pt-BR&fmt=vtt'), 'abcdefghijk')).toEqual({
      language: 'pt-BR',
      kind: 'translated',
      format: 'vtt',
    });
    expect(describeTimedtextUrl(timedtext('v=abcdefghijk&type=list'), 'abcdefghijk')).toBeUndefined();
    expect(describeTimedtextUrl(timedtext('v=abcdefghijK&lang=en'), 'abcdefghijk')).toBeUndefined();
  });

  it('retries when the CDX is down', async () => {
    wayback.failNext(5, 503, 'cdx');
    await expect(run([source()], wb.other, 1)).rejects.toThrow(/503|retry/);
    wayback.clearFailures();
  });
});

import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createArchiveSource,
  mergeVideos,
  parseYtDlpDocument,
  scanArchive,
  streamArchive,
  type ArchiveProgress,
  type ArchiveScan,
  type ParsedItem,
} from '../../core/sources/archive.ts';
import { warmUpSources } from '../../core/sources/configured.ts';
import type { VideoRecord, VideoSource } from '../../core/sources/types.ts';
import { createLogger } from '../../core/log.ts';
import { parseChannelQuery, type ChannelQuery } from '../../core/youtube/channelQuery.ts';
import { createArchiveFixture, type ArchiveFixture } from '../kit/archive-fixture.ts';
import { describeReal } from '../kit/describeReal.ts';
import { realFixture } from '../kit/realFixtures.ts';

async function loadReal(relative: string): Promise<unknown> {
  const path = realFixture(relative);
  if (!existsSync(path)) {
    console.warn(`archive tests: real fixture ${relative} is missing; its test is skipped`);
    return undefined;
  }
  return JSON.parse(await readFile(path, 'utf8'));
}

function parseReal(data: unknown, file = 'x.info.json') {
  const outcome = parseYtDlpDocument(data, { evidenceUrl: pathToFileURL(join('/archive', file)).href });
  if (!outcome.ok) throw new Error(`not parsed: ${outcome.reason}`);
  const videos = outcome.items.filter((i): i is Extract<ParsedItem, { kind: 'video' }> => i.kind === 'video');
  const channels = outcome.items.filter((i): i is Extract<ParsedItem, { kind: 'channel' }> => i.kind === 'channel');
  return { videos, channels };
}

const query = (text: string): ChannelQuery => {
  const parsed = parseChannelQuery(text);
  if (!parsed) throw new Error(`not a query: ${text}`);
  return parsed;
};

describeReal('real yt-dlp documents', () => {
  it('modern full dump (peace/video_basic.json)', async () => {
    const data = await loadReal('peace/video_basic.json');
    if (!data) return;
    const { videos, channels } = parseReal(data);
    expect(videos).toHaveLength(1);
    const v = videos[0]!;
    expect(v.partial).toBe(false);
    expect(v.video).toMatchObject({
      videoId: 'dQw4w9WgXcQ',
      channelId: 'UCuAXFkgsw1L7xaCfnd5JJOw',
      title: 'Rick Astley - Never Gonna Give You Up (Official Video) (4K Remaster)',
      durationSeconds: 213,
      viewCount: 1715122711,
      uploadDate: '2009-10-25',
      language: 'en',
      // Served to yt-dlp when it extracted the video (its epoch): live then.
      availability: 'live',
      observedAt: '2025-11-20T21:45:06.000Z',
      thumbnailUrl: 'https://i.ytimg.com/vi_webp/dQw4w9WgXcQ/maxresdefault.webp',
    });
    expect(v.video.tags).toContain('rick astley');
    expect(v.video.description).toMatch(/Never Gonna Give You Up/);
    expect(channels[0]?.channel).toMatchObject({
      channelId: 'UCuAXFkgsw1L7xaCfnd5JJOw',
      title: 'Rick Astley',
      handle: '@RickAstleyYT',
      subscriberCount: 4420000,
    });
  });

  it('modern dump with manual subtitles and null language (peace/video_with_subs.json)', async () => {
    const data = await loadReal('peace/video_with_subs.json');
    if (!data) return;
    const { videos, channels } = parseReal(data);
    expect(videos[0]!.video).toMatchObject({
      videoId: 'jNQXAC9IVRw',
      channelId: 'UC4QobU6STFB0P71PMvOGN5A',
      title: 'Me at the zoo',
      durationSeconds: 19,
      uploadDate: '2005-04-24',
    });
    expect(videos[0]!.video.language).toBeUndefined();
    expect(channels[0]!.channel.handle).toBe('@jawed');
  });

  it('tubesync dumps: handle, legacy user name, live replay', async () => {
    const modern = await loadReal('tubesync/metadata_2023-06-29.json');
    if (modern) {
      const { videos, channels } = parseReal(modern);
      expect(videos[0]!.video).toMatchObject({
        videoId: 'JjQDik3yNhA',
        channelId: 'UC7YOGHUfC1Tb6E4pudI9STA',
        durationSeconds: 968,
        uploadDate: '2022-08-05',
        language: 'en',
      });
      expect(channels[0]!.channel).toMatchObject({ handle: '@MentalOutlaw', title: 'Mental Outlaw', subscriberCount: 486000 });
    }
    const replay = await loadReal('tubesync/metadata_low_formats.json');
    if (replay) {
      const { videos, channels } = parseReal(replay);
      expect(videos[0]!.video).toMatchObject({
        videoId: 'gogEJyoSB9s',
        channelId: 'UCVE-ybBDg3UHSUylEVdPAsw',
        durationSeconds: 7205,
        uploadDate: '2022-06-17',
      });
      expect(channels[0]!.channel.handle).toBeUndefined();
      expect(channels[0]!.names.userNames).toEqual(['aboveandbeyondtv']);
    }
  });

  it('youtube-dl-era dumps (tubeup): uploader_id is the UC id, channel_id missing in one', async () => {
    const kds = await loadReal('tubeup/KdsN9YhkDrY.info.json');
    if (kds) {
      const { videos } = parseReal(kds);
      expect(videos[0]!.video).toMatchObject({
        videoId: 'KdsN9YhkDrY',
        channelId: 'UCWpsozCMdAnfI16rZHQ9XDg',
        durationSeconds: 8,
        viewCount: 141017,
        uploadDate: '2016-06-25',
      });
      expect(videos[0]!.video.language).toBeUndefined();
    }
    const mountain = await loadReal('tubeup/Mountain_3_-_Video_Background_HD_1080p-6iRV8liah8A.info.json');
    if (mountain) {
      expect((mountain as Record<string, unknown>).channel_id).toBeUndefined();
      const { videos, channels } = parseReal(mountain);
      expect(videos[0]!.video).toMatchObject({
        videoId: '6iRV8liah8A',
        channelId: 'UCWpsozCMdAnfI16rZHQ9XDg',
        title: 'Mountain 3 - Video Background HD 1080p',
        uploadDate: '2015-01-05',
      });
      expect(channels[0]!.channel).toMatchObject({ channelId: 'UCWpsozCMdAnfI16rZHQ9XDg', title: 'Video Background' });
      expect(channels[0]!.names.userNames).toEqual([]);
    }
  });

  it('pinchflat dump (_type video, anonymised ids): refused with the reason, read like any dump once its ids are real', async () => {
    const data = (await loadReal('pinchflat/media_metadata.json')) as Record<string, unknown> | undefined;
    if (!data) return;
    expect(parseYtDlpDocument(data, { evidenceUrl: 'file:///archive/x.info.json' })).toEqual({
      ok: false,
      skipped: false,
      reason: 'video id "ABC123" is not a YouTube video id (11 letters, digits, - or _)',
    });
    expect(parseYtDlpDocument({ ...data, id: 'ABC123abcde' }, { evidenceUrl: 'file:///archive/x.info.json' })).toMatchObject({
      ok: false,
      reason: 'channel id "UCEABC123" is not a YouTube channel id (UC and 22 letters, digits, - or _)',
    });
    const channelId = 'UCEABC123abcdefghijklmno';
    const { videos, channels } = parseReal({ ...data, id: 'ABC123abcde', display_id: 'ABC123abcde', channel_id: channelId });
    expect(videos[0]!.video).toMatchObject({
      videoId: 'ABC123abcde',
      channelId,
      durationSeconds: 582,
      uploadDate: '2021-07-20',
      title: 'Pinchflat Example Video',
    });
    expect(channels[0]!.channel).toMatchObject({ handle: '@PinchflatTestChannel', subscriberCount: 35000 });
  });

  it("flat playlist entries whose ids cannot be YouTube's are left out, the rest kept", () => {
    const channelId = 'UCfQgsKhHjSyRLOp9mnffqVg';
    const entry = (id: string) => ({
      _type: 'url',
      ie_key: 'Youtube',
      id,
      url: `https://www.youtube.com/watch?v=${id}`,
      title: `video ${id}`,
    });
    const { videos } = parseReal(
      { _type: 'playlist', id: channelId, channel_id: 'UCshort', title: 'X - Videos', entries: [entry('ABC123'), entry('57xw33VP67c')] },
      'flat.json',
    );
    expect(videos.map((v) => v.video.videoId)).toEqual(['57xw33VP67c']);
  });

  it('channel-level info.json (ytdl-sub): a channel record with avatar, banner and description, no videos', async () => {
    const data = await loadReal('ytdl-sub/UCcRSMoQqXc_JrBZRHDFGbqA.info.json');
    if (!data) return;
    const { videos, channels } = parseReal(data);
    expect(videos).toHaveLength(0);
    expect(channels).toHaveLength(1);
    expect(channels[0]!.rank).toBe(2);
    expect(channels[0]!.channel).toMatchObject({
      channelId: 'UCcRSMoQqXc_JrBZRHDFGbqA',
      title: 'Project Zombie',
      subscriberCount: 2710,
      description: 'Plugin and map updates for the server Project Zombie.',
    });
    expect(channels[0]!.channel.avatarUrl).toMatch(/^https:\/\/yt3\.ggpht\.com\/ytc\/.*=s0$/);
    expect(channels[0]!.channel.bannerUrl).toMatch(/^https:\/\/yt3\.ggpht\.com\//);
  });

  it("--flat-playlist channel dump (youtarr): partial videos of the playlist's channel", async () => {
    const data = await loadReal('youtarr/flat-playlist-dateless.json');
    if (!data) return;
    const { videos, channels } = parseReal(data, 'flat.json');
    expect(videos.map((v) => v.video.videoId)).toEqual(['57xw33VP67c', 'ZXcdRt8pGvo', '0r_AlKrc70c', 'mWe60vjvNSQ', 'S6bPaV38WYY']);
    for (const { video, partial } of videos) {
      expect(partial).toBe(true);
      expect(video.channelId).toBe('UCfQgsKhHjSyRLOp9mnffqVg');
      expect(video.title).toBeTruthy();
      expect(video.durationSeconds).toBeGreaterThan(0);
      expect(video.uploadDate).toBeUndefined();
    }
    expect(videos[0]!.video.durationSeconds).toBe(1301);
    expect(channels[0]!.channel).toMatchObject({
      channelId: 'UCfQgsKhHjSyRLOp9mnffqVg',
      title: 'Renaissance Periodization',
      handle: '@RenaissancePeriodization',
    });
  });

  it('real files laid out as yt-dlp writes them: media, subtitles, channel queries', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'afterimage-real-archive-'));
    try {
      const copy = async (from: string, to: string) => {
        if (!existsSync(realFixture(from))) return false;
        await mkdir(dirname(join(dir, to)), { recursive: true });
        await copyFile(realFixture(from), join(dir, to));
        return true;
      };
      const zoo = 'jawed/Me at the zoo [jNQXAC9IVRw]';
      const haveZoo = await copy('peace/video_with_subs.json', `${zoo}.info.json`);
      await writeFile(join(dir, `${zoo}.en.vtt`), 'WEBVTT\n');
      await writeFile(join(dir, `${zoo}.fr-en.vtt`), 'WEBVTT\n');
      await writeFile(join(dir, `${zoo}.live_chat.json`), '{}');
      await writeFile(join(dir, `${zoo}.webm`), Buffer.alloc(300));
      const mountain = 'Mountain_3_-_Video_Background_HD_1080p-6iRV8liah8A';
      const haveMountain = await copy(`tubeup/${mountain}.info.json`, `old/${mountain}.info.json`);
      await copy(`tubeup/${mountain}.annotations.xml`, `old/${mountain}.annotations.xml`);
      await writeFile(join(dir, 'old', `${mountain}.mp4`), Buffer.alloc(100));
      await writeFile(join(dir, 'old', `${mountain}.mp4.part`), Buffer.alloc(5000));
      await copy('tubesync/metadata_low_formats.json', 'aab/gogEJyoSB9s.info.json');
      await copy('ytdl-sub/UCcRSMoQqXc_JrBZRHDFGbqA.info.json', 'pz/UCcRSMoQqXc_JrBZRHDFGbqA.info.json');
      await copy('youtarr/flat-playlist-dateless.json', 'rp/flat-playlist-dateless.json');

      const scan = await scanArchive(dir);
      expect(scan.warnings).toEqual([]);
      const byId = new Map(scan.videos.map((v) => [v.videoId, v]));
      const zooVideo = byId.get('jNQXAC9IVRw');
      expect(!!zooVideo).toBe(haveZoo);
      expect(byId.has('6iRV8liah8A')).toBe(haveMountain);
      if (zooVideo) {
        expect(zooVideo.videoFileUrl).toBe(pathToFileURL(join(dir, `${zoo}.webm`)).href);
        expect(zooVideo.evidenceUrl).toBe(pathToFileURL(join(dir, `${zoo}.info.json`)).href);
        // en is in `subtitles` (manual); fr-en only in `automatic_captions`: French translated from
        // the manual en, so its language is fr; live_chat is no caption.
        expect(zooVideo.captions).toEqual([
          { language: 'en', kind: 'manual' },
          { language: 'fr', kind: 'auto' },
        ]);
      }
      const mountainVideo = byId.get('6iRV8liah8A');
      if (mountainVideo) expect(mountainVideo.videoFileUrl).toBe(pathToFileURL(join(dir, 'old', `${mountain}.mp4`)).href);

      // Large documents go to parse threads; the records are the same as parsed in-thread.
      const inThread = await scanArchive(dir, { parseThreads: 0 });
      expect(inThread.videos).toEqual(scan.videos);
      expect(inThread.channels).toEqual(scan.channels);

      const source = createArchiveSource({ dir });
      if (zooVideo) expect((await source.resolveChannel(query('@JAWED')))?.channelId).toBe('UC4QobU6STFB0P71PMvOGN5A');
      if (byId.has('gogEJyoSB9s')) {
        expect((await source.resolveChannel(query('youtube.com/user/aboveandbeyondtv')))?.channelId).toBe('UCVE-ybBDg3UHSUylEVdPAsw');
        expect((await source.resolveChannel(query('https://www.youtube.com/aboveandbeyondtv')))?.channelId).toBe(
          'UCVE-ybBDg3UHSUylEVdPAsw',
        );
      }
      if (existsSync(join(dir, 'pz')))
        expect((await source.resolveChannel(query('UCcRSMoQqXc_JrBZRHDFGbqA')))?.title).toBe('Project Zombie');
      if (existsSync(join(dir, 'rp'))) {
        const rp = await source.resolveChannel(query('youtu.be/57xw33VP67c'));
        expect(rp?.handle).toBe('@RenaissancePeriodization');
        const page = await source.listVideos(rp!, undefined);
        expect(page.videos).toHaveLength(5);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('tolerant parsing', () => {
  it('odd types and missing fields never throw', () => {
    const outcome = parseYtDlpDocument(
      {
        id: 'abcdefghijk',
        title: 5,
        duration: '12',
        tags: null,
        upload_date: '20191345',
        timestamp: 'soon',
        view_count: -3,
        uploader_id: 'UCxxxxxxxxxxxxxxxxxxxxxx',
        thumbnails: [{ url: 'https://i.ytimg.com/vi/x/hq.jpg', width: 480, height: 360 }, 'bad', { url: 5 }],
        extractor: 'youtube',
      },
      { evidenceUrl: 'file:///a.info.json' },
    );
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    const video = outcome.items.find((i) => i.kind === 'video');
    expect(video?.kind === 'video' && video.video).toEqual({
      videoId: 'abcdefghijk',
      channelId: 'UCxxxxxxxxxxxxxxxxxxxxxx',
      durationSeconds: 12,
      thumbnailUrl: 'https://i.ytimg.com/vi/x/hq.jpg',
      availability: 'unknown',
      evidenceUrl: 'file:///a.info.json',
    });
  });

  it('dates from timestamp when upload_date is absent; channel id from channel_url', () => {
    const outcome = parseYtDlpDocument(
      {
        id: 'abcdefghijk',
        timestamp: 1256453853,
        channel_url: 'https://www.youtube.com/channel/UCuAXFkgsw1L7xaCfnd5JJOw',
        extractor_key: 'Youtube',
        availability: 'private',
      },
      { evidenceUrl: 'file:///a.info.json' },
    );
    expect(outcome.ok && outcome.items[0]?.kind === 'video' && outcome.items[0].video).toMatchObject({
      uploadDate: '2009-10-25',
      channelId: 'UCuAXFkgsw1L7xaCfnd5JJOw',
      availability: 'unknown',
    });
  });

  it('rejects documents without an id and skips other sites', () => {
    expect(parseYtDlpDocument({ title: 'x', extractor: 'youtube' }, { evidenceUrl: 'file:///a' })).toMatchObject({
      ok: false,
      skipped: false,
    });
    expect(parseYtDlpDocument([1, 2], { evidenceUrl: 'file:///a' })).toMatchObject({ ok: false, skipped: false });
    expect(parseYtDlpDocument({ id: '12345', extractor_key: 'Vimeo' }, { evidenceUrl: 'file:///a' })).toMatchObject({
      ok: false,
      skipped: true,
    });
  });

  it('placeholder titles of flat entries are not titles', () => {
    const outcome = parseYtDlpDocument(
      {
        _type: 'playlist',
        id: 'UCuAXFkgsw1L7xaCfnd5JJOw',
        channel_id: 'UCuAXFkgsw1L7xaCfnd5JJOw',
        entries: [{ _type: 'url', ie_key: 'Youtube', id: 'abcdefghijk', title: '[Private video]' }],
      },
      { evidenceUrl: 'file:///a' },
    );
    const video = outcome.ok ? outcome.items.find((i) => i.kind === 'video') : undefined;
    expect(video?.kind === 'video' && video.video.title).toBeUndefined();
  });

  it('-J dumps with full entries, nested channel tabs, uploads and foreign playlists', () => {
    const channelId = 'UCuAXFkgsw1L7xaCfnd5JJOw';
    const siblings = { mediaUrl: 'file:///a/dump.mp4', subtitleLanguages: ['en'] };
    const outcome = parseYtDlpDocument(
      {
        _type: 'playlist',
        id: channelId,
        channel_id: channelId,
        title: 'Rick Astley',
        extractor_key: 'YoutubeTab',
        entries: [
          { _type: 'url', ie_key: 'YoutubeTab', url: `https://www.youtube.com/channel/${channelId}/videos`, id: channelId },
          {
            _type: 'playlist',
            id: `${channelId}`,
            title: 'Rick Astley - Shorts',
            entries: [
              { _type: 'url', ie_key: 'Youtube', id: 'shortshort1', url: 'https://www.youtube.com/shorts/shortshort1', title: 'A short' },
            ],
          },
          {
            id: 'fullentry01',
            title: 'Full',
            upload_date: '20200202',
            formats: [],
            channel_id: channelId,
            extractor: 'youtube',
            subtitles: { en: [] },
          },
        ],
      },
      { evidenceUrl: 'file:///a/dump.json', siblings },
    );
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    const videos = outcome.items.flatMap((i) => (i.kind === 'video' ? [i] : []));
    expect(videos.map((v) => [v.video.videoId, v.video.channelId, v.partial])).toEqual([
      ['shortshort1', channelId, true],
      ['fullentry01', channelId, false],
    ]);
    // files beside the dump belong to the dump, not to its entries
    expect(videos[1]!.video.videoFileUrl).toBeUndefined();
    expect(videos[1]!.video.captions).toBeUndefined();

    const uploads = parseYtDlpDocument(
      {
        _type: 'playlist',
        id: `UU${channelId.slice(2)}`,
        channel_id: channelId,
        entries: [{ _type: 'url', ie_key: 'Youtube', id: 'uploaded001' }],
      },
      { evidenceUrl: 'file:///u.json' },
    );
    expect(uploads.ok && uploads.items.find((i) => i.kind === 'video')).toMatchObject({ video: { videoId: 'uploaded001', channelId } });
    // A playlist someone made holds anyone's videos: its entries are not its owner's.
    const mix = parseYtDlpDocument(
      {
        _type: 'playlist',
        id: 'PLxyz',
        title: 'Favourites',
        channel_id: channelId,
        entries: [{ _type: 'url', ie_key: 'Youtube', id: 'someones001' }],
      },
      { evidenceUrl: 'file:///p.json' },
    );
    expect(mix.ok && mix.items.find((i) => i.kind === 'video')).toMatchObject({ video: { videoId: 'someones001', channelId: '' } });
  });

  it('merging is order-independent: full wins, flat fills gaps, captions unite', () => {
    const flat = {
      video: {
        videoId: 'v',
        channelId: 'UC1',
        title: 'flat title',
        durationSeconds: 10,
        viewCount: 5,
        evidenceUrl: 'file:///flat.json',
      } as VideoRecord,
      partial: true,
      epoch: 0,
    };
    const full = {
      video: {
        videoId: 'v',
        channelId: 'UC1',
        title: 'full title',
        uploadDate: '2020-01-02',
        captions: [{ language: 'en', kind: 'auto' as const }],
        evidenceUrl: 'file:///v.info.json',
      } as VideoRecord,
      partial: false,
      epoch: 1,
    };
    const other = {
      video: {
        videoId: 'v',
        channelId: '',
        videoFileUrl: 'file:///v.mp4',
        captions: [{ language: 'en', kind: 'manual' as const }],
        evidenceUrl: 'file:///old/v.info.json',
      } as VideoRecord,
      partial: false,
      epoch: 0,
    };
    const a = mergeVideos(mergeVideos(flat, full), other);
    const b = mergeVideos(other, mergeVideos(full, flat));
    expect(a).toEqual(b);
    expect(a.partial).toBe(false);
    expect(a.video).toMatchObject({
      title: 'full title',
      durationSeconds: 10,
      viewCount: 5,
      uploadDate: '2020-01-02',
      channelId: 'UC1',
      videoFileUrl: 'file:///v.mp4',
      evidenceUrl: 'file:///v.info.json',
    });
    expect(a.video.captions).toEqual([{ language: 'en', kind: 'manual' }]);
  });
});

describe('a generated archive', () => {
  let fx: ArchiveFixture;
  let scan: ArchiveScan;
  const progress: ArchiveProgress[] = [];

  beforeAll(async () => {
    fx = await createArchiveFixture({ videos: 24 });
    scan = await scanArchive(fx.dir, { onProgress: (p) => progress.push(p), progressIntervalMs: 0 });
  });
  afterAll(() => fx?.cleanup());

  const videosOf = (channelId: string) => scan.videos.filter((v) => v.channelId === channelId);
  const video = (id: string) => scan.videos.find((v) => v.videoId === id)!;

  it('finds every video and channel; the malformed file is a warning, not a failure', () => {
    expect(new Set(videosOf(fx.channelId).map((v) => v.videoId))).toEqual(new Set(fx.allVideoIds));
    expect(new Set(videosOf(fx.legacy!.channelId).map((v) => v.videoId))).toEqual(new Set(fx.legacy!.videoIds));
    expect(scan.videos).toHaveLength(fx.allVideoIds.length + fx.legacy!.videoIds.length);
    expect(scan.channels.map((c) => c.channelId).sort()).toEqual([fx.channelId, fx.legacy!.channelId].sort());
    expect(scan.warnings).toEqual([{ file: fx.malformedFile, message: expect.stringMatching(/^not valid JSON/) }]);
    // 24 videos + channel info.json + malformed + flat dump + 2 legacy
    expect(scan.stats).toMatchObject({ metadataFiles: 29, filesParsed: 29, filesFailed: 1, walkDone: true, partialFiles: 1 });
  });

  it('reports progress up to the final counts', () => {
    expect(progress.length).toBeGreaterThan(1);
    const last = progress[progress.length - 1]!;
    expect(last).toMatchObject({ walkDone: true, filesParsed: 29, metadataFiles: 29 });
    expect(last.bytesRead).toBe(scan.stats.bytesRead);
    expect(last.bytesRead).toBeGreaterThan(24 * 5000);
    for (let i = 1; i < progress.length; i++) expect(progress[i]!.filesParsed).toBeGreaterThanOrEqual(progress[i - 1]!.filesParsed);
  });

  it('full records carry the info.json fields and provenance', () => {
    for (const id of fx.videoIds) {
      const v = video(id);
      expect(v.title).toBeTruthy();
      expect(v.description).toBeTruthy();
      expect(v.uploadDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(v.durationSeconds).toBeGreaterThan(0);
      expect(v.language).toBe('en');
      expect(v.tags?.length).toBe(3);
      expect(v).toMatchObject({ availability: 'live', observedAt: new Date(1_763_675_106_000).toISOString() });
      expect(v.thumbnailUrl).toBe(`https://i.ytimg.com/vi_webp/${id}/maxresdefault.webp`);
      expect(v.evidenceUrl).toMatch(
        new RegExp(
          `^file://.*%5B${id.replace(/[-_]/g, '\\$&')}%5D\\.info\\.json$|^file://.*\\[${id.replace(/[-_]/g, '\\$&')}\\]\\.info\\.json$`,
        ),
      );
    }
  });

  it('media files: the largest beside the info.json; .part never counts', () => {
    expect(fx.mediaFiles.size).toBeGreaterThan(2);
    for (const id of fx.videoIds) {
      const name = fx.mediaFiles.get(id);
      expect(video(id).videoFileUrl).toBe(name ? pathToFileURL(join(fx.dir, fx.channelTitle, name)).href : undefined);
    }
    expect(video(fx.partialVideoId).videoFileUrl).toBeUndefined();
  });

  it('subtitles: .en.vtt manual (in subtitles), .de.vtt auto (only in automatic_captions)', () => {
    expect(fx.subtitleVideoIds.length).toBeGreaterThan(2);
    for (const id of fx.videoIds) {
      const expected = fx.subtitleVideoIds.includes(id)
        ? [
            { language: 'de', kind: 'auto' },
            { language: 'en', kind: 'manual' },
          ]
        : undefined;
      expect(video(id).captions).toEqual(expected);
    }
  });

  it('flat-playlist entries merge with full records; flat-only videos stay partial', () => {
    const flatUrl = pathToFileURL(join(fx.dir, 'flat-playlist.json')).href;
    for (const id of fx.flatOnlyVideoIds) {
      const v = video(id);
      expect(v).toMatchObject({ channelId: fx.channelId, evidenceUrl: flatUrl, availability: 'unknown' });
      expect(v.title).toMatch(/not downloaded/);
      expect(v.durationSeconds).toBeGreaterThan(0);
      expect(v.uploadDate).toBeUndefined();
      expect(v.description).toBeUndefined();
    }
    for (const id of fx.videoIds) expect(video(id).evidenceUrl).not.toBe(flatUrl);
  });

  it('channel records: channel-level info.json wins; legacy names kept', () => {
    const main = scan.channels.find((c) => c.channelId === fx.channelId)!;
    expect(main).toMatchObject({ title: fx.channelTitle, handle: fx.handle, subscriberCount: 48_200 });
    expect(main.description).toMatch(/Restorations/);
    expect(main.avatarUrl).toMatch(/avatar=s0$/);
    expect(main.bannerUrl).toMatch(/banner=s0$/);
    expect(scan.channelNames.get(fx.legacy!.channelId)).toEqual({ customNames: [fx.legacy!.customName], userNames: [fx.legacy!.userName] });
  });

  it('resolveChannel by id, handle (any case), custom URL, user name and video id', async () => {
    const source = createArchiveSource({ dir: fx.dir });
    const id = async (text: string) => (await source.resolveChannel(query(text)))?.channelId;
    expect(await id(fx.channelId)).toBe(fx.channelId);
    expect(await id(`https://www.youtube.com/channel/${fx.channelId}/videos`)).toBe(fx.channelId);
    expect(await id(fx.handle)).toBe(fx.channelId);
    expect(await id(fx.handle.toUpperCase())).toBe(fx.channelId);
    expect(await id(`youtube.com/${fx.handle.toLowerCase()}/videos`)).toBe(fx.channelId);
    expect(await id(`https://www.youtube.com/watch?v=${fx.videoIds[3]}`)).toBe(fx.channelId);
    expect(await id(fx.flatOnlyVideoIds[0]!)).toBe(fx.channelId);
    expect(await id(`youtube.com/c/${fx.legacy!.customName.toLowerCase()}`)).toBe(fx.legacy!.channelId);
    expect(await id(`youtube.com/user/${fx.legacy!.userName}`)).toBe(fx.legacy!.channelId);
    expect(await id(`youtube.com/${fx.legacy!.userName}`)).toBe(fx.legacy!.channelId);
    expect(await id(`youtu.be/${fx.legacy!.videoIds[0]}`)).toBe(fx.legacy!.channelId);
    expect(await id('@nobody-here')).toBeUndefined();
    expect(await id('UCaaaaaaaaaaaaaaaaaaaaaa')).toBeUndefined();
    expect(await id('aaaaaaaaaaa')).toBeUndefined();
    expect(source.info()).toMatchObject({ builds: 1, videos: scan.videos.length, exists: true });
  });

  it('listVideos pages through the channel, newest first, with progress', async () => {
    const source = createArchiveSource({ dir: fx.dir, pageSize: 5 });
    const channel = (await source.resolveChannel({ kind: 'channelId', channelId: fx.channelId }))!;
    const seen: VideoRecord[] = [];
    const progresses: number[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await source.listVideos(channel, cursor);
      expect(page.videos.length).toBeLessThanOrEqual(5);
      seen.push(...page.videos);
      progresses.push(page.progress!);
      cursor = page.next;
      pages++;
    } while (cursor);
    expect(pages).toBe(Math.ceil(fx.allVideoIds.length / 5));
    expect(seen.map((v) => v.videoId).sort()).toEqual([...fx.allVideoIds].sort());
    expect(progresses[progresses.length - 1]).toBe(1);
    expect(progresses).toEqual([...progresses].sort((a, b) => a - b));
    const dated = seen.filter((v) => v.uploadDate).map((v) => v.uploadDate!);
    expect(dated).toEqual([...dated].sort().reverse());
    expect(await source.listVideos({ channelId: 'UCaaaaaaaaaaaaaaaaaaaaaa' }, undefined)).toEqual({ videos: [], progress: 1 });
    await expect(source.listVideos(channel, 'not-a-cursor')).rejects.toThrow(/cursor/);
  });

  it('streamArchive yields per-file items and can be stopped early', async () => {
    let videos = 0;
    let warnings = 0;
    for await (const item of streamArchive(fx.dir, { concurrency: 4 })) {
      if (item.kind === 'video') videos++;
      if (item.kind === 'warning') warnings++;
    }
    // each full video once from its info.json, each main-channel video once more from the flat dump
    expect(videos).toBe(fx.videoIds.length * 2 + fx.flatOnlyVideoIds.length + fx.legacy!.videoIds.length);
    expect(warnings).toBe(1);
    let taken = 0;
    for await (const item of streamArchive(fx.dir, { concurrency: 4 })) {
      if (item.kind === 'video' && ++taken === 3) break;
    }
    expect(taken).toBe(3);
  });

  it('a throwing progress callback stops the scan instead of hanging it', async () => {
    await expect(
      scanArchive(fx.dir, {
        concurrency: 2,
        progressIntervalMs: 0,
        onProgress: () => {
          throw new Error('bar broke');
        },
      }),
    ).rejects.toThrow('bar broke');
  });

  it('an aborted scan rejects', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(scanArchive(fx.dir, { signal: controller.signal })).rejects.toThrow('stop');
  });
});

describe('the archive index and odd trees', () => {
  it('is built once, kept while young, rebuilt only when the directory changed', async () => {
    const fx = await createArchiveFixture({ videos: 3, legacyChannel: false, flatOnly: 0 });
    try {
      let clock = 1_000_000;
      const source = createArchiveSource({ dir: fx.dir, maxAgeMs: 30_000, now: () => clock });
      expect(source.info()).toBeUndefined();
      const channel = (await source.resolveChannel({ kind: 'handle', handle: fx.handle }))!;
      expect(source.info()?.builds).toBe(1);
      clock += 10_000;
      await source.listVideos(channel, undefined);
      clock += 60_000; // old, but nothing changed: the signature check keeps it
      expect((await source.listVideos(channel, undefined)).videos).toHaveLength(3);
      expect(source.info()?.builds).toBe(1);

      const template = JSON.parse(await readFile(join(fx.dir, fx.channelTitle, await findInfo(fx, fx.videoIds[0]!)), 'utf8')) as Record<
        string,
        unknown
      >;
      await writeFile(
        join(fx.dir, fx.channelTitle, 'New one [newvideo001].info.json'),
        JSON.stringify({ ...template, id: 'newvideo001', title: 'New one', upload_date: '20300101' }),
      );
      clock += 1_000; // changed, but the index is young: not looked at yet
      expect((await source.listVideos(channel, undefined)).videos).toHaveLength(3);
      clock += 30_000;
      const page = await source.listVideos(channel, undefined);
      expect(page.videos.map((v) => v.videoId)[0]).toBe('newvideo001');
      expect(source.info()?.builds).toBe(2);
      await source.refresh();
      expect(source.info()?.builds).toBe(3);
    } finally {
      await fx.cleanup();
    }
  });

  it('is built by the warm-up at start; a search during the build joins it instead of building again', async () => {
    const fx = await createArchiveFixture({ videos: 3, legacyChannel: false, flatOnly: 0 });
    try {
      const source = createArchiveSource({ dir: fx.dir });
      const lines: Array<Record<string, unknown>> = [];
      const log = createLogger('info', {}, (line) => lines.push(JSON.parse(line) as Record<string, unknown>));
      const failing: VideoSource = {
        name: 'wayback',
        resolveChannel: async () => undefined,
        listVideos: async () => ({ videos: [] }),
        warmUp: async () => {
          throw new Error('boom');
        },
      };
      const warming = warmUpSources([source, failing], log);
      const channel = await source.resolveChannel({ kind: 'handle', handle: fx.handle });
      await warming;
      expect(channel?.channelId).toBe(fx.channelId);
      expect(source.info()?.builds).toBe(1);
      expect(lines.find((line) => line.msg === 'source ready')).toMatchObject({ source: 'archive', exists: true, videos: 3, channels: 1 });
      expect(lines.find((line) => line.level === 'warn')).toMatchObject({ source: 'wayback' });
    } finally {
      await fx.cleanup();
    }
  });

  it('a missing directory is an empty archive until it appears', async () => {
    const dir = join(tmpdir(), `afterimage-missing-${process.pid}-${Date.now()}`);
    const source = createArchiveSource({ dir, maxAgeMs: 0 });
    expect(await source.resolveChannel({ kind: 'handle', handle: '@x' })).toBeUndefined();
    expect(source.info()).toMatchObject({ exists: false, videos: 0 });
    await expect(scanArchive(dir)).rejects.toThrow(/ENOENT/);
  });

  it('follows symbolic links without looping or counting twice; broken links and unreadable files are warnings', async () => {
    const fx = await createArchiveFixture({ videos: 4, legacyChannel: false, flatOnly: 0 });
    try {
      await symlink(fx.dir, join(fx.dir, fx.channelTitle, 'loop'));
      await symlink(join(fx.dir, fx.channelTitle), join(fx.dir, 'again'));
      await symlink(join(fx.dir, 'nowhere.info.json'), join(fx.dir, 'dangling.info.json'));
      await writeFile(join(fx.dir, 'notes.json'), '{"todo": ["watch everything"]}');
      const unreadable = join(fx.dir, fx.channelTitle, 'Locked [lockedvideo].info.json');
      await writeFile(unreadable, '{}');
      await chmod(unreadable, 0o000);
      // big enough for a parse thread
      const bigBroken = join(fx.dir, fx.channelTitle, 'Huge broken [hugebroken1].info.json');
      await writeFile(bigBroken, `{"id": "hugebroken1", "description": "${'x'.repeat(300_000)}`);
      const runsAsRoot = process.getuid?.() === 0;

      const scan = await scanArchive(fx.dir, { parseThreads: 2 });
      expect(scan.videos.map((v) => v.videoId).sort()).toEqual([...fx.videoIds].sort());
      expect(scan.warnings).toContainEqual({ file: bigBroken, message: expect.stringMatching(/^not valid JSON/) });
      expect(scan.stats.linksSkipped).toBeGreaterThanOrEqual(2);
      const messages = scan.warnings.map((w) => `${w.file}: ${w.message}`);
      expect(messages).toContainEqual(expect.stringMatching(/dangling\.info\.json: broken symbolic link/));
      expect(messages).toContainEqual(expect.stringMatching(/not valid JSON/));
      // root reads anything; then the locked file is just an empty document without an id
      expect(messages).toContainEqual(
        runsAsRoot ? expect.stringMatching(/Locked .*: no video id/) : expect.stringMatching(/Locked .*: unreadable file \(EACCES/),
      );
      expect(messages.some((m) => m.includes('notes.json'))).toBe(false);
    } finally {
      await fx.cleanup();
    }
  });

  it('scans a few hundred generated files quickly (files/s printed)', async () => {
    const fx = await createArchiveFixture({ videos: 600, legacyChannel: false });
    try {
      const scan = await scanArchive(fx.dir);
      console.log(
        `archive scan: ${scan.stats.filesParsed} files, ${(scan.stats.bytesRead / 1e6).toFixed(1)} MB in ${scan.stats.elapsedMs} ms = ${scan.stats.filesPerSecond} files/s (generated in ${fx.elapsedMs} ms)`,
      );
      expect(scan.videos).toHaveLength(602);
    } finally {
      await fx.cleanup();
    }
  });
});

async function findInfo(fx: ArchiveFixture, videoId: string): Promise<string> {
  const { readdir } = await import('node:fs/promises');
  const name = (await readdir(join(fx.dir, fx.channelTitle))).find((n) => n.endsWith(`[${videoId}].info.json`));
  if (!name) throw new Error(`no info.json for ${videoId}`);
  return name;
}

import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TransientError } from '../../core/sources/httpErrors.ts';
import type { ChannelRecord, VideoRecord } from '../../core/sources/types.ts';
import { CDX_FIELDS, parseCdx } from '../../core/sources/wayback/cdx.ts';
import { upstreamFor } from '../../core/sources/upstream.ts';
import { buildCdxUrl, queryCdx } from '../../core/sources/wayback/cdxQuery.ts';
import { extractChannelInfo } from '../../core/sources/wayback/channelPage.ts';
import { decodeCursor, listingForms } from '../../core/sources/wayback/cursor.ts';
import { extractListedVideos } from '../../core/sources/wayback/listingPage.ts';
import { createWaybackSource, type WaybackSourceOptions } from '../../core/sources/wayback/source.ts';
import { classifyWatchPage } from '../../core/sources/wayback/watchPage.ts';
import {
  channelPageHtml,
  legacyWatchPageHtml,
  playerResponse,
  removalNoticeHtml,
  start,
  ts,
  watchPageHtml,
  type ChannelFixture,
  type VideoFixture,
  type WaybackServer,
} from '../kit/servers/wayback-server.ts';
import { describeReal } from '../kit/describeReal.ts';
import { fakeChannelId, fakeVideoId } from '../kit/ids.ts';
import { realFixture } from '../kit/realFixtures.ts';

const present = (path: string) => existsSync(realFixture(path));

/** Fast retries for tests: the production defaults wait seconds between attempts. */
const FAST = { timeoutMs: 1_000, retries: 2, minDelayMs: 5, maxDelayMs: 20 };

// ---------------------------------------------------------------------------------------------
// vcrpy cassettes (the subset of YAML they use)
// ---------------------------------------------------------------------------------------------

interface Interaction {
  uri: string;
  status: number;
  body: string;
  contentType?: string;
}

function readCassette(name: string): Interaction[] {
  const text = readFileSync(realFixture(`edgi-wayback/${name}`), 'utf8');
  return text
    .split(/^- request:$/m)
    .slice(1)
    .map((chunk) => {
      const uri = /^\s+uri: (.+)$/m.exec(chunk)![1]!.trim();
      const status = Number(/^\s+status:\s*\n\s+code: (\d+)/m.exec(chunk)![1]);
      let body = '';
      const binary = /^( +)string: !!binary \|\n((?:\1 +\S.*\n)+)/m.exec(chunk);
      if (binary) {
        let bytes = Buffer.from(binary[2]!.replace(/\s+/g, ''), 'base64');
        if (bytes[0] === 0x1f && bytes[1] === 0x8b) bytes = gunzipSync(bytes);
        body = bytes.toString('utf8');
      } else {
        const plain = /^\s+string: '((?:[^']|'')*)'$/m.exec(chunk);
        if (plain) body = plain[1]!.replace(/''/g, "'");
      }
      const contentType = /Content-Type:\s*\n\s+- (.+)$/im.exec(chunk)?.[1]?.trim();
      return { uri, status, body, ...(contentType ? { contentType } : {}) };
    });
}

/** Serves recorded CDX answers, matched on the resumeKey parameter (exactly as the client sent it). */
async function replayServer(interactions: Interaction[]): Promise<{ url: string; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const key = new URL(req.url ?? '/', 'http://x').searchParams.get('resumeKey');
    const match = interactions.find((entry) => new URL(entry.uri).searchParams.get('resumeKey') === key);
    if (!match) {
      res.statusCode = 404;
      res.end('no recording for this resumeKey');
      return;
    }
    res.statusCode = match.status;
    res.setHeader('Content-Type', match.contentType ?? 'text/plain;charset=UTF-8');
    res.end(match.body);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/cdx/search/cdx`,
    requests,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

describeReal('CDX answers in the real formats', () => {
  it.skipIf(!present('edgi-wayback/test_search.yaml'))('reads default text rows and gives rows repeated verbatim once', () => {
    const [interaction] = readCassette('test_search.yaml');
    const page = parseCdx(interaction!.body);
    expect(page.resumeKey).toBeUndefined();
    expect(page.rows).toEqual([
      {
        urlkey: 'gov,nasa)/',
        timestamp: '19961231235847',
        original: 'http://www.nasa.gov:80/',
        mimetype: 'text/html',
        statuscode: '200',
        digest: 'MGIGF4GRGGF5GKV6VNCBAXOE3OR5BTZC',
        length: '1811',
      },
    ]);
  });

  it.skipIf(!present('edgi-wayback/test_search_does_not_repeat_results.yaml'))('keeps warc/revisit rows with their "-" status code', () => {
    const [interaction] = readCassette('test_search_does_not_repeat_results.yaml');
    const page = parseCdx(interaction!.body);
    expect(page.rows.length).toBeGreaterThan(10);
    const revisits = page.rows.filter((row) => row.mimetype === 'warc/revisit');
    expect(revisits.length).toBeGreaterThan(0);
    expect(revisits.every((row) => row.statuscode === '-')).toBe(true);
    expect(page.rows.some((row) => row.statuscode === '301')).toBe(true);
    expect(new Set(page.rows.map((row) => `${row.timestamp} ${row.original}`)).size).toBe(page.rows.length);
  });

  it.skipIf(!present('edgi-wayback/test_search_with_filter.yaml'))('reads a filtered prefix query and its resume key', () => {
    const [unfiltered, filtered] = readCassette('test_search_with_filter.yaml');
    const first = parseCdx(unfiltered!.body);
    expect(first.rows).toHaveLength(10);
    expect(first.resumeKey).toBe('gov%2Cnasa%29%2F+20220101013953');
    const page = parseCdx(filtered!.body);
    expect(page.rows).toHaveLength(10);
    expect(page.rows.every((row) => row.statuscode === '404')).toBe(true);
    expect(page.rows[0]!.original).toBe('http://www.nasa.gov/%20mission_pages/mars/news/marsmethane.html');
    expect(page.resumeKey).toMatch(/^gov%2Cnasa%29%2F\.%25c2%25a0/);
  });

  it.skipIf(!present('edgi-wayback/test_search_multipage.yaml'))(
    'follows showResumeKey pages to the end exactly as the real server expects the key back',
    async () => {
      const interactions = readCassette('test_search_multipage.yaml');
      expect(interactions).toHaveLength(15);
      const replay = await replayServer(interactions);
      try {
        const rows = [];
        let resumeKey: string | undefined;
        let pages = 0;
        do {
          const page = await queryCdx(
            upstreamFor('wayback', [replay.url]),
            replay.url,
            { url: 'cnn.com', fl: CDX_FIELDS, limit: 25, showResumeKey: true, ...(resumeKey ? { resumeKey } : {}) },
            FAST,
          );
          rows.push(...page.rows);
          resumeKey = page.resumeKey;
          pages++;
        } while (resumeKey && pages < 20);
        expect(pages).toBe(15);
        expect(replay.requests).toHaveLength(15); // every key matched a recorded request: none answered 404
        // The key goes back encoded once more, as in the recording ("com%252Ccnn%2529%252F%2B2001041400593%253A").
        expect(replay.requests[1]).toContain('resumeKey=com%252Ccnn%2529%252F%2B2001041400593%253A');
        // Every distinct row of every recorded page, once (each page repeats its rows 3-5 times).
        const distinct = interactions.reduce(
          (sum, entry) => sum + new Set(entry.body.split('\n\n')[0]!.split('\n').filter(Boolean)).size,
          0,
        );
        expect(distinct).toBeGreaterThan(80);
        expect(rows).toHaveLength(distinct);
        expect(rows.every((row) => /^\d{14}$/.test(row.timestamp) && row.urlkey === 'com,cnn)/')).toBe(true);
        const timestamps = rows.map((row) => row.timestamp);
        expect([...timestamps].sort()).toEqual(timestamps);
      } finally {
        await replay.close();
      }
    },
  );

  it.skipIf(!present('edgi-wayback/test_search_raises_for_blocked_urls.yaml'))(
    'takes a 403 "Blocked Site Error" as a definite empty answer, without retrying',
    async () => {
      const interactions = readCassette('test_search_raises_for_blocked_urls.yaml');
      expect(interactions[0]!.body).toContain('Blocked Site Error');
      const replay = await replayServer(interactions);
      try {
        const page = await queryCdx(
          upstreamFor('wayback', [replay.url]),
          replay.url,
          { url: 'https://nationalpost.com/health', fl: CDX_FIELDS, limit: 1000, showResumeKey: true },
          FAST,
        );
        expect(page).toEqual({ rows: [], blocked: true });
        expect(replay.requests).toHaveLength(1);
      } finally {
        await replay.close();
      }
    },
  );
});

// The same subject, without real fixtures: these run whether or not the folder is there.
describe('CDX answers in the real formats', () => {
  it('reads output=json with its header row and [] [key] ending (the CDX server README shape)', () => {
    const body = `[["urlkey","timestamp","original","mimetype","statuscode","digest","length"],
 ["org,archive)/", "19970126045828", "http://www.archive.org:80/", "text/html", "200", "Q4YULN754FHV2U6Q5JUT6Q2P57WEWNNY", "1415"],
 ["org,archive)/", "19971011050034", "http://www.archive.org:80/", "text/html", "200", "XAHDNHZ5P3GSSSNJ3DMEOJF7BMCCPZR3", "1402"],
 ["org,archive)/", "19971011050034", "http://www.archive.org:80/", "text/html", "200", "XAHDNHZ5P3GSSSNJ3DMEOJF7BMCCPZR3", "1402"],
 [],
 ["org%2Carchive%29%2F+19980109140106%21"]]`;
    const page = parseCdx(body);
    expect(page.rows.map((row) => row.timestamp)).toEqual(['19970126045828', '19971011050034']);
    expect(page.resumeKey).toBe('org%2Carchive%29%2F+19980109140106%21');
    expect(parseCdx('[]').rows).toEqual([]);
    expect(parseCdx('').rows).toEqual([]);
    expect(() => parseCdx('<!DOCTYPE html><html><body>Maintenance</body></html>')).toThrow();
  });

  it('builds queries with repeated filters and the key encoded once more', () => {
    const url = new URL(
      buildCdxUrl('https://web.archive.org/cdx/search/cdx', {
        url: 'youtube.com/channel/UCx',
        matchType: 'prefix',
        fl: ['timestamp', 'original'],
        filter: ['statuscode:200', 'mimetype:text/html'],
        collapse: ['digest'],
        limit: 25,
        showResumeKey: true,
        resumeKey: 'com%2Cyoutube%29%2Fchannel%2Fucx+20200101000000%21',
      }),
    );
    expect(url.searchParams.getAll('filter')).toEqual(['statuscode:200', 'mimetype:text/html']);
    expect(url.searchParams.get('resumeKey')).toBe('com%2Cyoutube%29%2Fchannel%2Fucx+20200101000000%21');
    expect(url.search).toContain('resumeKey=com%252Cyoutube%2529%252Fchannel%252Fucx%2B20200101000000%2521');
  });
});

// ---------------------------------------------------------------------------------------------
// Watch pages
// ---------------------------------------------------------------------------------------------

const loadJson = (path: string) => JSON.parse(readFileSync(realFixture(path), 'utf8')) as Record<string, unknown>;

describeReal('watch pages around real player responses', () => {
  it.skipIf(!present('iv-org-mocks/regular_mrbeast.player.json'))('recovers every field of regular_mrbeast.player.json', () => {
    const player = loadJson('iv-org-mocks/regular_mrbeast.player.json');
    const details = player.videoDetails as Record<string, string>;
    const page = classifyWatchPage(watchPageHtml(player), '2isYuQZMbdU');
    expect(page.kind).toBe('metadata');
    if (page.kind !== 'metadata') return;
    expect(page.meta).toMatchObject({
      videoId: '2isYuQZMbdU',
      channelId: 'UCX6OQ3DkcsbYNE6H8uQQuVA',
      title: 'I Gave My 100,000,000th Subscriber An Island',
      description: details.shortDescription,
      durationSeconds: 930,
      viewCount: 220226287,
      uploadDate: '2022-08-04',
      thumbnailUrl: 'https://i.ytimg.com/vi/2isYuQZMbdU/maxresdefault.jpg',
      author: 'MrBeast',
      ownerProfileUrl: 'http://www.youtube.com/@MrBeast',
    });
    expect(page.meta.captions).toHaveLength(15);
    expect(page.meta.captions).toContainEqual({ language: 'en', kind: 'auto' });
    expect(page.meta.captions).toContainEqual({ language: 'zh-Hant', kind: 'manual' });
    // The same page as the Wayback replays it (toolbar, image URLs rewritten): the real URL comes back.
    const replayed = watchPageHtml(player)
      .replace(
        '<body dir="ltr">',
        '<body dir="ltr"><!-- BEGIN WAYBACK TOOLBAR INSERT --><div id="wm-ipp-base"></div><!-- END WAYBACK TOOLBAR INSERT -->',
      )
      .replace(/https:\/\/i\.ytimg\.com\//g, 'https://web.archive.org/web/20220901000000im_/https://i.ytimg.com/');
    const again = classifyWatchPage(replayed, '2isYuQZMbdU');
    expect(again.kind === 'metadata' && again.meta.thumbnailUrl).toBe('https://i.ytimg.com/vi/2isYuQZMbdU/maxresdefault.jpg');
  });

  it.skipIf(!present('iv-org-mocks/regular_no-description.player.json'))(
    'keeps an empty description as known-empty, and keywords as tags',
    () => {
      const page = classifyWatchPage(watchPageHtml(loadJson('iv-org-mocks/regular_no-description.player.json')), 'iuevw6218F0');
      expect(page.kind === 'metadata' && page.meta).toMatchObject({
        description: '',
        tags: ['Chris', 'Rea', 'Auberge', '1991'],
        uploadDate: '2012-05-21',
        durationSeconds: 283,
        channelId: 'UC_5q6nWPbD30-y6oiWF_oNA',
      });
    },
  );

  it.skipIf(!present('iv-org-mocks/scheduled_live_PBD-Podcast.player.json'))(
    'gives no duration for an upcoming live (lengthSeconds "0")',
    () => {
      const page = classifyWatchPage(watchPageHtml(loadJson('iv-org-mocks/scheduled_live_PBD-Podcast.player.json')), 'N-yVic7BbY0');
      expect(page.kind).toBe('metadata');
      if (page.kind !== 'metadata') return;
      expect(page.meta.durationSeconds).toBeUndefined();
      expect(page.meta.uploadDate).toBe('2023-02-27');
      expect(page.meta.viewCount).toBe(0);
    },
  );

  it.skipIf(!present('youtube-transcript-api/youtube.innertube.json.static'))(
    'reads the player response also when a 2019 page gives it as a string in ytplayer.config',
    () => {
      const player = loadJson('youtube-transcript-api/youtube.innertube.json.static');
      const html = `<html><head><title>Surface Go Review - YouTube</title></head><body><script>var ytplayer = ytplayer || {};ytplayer.config = ${JSON.stringify({ args: { video_id: 'GJLlxj_dtq8', player_response: JSON.stringify(player) } })};ytplayer.load = function() {};</script></body></html>`;
      const page = classifyWatchPage(html, 'GJLlxj_dtq8');
      expect(page.kind === 'metadata' && page.meta).toMatchObject({
        title: 'Surface Go Review - It’s Awesome',
        channelId: 'UCVYamHliCI9rw1tHR1xbkfw',
        durationSeconds: 316,
      });
      expect(page.kind === 'metadata' && page.meta.captions).toContainEqual({ language: 'en', kind: 'auto' });
    },
  );

  it.skipIf(!present('youtube-transcript-api/youtube_age_restricted.innertube.json.static'))(
    'treats an age gate with videoDetails as metadata, an archived bot check as unusable, an error as a notice',
    () => {
      const age = classifyWatchPage(
        watchPageHtml(loadJson('youtube-transcript-api/youtube_age_restricted.innertube.json.static')),
        'Njp5uhTorCo',
      );
      expect(age.kind === 'metadata' && age.meta.title).toBe('Laura Branigan - Self Control (Moreno J Remix) Age-restricted');
      const blocked = classifyWatchPage(
        watchPageHtml(loadJson('youtube-transcript-api/youtube_request_blocked.innertube.json.static')),
        'Njp5uhTorCo',
      );
      expect(blocked.kind).toBe('unusable');
      const unavailable = classifyWatchPage(
        watchPageHtml(loadJson('youtube-transcript-api/youtube_video_unavailable.innertube.json.static')),
        'xxxxxxxxxxx',
      );
      expect(unavailable).toMatchObject({ kind: 'removed', reason: 'This video is unavailable', category: 'unavailable' });
    },
  );
});

describe('watch pages around real player responses', () => {
  it('reads 2014 watch pages: microdata, eow-description, view count, Published on', () => {
    const video: VideoFixture = {
      videoId: 'abcDEF12345',
      channelId: fakeChannelId('legacy'),
      title: 'Rock & "Roll" <live>',
      description: 'First line\nSecond line',
      lengthSeconds: 253,
      viewCount: 98765,
      keywords: ['rock', 'live'],
      uploadDate: '2014-03-02',
    };
    const page = classifyWatchPage(legacyWatchPageHtml(video, { user: 'rocker' }), 'abcDEF12345');
    expect(page).toEqual({
      kind: 'metadata',
      meta: {
        videoId: 'abcDEF12345',
        title: 'Rock & "Roll" <live>',
        channelId: video.channelId,
        description: 'First line\nSecond line',
        durationSeconds: 253,
        viewCount: 98765,
        uploadDate: '2014-03-02',
        thumbnailUrl: 'https://i1.ytimg.com/vi/abcDEF12345/hqdefault.jpg',
        tags: ['rock', 'live'],
        ownerProfileUrl: 'http://www.youtube.com/user/rocker',
        author: 'someone',
      },
    });
    // Another video's page is not this one's metadata.
    expect(classifyWatchPage(legacyWatchPageHtml(video), 'zzzzzzzzzzz').kind).not.toBe('metadata');
  });
});

describe('removal notices', () => {
  const cases: Array<[string, string, 'modern' | 'legacy', string]> = [
    ['removed by the uploader (2020s)', 'This video has been removed by the uploader', 'modern', 'removed_by_uploader'],
    [
      'account terminated (2020s)',
      'This video is no longer available because the YouTube account associated with this video has been terminated.',
      'modern',
      'account_terminated',
    ],
    ['private (2020s)', 'This video is private', 'modern', 'private'],
    ['removed by the user (2014)', 'This video has been removed by the user.', 'legacy', 'removed_by_uploader'],
    ['copyright claim (2014)', 'This video is no longer available due to a copyright claim by Some Label Inc.', 'legacy', 'copyright'],
    ['terms of service (2012)', "This video has been removed because its content violated YouTube's Terms of Service.", 'legacy', 'policy'],
    [
      'terminated account (2016)',
      'This video is no longer available because the YouTube account associated with this video has been terminated.',
      'legacy',
      'account_terminated',
    ],
  ];
  it.each(cases)('detects %s', (_name, reason, style, category) => {
    const page = classifyWatchPage(removalNoticeHtml(reason, style), 'aaaaaaaaaaa');
    expect(page.kind).toBe('removed');
    if (page.kind !== 'removed') return;
    expect(page.category).toBe(category);
    expect(page.reason).toContain(reason.replace(/\.$/, ''));
  });

  it('does not take a normal page (with its hidden unavailable block) for a notice', () => {
    const video: VideoFixture = { videoId: 'bbbbbbbbbbb', channelId: fakeChannelId('x'), title: 'A normal video' };
    expect(classifyWatchPage(legacyWatchPageHtml(video), 'bbbbbbbbbbb').kind).toBe('metadata');
    expect(classifyWatchPage(watchPageHtml(playerResponse(video)), 'bbbbbbbbbbb').kind).toBe('metadata');
    expect(classifyWatchPage('<html><body>Wayback Machine</body></html>', 'bbbbbbbbbbb').kind).toBe('unusable');
    // Messages in scripts are not what the page shows.
    expect(
      classifyWatchPage(
        `<html><body><script>yt.setMsg({'PLAYER_UNAVAILABLE': 'This video is unavailable.', 'ERROR_PRIVATE': 'This video is private.'});</script></body></html>`,
        'bbbbbbbbbbb',
      ).kind,
    ).toBe('unusable');
  });

  it('does not take age gates, region blocks or members-only pages for removals', () => {
    const gate = (reason: string, status = 'LOGIN_REQUIRED') =>
      watchPageHtml({
        playabilityStatus: { status, reason, errorScreen: { playerErrorMessageRenderer: { reason: { simpleText: reason } } } },
      });
    expect(classifyWatchPage(gate('Sign in to confirm your age'), 'ccccccccccc').kind).toBe('unusable');
    expect(
      classifyWatchPage(gate('The uploader has not made this video available in your country', 'UNPLAYABLE'), 'ccccccccccc').kind,
    ).toBe('unusable');
    expect(
      classifyWatchPage(
        gate('Join this channel to get access to members-only content like this video, and other exclusive perks.', 'UNPLAYABLE'),
        'ccccccccccc',
      ).kind,
    ).toBe('unusable');
  });

  it('reads a 2008 page that names its video only in the player flashvars', () => {
    const html = `<html><head><title>YouTube - Charlie bit my finger</title><meta name="title" content="Charlie bit my finger"><meta name="description" content="Even had I done this on purpose"></head><body><div id="watch-player-div"><embed src="/player2.swf" flashvars="video_id=_OBlgSz8sSM&amp;l=56&amp;t=OEgsToPDskI"></embed></div><script>var swfArgs = {"video_id": "_OBlgSz8sSM", "l": "56"};</script></body></html>`;
    expect(classifyWatchPage(html, '_OBlgSz8sSM')).toEqual({
      kind: 'metadata',
      meta: { videoId: '_OBlgSz8sSM', title: 'Charlie bit my finger', description: 'Even had I done this on purpose' },
    });
  });
});

describe('channel pages and listings', () => {
  const channel: ChannelFixture = {
    channelId: fakeChannelId('pages'),
    title: 'Pages & Co',
    handle: '@pages',
    user: 'pagesco',
    description: 'We make pages',
  };
  it('extracts the channel from the 2020s and 2014 layouts', () => {
    expect(extractChannelInfo(channelPageHtml(channel, { videoIds: [] }))).toMatchObject({
      channelId: channel.channelId,
      title: 'Pages & Co',
      handle: '@pages',
      description: 'We make pages',
    });
    expect(extractChannelInfo(channelPageHtml({ ...channel, handle: undefined }, { videoIds: [], style: 'legacy' }))).toMatchObject({
      channelId: channel.channelId,
      title: 'Pages & Co',
      legacyUser: 'pagesco',
    });
  });

  it('lists video ids with titles and tells the channel’s own from other channels’ on a home page', () => {
    const own = [fakeVideoId('o1'), fakeVideoId('o2')];
    const other = fakeVideoId('f1');
    const listed = extractListedVideos(
      channelPageHtml(channel, {
        videoIds: own,
        titles: { [own[0]!]: 'First!' },
        foreign: [{ videoId: other, channelId: fakeChannelId('other') }],
      }),
      channel.channelId,
      false,
    );
    expect(listed.get(own[0]!)).toMatchObject({ title: 'First!', durationSeconds: 253 });
    expect(listed.get(own[0]!)?.owned).toBeUndefined();
    expect(listed.get(other)?.owned).toBe(false);
    const uploads = extractListedVideos(
      channelPageHtml(channel, { videoIds: own, style: 'legacy', tab: '/videos' }),
      channel.channelId,
      true,
    );
    expect([...uploads.keys()]).toEqual(expect.arrayContaining(own));
    expect(uploads.get(own[1]!)).toMatchObject({ owned: true, title: `Video ${own[1]}` });
  });
});

// ---------------------------------------------------------------------------------------------
// The source against the local Wayback
// ---------------------------------------------------------------------------------------------

let wayback: WaybackServer;
beforeAll(async () => {
  wayback = await start();
});
afterAll(async () => {
  await wayback.close();
});
afterEach(() => {
  wayback.clearFailures();
});

function source(extra: Partial<WaybackSourceOptions> = {}) {
  return createWaybackSource({ cdxUrl: wayback.cdxUrl, captureBaseUrl: wayback.captureBaseUrl, fetchOptions: FAST, ...extra });
}

function video(channel: ChannelFixture, seed: string, extra: Partial<VideoFixture> = {}): VideoFixture {
  return {
    videoId: fakeVideoId(seed),
    channelId: channel.channelId,
    title: `Title of ${seed}`,
    description: `About ${seed}`,
    lengthSeconds: 120,
    viewCount: 1000,
    uploadDate: '2016-05-04',
    keywords: [seed],
    author: channel.title,
    ...extra,
  };
}

async function listAll(
  channel: ChannelRecord,
  options: Partial<WaybackSourceOptions> = {},
): Promise<{ videos: VideoRecord[]; pages: number; cursors: string[]; progress: number[] }> {
  const wb = source(options);
  const videos: VideoRecord[] = [];
  const cursors: string[] = [];
  const progress: number[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await wb.listVideos(channel, cursor);
    videos.push(...page.videos);
    progress.push(page.progress ?? -1);
    cursor = page.next;
    if (cursor) cursors.push(cursor);
    pages++;
  } while (cursor && pages < 500);
  return { videos, pages, cursors, progress };
}

describe('resolveChannel', () => {
  const channel: ChannelFixture = {
    channelId: fakeChannelId('resolve'),
    title: 'Resolve Me',
    handle: '@ResolveMe',
    user: 'resolveme',
    customName: 'ResolveMeC',
    description: 'Channel about resolving',
  };
  beforeAll(() => {
    wayback.addListing(channel, { timestamp: ts(2019, 1), form: 'channel', videoIds: [] });
    wayback.addListing(channel, { timestamp: ts(2023, 5), form: 'handle', videoIds: [] });
    wayback.addListing({ ...channel, handle: undefined }, { timestamp: ts(2013, 2), form: 'user', videoIds: [], style: 'legacy' });
    wayback.addListing(channel, { timestamp: ts(2018, 7), form: 'c', tab: '/videos', videoIds: [] });
    wayback.addVideo(
      {
        videoId: 'ResolveVid1',
        channelId: channel.channelId,
        title: 'A video',
        ownerProfileUrl: 'http://www.youtube.com/@ResolveMe',
        author: 'Resolve Me',
      },
      [{ timestamp: ts(2021, 3) }],
    );
  });

  it('by channel id', async () => {
    expect(await source().resolveChannel({ kind: 'channelId', channelId: channel.channelId })).toMatchObject({
      channelId: channel.channelId,
      title: 'Resolve Me',
      handle: '@ResolveMe',
      description: 'Channel about resolving',
      avatarUrl: expect.stringContaining('yt3.ggpht.com'),
    });
  });
  it('by handle (case-insensitively, as the archive indexes it)', async () => {
    expect(await source().resolveChannel({ kind: 'handle', handle: '@resolveme' })).toMatchObject({
      channelId: channel.channelId,
      title: 'Resolve Me',
      handle: '@ResolveMe',
    });
  });
  it('by legacy username, keeping the name for walking /user/ listings', async () => {
    expect(await source().resolveChannel({ kind: 'user', name: 'resolveme' })).toMatchObject({
      channelId: channel.channelId,
      title: 'Resolve Me',
      customUrl: 'resolveme',
    });
  });
  it('by custom URL (through its /videos page)', async () => {
    expect(await source().resolveChannel({ kind: 'customUrl', name: 'ResolveMeC' })).toMatchObject({
      channelId: channel.channelId,
      customUrl: 'ResolveMeC',
    });
  });
  it('by one of its videos', async () => {
    expect(await source().resolveChannel({ kind: 'video', videoId: 'ResolveVid1' })).toEqual({
      channelId: channel.channelId,
      title: 'Resolve Me',
      handle: '@ResolveMe',
    });
  });
  it('undefined when nothing is archived', async () => {
    const wb = source();
    expect(await wb.resolveChannel({ kind: 'handle', handle: '@nobodyhere' })).toBeUndefined();
    expect(await wb.resolveChannel({ kind: 'video', videoId: 'Nobody12345' })).toBeUndefined();
  });
  it('a terminated channel: older captures give its id, the newest notice marks it deleted', async () => {
    const gone: ChannelFixture = { channelId: fakeChannelId('gone'), title: 'Gone Channel', handle: '@gonechannel' };
    wayback.addListing(gone, { timestamp: ts(2017, 1), form: 'handle', videoIds: [] });
    wayback.addTerminatedChannelPage(gone, ts(2022, 1), 'handle');
    wayback.addTerminatedChannelPage(gone, ts(2023, 1), 'handle');
    expect(await source().resolveChannel({ kind: 'handle', handle: '@gonechannel' })).toMatchObject({
      channelId: gone.channelId,
      title: 'Gone Channel',
      channelStatus: 'deleted',
    });
  });
});

describe('listVideos', () => {
  const channel: ChannelFixture = { channelId: fakeChannelId('lister'), title: 'Lister', handle: '@lister', user: 'listerold' };
  const record: ChannelRecord = { channelId: channel.channelId, title: 'Lister', handle: '@lister', customUrl: 'listerold' };
  const videos = Array.from({ length: 60 }, (_, index) =>
    video(channel, `lister-${index}`, {
      title: `Lister video ${index}`,
      uploadDate: `2016-05-${String((index % 28) + 1).padStart(2, '0')}`,
      captions: index % 10 === 0 ? [{ languageCode: 'en' }, { languageCode: 'en', kind: 'asr' }] : undefined,
    }),
  );
  const ids = videos.map((entry) => entry.videoId);
  const foreign = { videoId: fakeVideoId('not-ours'), channelId: fakeChannelId('someone-else') };
  const deleted = video(channel, 'deleted-later', { title: 'Deleted later' });
  const onlyNotices = video(channel, 'only-notices');
  const listingOnly = video(channel, 'listing-only');
  const expected = [...ids, deleted.videoId, onlyNotices.videoId, listingOnly.videoId];

  beforeAll(() => {
    // Watch captures: most in 2016, a few also in the legacy layout; one in two months.
    videos.forEach((entry, index) =>
      wayback.addVideo(entry, [
        { timestamp: ts(2016, 6, (index % 28) + 1), style: index % 7 === 0 ? 'legacy' : 'modern' },
        ...(index % 2 ? [{ timestamp: ts(2017, 2, 1) }] : []),
      ]),
    );
    wayback.addVideo(foreign as VideoFixture & { title: string }, []);
    wayback.addVideo({ ...foreign, title: 'Somebody else' }, [{ timestamp: ts(2016, 1) }]);
    wayback.addVideo(deleted, [
      { timestamp: ts(2016, 3), style: 'legacy' },
      { timestamp: ts(2016, 9) },
      { timestamp: ts(2019, 4), kind: 'removed', reason: 'This video has been removed by the uploader' },
      { timestamp: ts(2020, 4), kind: 'botcheck' },
      { timestamp: ts(2021, 4), kind: 'removed', reason: 'This video has been removed by the uploader' },
      { timestamp: ts(2022, 4), kind: 'removed', reason: 'This video has been removed by the uploader' },
    ]);
    wayback.addVideo(onlyNotices, [
      {
        timestamp: ts(2018, 1),
        kind: 'removed',
        reason: 'This video is no longer available because the YouTube account associated with this video has been terminated.',
        style: 'legacy',
      },
      {
        timestamp: ts(2019, 1),
        kind: 'removed',
        reason: 'This video is no longer available because the YouTube account associated with this video has been terminated.',
      },
    ]);
    // Listings: the /videos tab captured three times (overlapping windows), the home page with a
    // foreign shelf, a 2013 /user/ page, and the same capture twice (identical digest).
    wayback.addListing(channel, {
      timestamp: ts(2016, 7),
      form: 'channel',
      tab: '/videos',
      videoIds: [...ids.slice(0, 30), listingOnly.videoId],
      titles: { [listingOnly.videoId]: 'Only the listing knows me' },
    });
    wayback.addListing(channel, { timestamp: ts(2016, 8), form: 'channel', tab: '/videos', videoIds: ids.slice(20, 50) });
    wayback.addListing(channel, { timestamp: ts(2016, 9), form: 'channel', tab: '/videos', videoIds: ids.slice(20, 50) });
    wayback.addListing(channel, { timestamp: ts(2016, 10), form: 'channel', videoIds: ids.slice(45, 55), foreign: [foreign] });
    wayback.addListing(channel, {
      timestamp: ts(2017, 3),
      form: 'handle',
      tab: '/videos',
      videoIds: [...ids.slice(50, 60), deleted.videoId],
    });
    wayback.addListing(channel, {
      timestamp: ts(2015, 3),
      form: 'user',
      tab: '/videos',
      videoIds: [onlyNotices.videoId, ...ids.slice(0, 5)],
      style: 'legacy',
    });
    // Pages that are not listings are not read: /about, and a channel whose id differs only in case.
    wayback.addCapture({
      url: `https://www.youtube.com/channel/${channel.channelId}/about`,
      timestamp: ts(2016, 7),
      body: channelPageHtml(channel, { videoIds: [fakeVideoId('about-only')] }),
    });
    wayback.addCapture({
      url: `https://www.youtube.com/channel/${channel.channelId.toUpperCase()}/videos`,
      timestamp: ts(2016, 7),
      body: channelPageHtml(channel, { videoIds: [fakeVideoId('case-twin')] }),
    });
  });

  // One walk in small pages, shared by the tests below.
  let walk: ReturnType<typeof listAll> | undefined;
  const walkOnce = () => {
    if (!walk) {
      wayback.resetCounts();
      walk = listAll(record, { pageSize: 2, limits: { listingCapturesPerCall: 2, videoLookupsPerCall: 12 } });
    }
    return walk;
  };

  it('walks every listing form over several pages and reports each of the channel’s videos once', async () => {
    const { videos: found, pages, cursors, progress } = await walkOnce();
    const foundIds = found.map((entry) => entry.videoId);
    expect(new Set(foundIds).size).toBe(foundIds.length);
    expect([...foundIds].sort()).toEqual([...expected].sort());
    expect(pages).toBeGreaterThan(5);
    expect(progress.at(-1)).toBe(1);
    for (let i = 1; i < progress.length; i++) expect(progress[i]!).toBeGreaterThanOrEqual(progress[i - 1]!);
    for (const cursor of cursors) expect(cursor.length).toBeLessThan(8_000);
    expect(decodeCursor(cursors[0]!).f).toEqual(listingForms(record));

    const byId = new Map(found.map((entry) => [entry.videoId, entry]));
    const first = byId.get(ids[0]!)!;
    // Video 0 has a 2014-style watch page only; video 10 a 2020s one with caption tracks.
    expect(first).toMatchObject({
      channelId: channel.channelId,
      title: 'Lister video 0',
      description: 'About lister-0',
      durationSeconds: 120,
      viewCount: 1000,
      uploadDate: '2016-05-01',
      tags: ['lister-0'],
      availability: 'unknown',
    });
    expect(byId.get(ids[10]!)).toMatchObject({
      title: 'Lister video 10',
      uploadDate: '2016-05-11',
      captions: [
        { language: 'en', kind: 'manual' },
        { language: 'en', kind: 'auto' },
      ],
    });
    expect(first.archiveUrl).toMatch(/^https:\/\/web\.archive\.org\/web\/\d{14}\/https:\/\/www\.youtube\.com\/watch\?v=/);
    expect(first.evidenceUrl).toBe(first.archiveUrl);
    // The newest capture is used when it has metadata.
    expect(byId.get(ids[1]!)!.archiveUrl).toBe(`https://web.archive.org/web/${ts(2017, 2, 1)}/https://www.youtube.com/watch?v=${ids[1]}`);
    expect(byId.get(listingOnly.videoId)).toEqual({
      videoId: listingOnly.videoId,
      channelId: channel.channelId,
      title: 'Only the listing knows me',
      durationSeconds: 253,
      evidenceUrl: `https://web.archive.org/web/${ts(2016, 7)}/https://www.youtube.com/channel/${channel.channelId}/videos`,
      availability: 'unknown',
    });
    // Only listing pages were read, each distinct capture once.
    const reads = wayback
      .requests()
      .filter(
        (entry) =>
          entry.target === 'web' &&
          !entry.path.includes('watch') &&
          !entry.path.includes('shorts') &&
          !entry.path.includes('embed') &&
          !entry.path.includes('youtu.be'),
      );
    expect(reads.some((entry) => entry.path.includes('/about'))).toBe(false);
    expect(reads.some((entry) => entry.path.includes(channel.channelId.toUpperCase()))).toBe(false);
    expect(reads.filter((entry) => entry.path.includes(ts(2016, 9)))).toHaveLength(0); // same digest as 2016-08
  });

  it('recovers a deleted video from an older capture when the newer ones are notices', async () => {
    const { videos: found } = await walkOnce();
    const entry = found.find((item) => item.videoId === deleted.videoId)!;
    expect(entry).toMatchObject({
      title: 'Deleted later',
      description: `About deleted-later`,
      availability: 'unknown',
      uploadDate: '2016-05-04',
    });
    expect(entry.archiveUrl).toBe(`https://web.archive.org/web/${ts(2016, 9)}/https://www.youtube.com/watch?v=${deleted.videoId}`);
  });

  it('reports a video with only removal notices as deleted, pointing at the newest notice', async () => {
    const { videos: found } = await walkOnce();
    expect(found.find((item) => item.videoId === onlyNotices.videoId)).toEqual({
      videoId: onlyNotices.videoId,
      channelId: channel.channelId,
      title: `Video ${onlyNotices.videoId}`,
      archiveUrl: `https://web.archive.org/web/${ts(2019, 1)}/https://www.youtube.com/watch?v=${onlyNotices.videoId}`,
      evidenceUrl: `https://web.archive.org/web/${ts(2019, 1)}/https://www.youtube.com/watch?v=${onlyNotices.videoId}`,
      availability: 'deleted',
      // Gone when the capture was made, not when it was read.
      observedAt: '2019-01-01T12:00:00Z',
      // The notice as the Wayback answered it, kept as evidence with the capture's timestamp and CDX digest.
      capture: {
        said: expect.stringContaining(ts(2019, 1)),
        answer: expect.objectContaining({ status: 200, url: expect.stringContaining(`/web/${ts(2019, 1)}id_/`) }),
        wayback: { timestamp: ts(2019, 1), digest: expect.stringMatching(/^[A-Z2-7]{32}$/) },
      },
    });
  });

  it('bounds the work of one call', async () => {
    wayback.resetCounts();
    const page = await source({ pageSize: 25, limits: { listingCapturesPerCall: 3, videoLookupsPerCall: 5 } }).listVideos(
      record,
      undefined,
    );
    expect(page.next).toBeDefined();
    expect(page.videos.length).toBeLessThanOrEqual(5);
    const listingReads = wayback.requests().filter((entry) => entry.target === 'web' && /\/(?:channel|@|user)/.test(entry.path));
    expect(listingReads.length).toBeLessThanOrEqual(3);
    expect(wayback.requestCount).toBeLessThan(40);
  });
});

describe('index quirks', () => {
  it('every row printed twice, and pages cut short by the scan budget (empty ones with a key) do not lose videos', async () => {
    const quirky: ChannelFixture = { channelId: fakeChannelId('quirky'), title: 'Quirky', handle: '@quirky' };
    const list = Array.from({ length: 12 }, (_, index) => video(quirky, `quirky-${index}`));
    list.forEach((entry) => wayback.addVideo(entry, [{ timestamp: ts(2019, 5) }]));
    // Redirect captures the status filter drops, before and between the listings.
    for (let i = 0; i < 8; i++)
      wayback.addCapture({
        url: `https://www.youtube.com/channel/${quirky.channelId}/videos`,
        timestamp: ts(2018, 1, i + 1),
        status: 301,
        location: `https://www.youtube.com/channel/${quirky.channelId}/videos?view=0`,
      });
    for (let i = 0; i < 4; i++) {
      wayback.addListing(quirky, {
        timestamp: ts(2019, 6 + i),
        form: 'channel',
        tab: '/videos',
        videoIds: list.slice(i * 3, i * 3 + 3).map((entry) => entry.videoId),
      });
      wayback.addCapture({
        url: `https://www.youtube.com/channel/${quirky.channelId}/videos`,
        timestamp: ts(2019, 6 + i, 15),
        status: 302,
        location: 'https://consent.youtube.com/m',
      });
    }
    wayback.setOptions({ duplicateRows: true, scanLimit: 3 });
    try {
      wayback.resetCounts();
      const { videos: found } = await listAll({ channelId: quirky.channelId }, { pageSize: 2, limits: { cdxPagesPerCall: 2 } });
      expect(found.map((entry) => entry.videoId).sort()).toEqual(list.map((entry) => entry.videoId).sort());
      const listingPages = wayback.requests().filter((entry) => entry.target === 'cdx' && entry.params?.matchType === 'prefix');
      expect(listingPages.some((entry) => entry.rows === 0 && entry.resumeKey)).toBe(true);
    } finally {
      wayback.setOptions({ duplicateRows: false, scanLimit: undefined });
    }
  });
});

describe('failures', () => {
  const channel: ChannelFixture = { channelId: fakeChannelId('flaky'), title: 'Flaky', handle: '@flaky' };
  beforeAll(() => {
    wayback.addListing(channel, { timestamp: ts(2020, 1), form: 'channel', tab: '/videos', videoIds: [fakeVideoId('flaky-1')] });
    wayback.addVideo(video(channel, 'flaky-1'), [{ timestamp: ts(2020, 2) }]);
  });

  it('retries 503 and 429 from the CDX, then succeeds', async () => {
    wayback.resetCounts();
    wayback.failNext(1, 503, 'cdx');
    wayback.failNext(1, 429, 'cdx');
    expect(await source().resolveChannel({ kind: 'channelId', channelId: channel.channelId })).toMatchObject({
      channelId: channel.channelId,
      title: 'Flaky',
    });
    const cdx = wayback.requests().filter((entry) => entry.target === 'cdx');
    expect(cdx.slice(0, 3).map((entry) => entry.failure ?? entry.status)).toEqual(['status', 'status', 200]);
  });

  it('retries a capture that hangs past the timeout', async () => {
    wayback.failNext(1, 'hang', 'web');
    const page = await source({ fetchOptions: { ...FAST, timeoutMs: 500 } }).listVideos({ channelId: channel.channelId }, undefined);
    expect(page.videos.map((entry) => entry.videoId)).toEqual([fakeVideoId('flaky-1')]);
  });

  it('persistent failure is a TransientError, from resolveChannel and from listVideos', async () => {
    wayback.failNext(1_000, 503);
    await expect(source().resolveChannel({ kind: 'channelId', channelId: channel.channelId })).rejects.toBeInstanceOf(TransientError);
    await expect(source().listVideos({ channelId: channel.channelId }, undefined)).rejects.toBeInstanceOf(TransientError);
    for (const failure of ['reset', 'stall', 'hang'] as const) {
      wayback.clearFailures();
      wayback.failNext(1_000, failure);
      await expect(
        source({ fetchOptions: { ...FAST, timeoutMs: 150, retries: 1 } }).listVideos({ channelId: channel.channelId }, undefined),
      ).rejects.toBeInstanceOf(TransientError);
    }
  });

  it('a lookup failing mid-page keeps the page’s other results and retries that video on the next call', async () => {
    const many: ChannelFixture = { channelId: fakeChannelId('midpage'), title: 'Mid', handle: '@midpage' };
    const list = Array.from({ length: 6 }, (_, index) => video(many, `mid-${index}`));
    list.forEach((entry) => wayback.addVideo(entry, [{ timestamp: ts(2020, 3) }]));
    wayback.addListing(many, { timestamp: ts(2020, 4), form: 'channel', tab: '/videos', videoIds: list.map((entry) => entry.videoId) });
    const wb = source({ limits: { concurrency: 1 } });
    const broken = list[2]!.videoId;
    wayback.failNext(1_000, 503, 'cdx', broken);
    const first = await wb.listVideos({ channelId: many.channelId }, undefined);
    expect(first.videos.map((entry) => entry.videoId)).toEqual([list[0]!.videoId, list[1]!.videoId]);
    expect(first.next).toBeDefined();
    // The failed lookup waits at the back of the queue, its failure counted.
    expect(decodeCursor(first.next!).p.at(-1)).toMatchObject({ i: broken, r: 1 });
    wayback.clearFailures();
    const rest: VideoRecord[] = [];
    let cursor = first.next;
    for (let calls = 0; cursor && calls < 10; calls++) {
      const page = await wb.listVideos({ channelId: many.channelId }, cursor);
      rest.push(...page.videos);
      cursor = page.next;
    }
    expect(rest.map((entry) => entry.videoId).sort()).toEqual(
      list
        .slice(2)
        .map((entry) => entry.videoId)
        .sort(),
    );
  });

  it('a video the archive keeps failing on is reported from its listing after a few calls', async () => {
    const stubborn: ChannelFixture = { channelId: fakeChannelId('stubborn'), title: 'Stubborn' };
    const only = video(stubborn, 'stubborn-1');
    wayback.addVideo(only, [{ timestamp: ts(2020, 3) }]);
    wayback.addListing(stubborn, {
      timestamp: ts(2020, 4),
      form: 'channel',
      tab: '/videos',
      videoIds: [only.videoId],
      titles: { [only.videoId]: 'From the listing' },
    });
    wayback.failNext(10_000, 503, 'cdx', only.videoId);
    const wb = source({ fetchOptions: { ...FAST, retries: 0 } });
    const found: VideoRecord[] = [];
    let cursor: string | undefined;
    let calls = 0;
    do {
      const page = await wb.listVideos({ channelId: stubborn.channelId }, cursor).catch((error: unknown) => {
        if (error instanceof TransientError) return { videos: [], next: cursor };
        throw error;
      });
      found.push(...page.videos);
      cursor = page.next;
      calls++;
    } while (cursor && calls < 10);
    expect(found).toEqual([
      {
        videoId: only.videoId,
        channelId: stubborn.channelId,
        title: 'From the listing',
        durationSeconds: 253,
        evidenceUrl: `https://web.archive.org/web/${ts(2020, 4)}/https://www.youtube.com/channel/${stubborn.channelId}/videos`,
        availability: 'unknown',
      },
    ]);
  });
});

describe('scale', () => {
  it('walks a channel of 600 videos in bounded pages', async () => {
    const big: ChannelFixture = { channelId: fakeChannelId('big'), title: 'Big', handle: '@bigchannel' };
    const list = Array.from({ length: 600 }, (_, index) => video(big, `big-${index}`, { description: '' }));
    list.forEach((entry, index) => wayback.addVideo(entry, [{ timestamp: ts(2018, (index % 12) + 1, 2) }]));
    for (let i = 0; i < 20; i++)
      wayback.addListing(big, {
        timestamp: ts(2018 + Math.floor(i / 12), (i % 12) + 1, 3),
        form: 'channel',
        tab: '/videos',
        videoIds: list.slice(i * 30, i * 30 + 30).map((entry) => entry.videoId),
      });
    const { videos: found, pages } = await listAll(
      { channelId: big.channelId, handle: '@bigchannel' },
      { limits: { concurrency: 8, videoLookupsPerCall: 100, listingCapturesPerCall: 25 } },
    );
    expect(found).toHaveLength(600);
    expect(new Set(found.map((entry) => entry.videoId)).size).toBe(600);
    expect(pages).toBeGreaterThanOrEqual(6);
  });
});

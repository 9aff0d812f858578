import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DefiniteError, TransientError } from '../../core/sources/httpErrors.ts';
import type { VideoRecord } from '../../core/sources/types.ts';
import { createYoutubeApiSource } from '../../core/sources/youtubeApi.ts';
import { decodeCursor, encodeCursor } from '../../core/sources/youtubeApi/cursor.ts';
import {
  bestThumbnail,
  channelFromApi,
  channelsFromSearch,
  isTransientApiError,
  listItems,
  listPage,
  parseApiError,
  playlistItemVideoId,
  uploadsPlaylistFromChannelId,
  uploadsPlaylistOf,
  videoFromApi,
  videoFromPlaylistItem,
  videosFromSearch,
} from '../../core/sources/youtubeApiParse.ts';
import { decodeEntities as decodeHtmlEntities } from '../../core/text/entities.ts';
import { parseIsoDuration } from '../../core/youtube/isoDuration.ts';
import { describeReal, itReal } from '../kit/describeReal.ts';
import { realFixture } from '../kit/realFixtures.ts';
import { generatedVideoId, isoDuration, start, type YoutubeApiServer } from '../kit/servers/youtube-api-server.ts';

const fixture = (relative: string): any => JSON.parse(readFileSync(realFixture(relative), 'utf8'));
const fixtureText = (relative: string): string => readFileSync(realFixture(relative), 'utf8');

/** Dotted paths of an object's keys, arrays entered through their first element. */
function keyPaths(value: unknown, depth: number, prefix = ''): string[] {
  if (depth === 0 || value === null || typeof value !== 'object') return [];
  const target = Array.isArray(value) ? value[0] : value;
  if (target === null || typeof target !== 'object') return [];
  return Object.entries(target as Record<string, unknown>).flatMap(([key, inner]) => [
    `${prefix}${key}`,
    ...keyPaths(inner, depth - 1, `${prefix}${key}.`),
  ]);
}

describeReal('parsing real Data API responses', () => {
  it('channels.list of one channel (customUrl is the handle)', () => {
    const items = listItems(fixture('python-youtube/apidata/channels/info.json'));
    expect(items).toHaveLength(1);
    const channel = channelFromApi(items[0]);
    expect(channel).toMatchObject({
      channelId: 'UC_x5XG1OV2P6uZZ5FSM9Ttw',
      title: 'Google Developers',
      handle: '@googledevelopers',
      country: 'US',
      channelStatus: 'live',
      avatarUrl: 'https://yt3.ggpht.com/ytc/AMLnZu-oDvWEJ-WfN9bgxQB2YAlnjC2uqN_c7JQZvX9Ikfg=s800-c-k-c0x00ffffff-no-rj',
    });
    expect(channel?.description).toMatch(/^The Google Developers channel features talks/);
    // No statistics part in this answer: the counts are unknown, not zero.
    expect(channel?.subscriberCount).toBeUndefined();
    expect(channel?.videoCount).toBeUndefined();
  });

  it('channels.list of two channels with contentDetails, statistics and brandingSettings', () => {
    const items = listItems(fixture('python-youtube/apidata/channels/info_multiple.json'));
    const [google, developers] = items.map((item) => channelFromApi(item));
    expect(google).toMatchObject({
      channelId: 'UCK8sQmJBp8GCxrOtXWBpyEA',
      title: 'Google',
      handle: '@google',
      subscriberCount: 10_700_000,
      videoCount: 2678,
      bannerUrl: 'https://yt3.ggpht.com/C7C_rceG0_dgSK1uRXoM6s1wCiOwDpsc_bJLELECJ7dVrNZNMhub9la_nhAL6aKpkdR0Z91d',
    });
    expect(google?.country).toBeUndefined();
    expect(developers).toMatchObject({
      channelId: 'UC_x5XG1OV2P6uZZ5FSM9Ttw',
      subscriberCount: 2_260_000,
      videoCount: 5652,
      country: 'US',
    });
    expect(items.map(uploadsPlaylistOf)).toEqual(['UUK8sQmJBp8GCxrOtXWBpyEA', 'UU_x5XG1OV2P6uZZ5FSM9Ttw']);
    // The UC → UU rule listVideos relies on holds for both.
    expect(items.map((item) => uploadsPlaylistFromChannelId(String(item.id)))).toEqual(items.map(uploadsPlaylistOf));
  });

  it('channels.list of a handle (3Blue1Brown, 2024)', () => {
    const items = listItems(fixture('thoroldvix-youtube-transcript-api/api_v3_responses/channel_response.json'));
    expect(channelFromApi(items[0])).toMatchObject({
      channelId: 'UCYO_jab_esuFRV4b17AJtAw',
      title: '3Blue1Brown',
      handle: '@3blue1brown',
      country: 'US',
    });
    expect(uploadsPlaylistOf(items[0])).toBe('UUYO_jab_esuFRV4b17AJtAw');
  });

  it('playlistItems.list paging: nextPageToken, totalResults, entries', () => {
    const first = listPage(fixture('python-youtube/apidata/playlist_items/playlist_items_paged_1.json'));
    const second = listPage(fixture('python-youtube/apidata/playlist_items/playlist_items_paged_2.json'));
    expect({ items: first.items.length, next: first.nextPageToken, total: first.totalResults }).toEqual({
      items: 10,
      next: 'CAoQAA',
      total: 13,
    });
    expect({ items: second.items.length, next: second.nextPageToken, total: second.totalResults }).toEqual({
      items: 3,
      next: undefined,
      total: 13,
    });
    expect(playlistItemVideoId(first.items[0])).toBe('CvTApw9X8aA');
    expect(videoFromPlaylistItem(first.items[0], 'UC_x5XG1OV2P6uZZ5FSM9Ttw')).toMatchObject({
      videoId: 'CvTApw9X8aA',
      channelId: 'UC_x5XG1OV2P6uZZ5FSM9Ttw',
      title: 'Welcome from Google Developers - Pittsburgh ML Summit \u201819',
      uploadDate: '2019-11-21',
      thumbnailUrl: 'https://i.ytimg.com/vi/CvTApw9X8aA/maxresdefault.jpg',
      availability: 'deleted',
    });
    expect(second.items.map(playlistItemVideoId)[0]).toBe('6aSG8SdvkoU');
  });

  it('playlistItems.list of 2024: one page at a time, then a single page', () => {
    const base = 'thoroldvix-youtube-transcript-api/api_v3_responses/';
    const one = listPage(fixture(`${base}playlist_page_one.json`));
    const two = listPage(fixture(`${base}playlist_page_two.json`));
    const single = listPage(fixture(`${base}playlist_single_page.json`));
    expect(one.nextPageToken).toMatch(/^EAAajgFQVDpD/);
    expect(two.nextPageToken).toBeUndefined();
    expect(single.nextPageToken).toBeUndefined();
    expect([...one.items, ...two.items].map(playlistItemVideoId)).toEqual(['8idr1WZ1A7Q', 'ZA4JkHKZM50']);
    expect(single.items.map(playlistItemVideoId)).toEqual(['8idr1WZ1A7Q', 'ZA4JkHKZM50']);
    expect(one.totalResults).toBe(2);
    expect(videoFromPlaylistItem(two.items[0], 'UCYO_jab_esuFRV4b17AJtAw', 'unknown')).toMatchObject({
      title: 'Why \u201cprobability of 0\u201d does not mean \u201cimpossible\u201d | Probabilities of probabilities, part 2',
      channelId: 'UCYO_jab_esuFRV4b17AJtAw',
      availability: 'unknown',
      uploadDate: '2020-04-12',
    });
  });

  it('videos.list with snippet, contentDetails, status and statistics', () => {
    const [item] = listItems(fixture('python-youtube/modeldata/videos/video_api_response.json'));
    const video = videoFromApi(item);
    expect(video).toMatchObject({
      videoId: 'D-lhorsDlUQ',
      channelId: 'UC_x5XG1OV2P6uZZ5FSM9Ttw',
      title: 'What are Actions on Google (Assistant on Air)',
      durationSeconds: 21 * 60 + 7,
      viewCount: 7920,
      uploadDate: '2019-03-21',
      thumbnailUrl: 'https://i.ytimg.com/vi/D-lhorsDlUQ/maxresdefault.jpg',
      language: 'en',
      availability: 'live',
    });
    expect(video?.tags).toHaveLength(20);
    expect(video?.tags?.[0]).toBe('Google');
    expect(video?.description).toMatch(/^In the first episode of Assistant on Air/);
  });

  it('videos.list of two ids, snippet only', () => {
    const videos = listItems(fixture('python-youtube/apidata/videos/videos_info_multi.json')).map((item) => videoFromApi(item));
    expect(videos.map((video) => video?.videoId)).toEqual(['D-lhorsDlUQ', 'ovdbrdCIP7U']);
    for (const video of videos) {
      expect(video?.durationSeconds).toBeUndefined();
      expect(video?.viewCount).toBeUndefined();
      expect(video?.language).toBeDefined();
      expect(video?.uploadDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
  });

  it('search.list for channels: match and no match', () => {
    const base = 'thoroldvix-youtube-transcript-api/api_v3_responses/';
    const hits = channelsFromSearch(fixture(`${base}channel_search_response.json`));
    expect(hits).toHaveLength(5);
    expect(hits[0]).toEqual({ channelId: 'UCYO_jab_esuFRV4b17AJtAw', title: '3Blue1Brown' });
    const misses = channelsFromSearch(fixture(`${base}channel_search_no_match.json`));
    expect(misses.map((hit) => hit.channelId)).not.toContain('UCYO_jab_esuFRV4b17AJtAw');
    // The first hit of a search is a look-alike here: the source never takes it on trust.
    expect(misses[0]?.title).toBe('3Blue1BrownJapan');
  });

  it('search.list titles come HTML-escaped and are decoded', () => {
    const response = fixture('python-youtube/apidata/search/search_videos_by_channel.json');
    expect(JSON.stringify(response)).toContain('YouTube&#39;s API and The News');
    const titles = videosFromSearch(response).map((video) => video.title);
    expect(titles).toContain("YouTube's API and The News");
    expect(titles.join('\n')).not.toMatch(/&#39;|&amp;|&quot;/);
  });

  it('the 403 permission error body: a definite refusal with its message', () => {
    const body = fixtureText('python-youtube/apidata/error_permission_resp.json');
    expect(parseApiError(body)).toEqual({
      code: 403,
      message: 'The caller does not have permission',
      reasons: ['SERVICE_UNAVAILABLE'],
      status: 'PERMISSION_DENIED',
    });
    expect(isTransientApiError(403, body)).toBe(false);
  });
});

describe('small parsers', () => {
  it.each([
    ['PT21M7S', 1267],
    ['P1DT2H3M4S', 93_784],
    ['PT0S', 0],
    ['P0D', 0],
    ['PT1H', 3_600],
    ['PT1H0M1S', 3_601],
    ['PT45S', 45],
    ['PT10M', 600],
    ['P2D', 172_800],
    ['P1W', 604_800],
    ['PT1.6S', 2],
    ['pt5m', 300],
    ['PT', undefined],
    ['P', undefined],
    ['P1DT', undefined],
    ['P1Y', undefined],
    ['P1M', undefined],
    ['21:07', undefined],
    ['', undefined],
    [undefined, undefined],
    [1267, undefined],
  ])('duration %j → %j seconds', (input, seconds) => {
    expect(parseIsoDuration(input)).toBe(seconds);
  });

  it('durations the test server writes read back the same', () => {
    for (const seconds of [0, 1, 59, 60, 61, 3_599, 3_600, 3_661, 86_399, 86_400, 93_784, 200_000]) {
      expect(parseIsoDuration(isoDuration(seconds))).toBe(seconds);
    }
  });

  it.each([
    ['YouTube&#39;s API and The News', "YouTube's API and The News"],
    ['Tom &amp; Jerry', 'Tom & Jerry'],
    ['&quot;quoted&quot;', '"quoted"'],
    ['&lt;b&gt; &#x41;&#66;', '<b> AB'],
    ['&amp;#39;', '&#39;'],
    ['no entities', 'no entities'],
    ['&unknown; & alone', '&unknown; & alone'],
  ])('entities %j → %j', (input, output) => {
    expect(decodeHtmlEntities(input)).toBe(output);
  });

  it('best thumbnail by width, then by name', () => {
    expect(bestThumbnail({ default: { url: 'a', width: 120 }, high: { url: 'c', width: 480 }, medium: { url: 'b', width: 320 } })).toBe(
      'c',
    );
    expect(bestThumbnail({ default: { url: 'a' }, medium: { url: 'b' }, high: { url: 'c' } })).toBe('c');
    expect(bestThumbnail({})).toBeUndefined();
    expect(bestThumbnail(undefined)).toBeUndefined();
  });

  it('quota and rate-limit 403s are transient, others are not', () => {
    const body = (reason: string) =>
      JSON.stringify({ error: { code: 403, message: 'm', errors: [{ reason, domain: 'd', message: 'm' }] } });
    expect(isTransientApiError(403, body('quotaExceeded'))).toBe(true);
    expect(isTransientApiError(403, body('rateLimitExceeded'))).toBe(true);
    expect(isTransientApiError(403, body('userRateLimitExceeded'))).toBe(true);
    expect(isTransientApiError(403, body('forbidden'))).toBe(false);
    expect(isTransientApiError(400, body('quotaExceeded'))).toBe(false);
    expect(isTransientApiError(200, '{"items": []}')).toBe(false);
    expect(isTransientApiError(403, '<html>not json</html>')).toBe(false);
  });

  it('cursors round-trip, and a bare page token is accepted', () => {
    expect(decodeCursor(encodeCursor({ pageToken: 'CDIQAA', fetched: 50 }))).toEqual({ pageToken: 'CDIQAA', fetched: 50 });
    expect(decodeCursor(encodeCursor({ pageToken: 'a+b/c=', fetched: 0, playlistId: 'UUx' }))).toEqual({
      pageToken: 'a+b/c=',
      fetched: 0,
      playlistId: 'UUx',
    });
    expect(decodeCursor('CDIQAA')).toEqual({ pageToken: 'CDIQAA' });
    expect(decodeCursor(undefined)).toEqual({ fetched: 0 });
  });
});

// ---------------------------------------------------------------------------------------------
// Against the local Data API server
// ---------------------------------------------------------------------------------------------

const MAIN = 'UCafterimageTestChannel1';
const EMPTY = 'UCafterimageEmptyChanne1';
const GONE = 'UCafterimageGoneChannel1';
const MATH_JP = 'UCmathcraftJapanChannel1';
const MATH = 'UCmathcraftOfficialChan1';
const TOMS = 'UCtomsWorkshopChannel001';
const PRIVATE_EXTRA = 'privateVid1';
const fast = { timeoutMs: 300, retries: 2, minDelayMs: 5, maxDelayMs: 20 };

let server: YoutubeApiServer;
const source = (apiKey = server.apiKey) => createYoutubeApiSource({ apiKey, baseUrl: server.url, fetchOptions: fast });

beforeAll(async () => {
  server = await start({ apiKey: 'sekrit-test-key-4Qz' });
  server.createChannel({
    channelId: MAIN,
    handle: '@AfterimageTest',
    title: 'Afterimage Test',
    description: 'A channel for tests.',
    username: 'afterimagelegacy',
    country: 'NL',
    subscriberCount: 4_321,
    bannerUrl: 'https://yt3.ggpht.com/banner-afterimage',
    videoCount: 120,
    deleted: [generatedVideoId(MAIN, 7)],
    private: [PRIVATE_EXTRA],
  });
  server.createChannel({ channelId: EMPTY, handle: '@emptychannel', title: 'Nothing Here', videoCount: 0 });
  server.createChannel({ channelId: GONE, handle: '@gonechannel', title: 'Gone Soon', videoCount: 3 });
  server.createChannel({ channelId: MATH_JP, handle: '@mathcraftjapan', title: 'Mathcraft', videoCount: 1 });
  server.createChannel({ channelId: MATH, handle: '@mathcraft', title: 'Mathcraft Official', videoCount: 1 });
  server.createChannel({ channelId: TOMS, handle: '@tomsworkshop2', title: "Tom's Workshop", videoCount: 1 });
});
afterAll(async () => {
  await server?.close();
});
beforeEach(() => {
  server.clearFailures();
  server.resetCounts();
});

describe('the local server answers in the real shapes', () => {
  const get = async (endpoint: string, params: Record<string, string>) => {
    const url = new URL(`${server.url}/${endpoint}`);
    for (const [name, value] of Object.entries({ ...params, key: server.apiKey })) url.searchParams.set(name, value);
    const response = await fetch(url);
    return { status: response.status, body: (await response.json()) as any };
  };

  itReal('has every field of the recorded responses', async () => {
    const pairs: Array<[string, any, any]> = [
      [
        'channels',
        fixture('python-youtube/apidata/channels/info_multiple.json'),
        (await get('channels', { part: 'snippet,contentDetails,statistics,brandingSettings', id: MAIN })).body,
      ],
      [
        'playlistItems',
        fixture('thoroldvix-youtube-transcript-api/api_v3_responses/playlist_page_one.json'),
        (await get('playlistItems', { part: 'snippet', playlistId: `UU${MAIN.slice(2)}`, maxResults: '1' })).body,
      ],
      [
        'videos',
        fixture('python-youtube/modeldata/videos/video_api_response.json'),
        (await get('videos', { part: 'snippet,contentDetails,status,statistics', id: generatedVideoId(MAIN, 1) })).body,
      ],
      [
        'search',
        fixture('thoroldvix-youtube-transcript-api/api_v3_responses/channel_search_response.json'),
        (await get('search', { part: 'snippet', type: 'channel', q: 'mathcraft', maxResults: '1' })).body,
      ],
    ];
    // Fields the recorded answers have that this dataset does not model.
    const unmodelled =
      /brandingSettings\.channel\.(keywords|trackingAnalyticsAccountId|unsubscribedTrailer)|statistics\.dislikeCount|\.etag$/;
    for (const [name, real, local] of pairs) {
      const localPaths = new Set(keyPaths(local, 5));
      const missing = keyPaths(real, 5).filter((key) => !localPaths.has(key) && !unmodelled.test(key));
      expect({ name, missing }).toEqual({ name, missing: [] });
    }
  });

  it('pages with protobuf tokens like the real ones, omits unknown ids, checks parameters', async () => {
    const first = await get('playlistItems', { part: 'snippet', playlistId: `UU${MAIN.slice(2)}`, maxResults: '10' });
    expect(first.body.nextPageToken).toBe('CAoQAA');
    const second = await get('playlistItems', { part: 'snippet', playlistId: `UU${MAIN.slice(2)}`, maxResults: '10', pageToken: 'CAoQAA' });
    expect(second.body.prevPageToken).toBe('CAoQAQ');
    expect(second.body.items[0].snippet.position).toBe(10);
    const videos = await get('videos', { part: 'id', id: `${generatedVideoId(MAIN, 0)},nonexistent,${PRIVATE_EXTRA}` });
    expect(videos.body.items.map((item: any) => item.id)).toEqual([generatedVideoId(MAIN, 0)]);
    expect((await get('channels', { part: 'id', forHandle: '@nobody' })).body).not.toHaveProperty('items');
    expect((await get('playlistItems', { part: 'id', playlistId: 'UUnope', maxResults: '51' })).status).toBe(400);
    expect((await get('playlistItems', { part: 'id', playlistId: 'UUnope' })).body.error.errors[0].reason).toBe('playlistNotFound');
    expect(server.counts()).toMatchObject({ playlistItems: 4, videos: 1, channels: 1 });
  });
});

describe('resolveChannel', () => {
  it('by handle, with every field channels.list gives', async () => {
    const channel = await source().resolveChannel({ kind: 'handle', handle: '@AfterimageTest' });
    expect(channel).toEqual({
      channelId: MAIN,
      channelStatus: 'live',
      title: 'Afterimage Test',
      handle: '@afterimagetest',
      description: 'A channel for tests.',
      avatarUrl: expect.stringMatching(/=s800-/),
      bannerUrl: 'https://yt3.ggpht.com/banner-afterimage',
      subscriberCount: 4_321,
      // 120 generated, one of them deleted; the private extra entry is not counted either.
      videoCount: 119,
      country: 'NL',
    });
    expect(server.requests()).toEqual([
      {
        endpoint: 'channels',
        params: { part: 'snippet,contentDetails,statistics,brandingSettings', forHandle: '@AfterimageTest' },
        status: 200,
      },
    ]);
  });

  it('by channel id, legacy username and video', async () => {
    const api = source();
    expect((await api.resolveChannel({ kind: 'channelId', channelId: MAIN }))?.title).toBe('Afterimage Test');
    expect((await api.resolveChannel({ kind: 'user', name: 'afterimagelegacy' }))?.channelId).toBe(MAIN);
    expect((await api.resolveChannel({ kind: 'video', videoId: generatedVideoId(MAIN, 3) }))?.channelId).toBe(MAIN);
    expect(server.counts()).toMatchObject({ channels: 3, videos: 1, search: 0 });
    expect(server.requests().map((entry) => entry.params.forUsername ?? entry.params.id)).toEqual([
      MAIN,
      'afterimagelegacy',
      generatedVideoId(MAIN, 3),
      MAIN,
    ]);
    expect(api.quotaUnitsUsed).toBe(4);
  });

  it('by custom URL: an exact customUrl beats an exact title that ranks first', async () => {
    const api = source();
    expect((await api.resolveChannel({ kind: 'customUrl', name: 'Mathcraft' }))?.channelId).toBe(MATH);
    expect(server.counts()).toMatchObject({ search: 1, channels: 1 });
    const [search, channels] = server.requests();
    expect(search?.params).toMatchObject({ type: 'channel', q: 'Mathcraft' });
    expect(channels?.params.id?.split(',').sort()).toEqual([MATH, MATH_JP].sort());
    expect(api.quotaUnitsUsed).toBe(101);
  });

  it('by custom URL: an exact title (case, spaces, punctuation ignored) when no customUrl matches', async () => {
    expect((await source().resolveChannel({ kind: 'customUrl', name: 'TomsWorkshop' }))?.channelId).toBe(TOMS);
  });

  it('unknown channels are undefined, not errors', async () => {
    const api = source();
    expect(await api.resolveChannel({ kind: 'handle', handle: '@nobodyhere' })).toBeUndefined();
    expect(await api.resolveChannel({ kind: 'channelId', channelId: 'UCxxxxxxxxxxxxxxxxxxxxxx' })).toBeUndefined();
    expect(await api.resolveChannel({ kind: 'user', name: 'nobody' })).toBeUndefined();
    expect(await api.resolveChannel({ kind: 'video', videoId: 'xxxxxxxxxxx' })).toBeUndefined();
    expect(await api.resolveChannel({ kind: 'video', videoId: PRIVATE_EXTRA })).toBeUndefined();
    // No search hit at all: the handle lookup of the name is the last resort.
    expect(await api.resolveChannel({ kind: 'customUrl', name: 'zzzunknownzzz' })).toBeUndefined();
    expect(server.counts()).toMatchObject({ search: 1, channels: 4, videos: 2 });
  });
});

describe('listVideos', () => {
  async function listAll(channelId: string) {
    const api = source();
    const pages: Array<{ videos: VideoRecord[]; next?: string; progress?: number }> = [];
    let cursor: string | undefined;
    do {
      const page = await api.listVideos({ channelId }, cursor);
      pages.push(page);
      cursor = page.next;
    } while (cursor && pages.length < 20);
    return { pages, videos: pages.flatMap((page) => page.videos), api };
  }

  it('pages through 121 uploads, 50 at a time: 3 playlistItems.list and 3 videos.list calls', async () => {
    const { pages, videos, api } = await listAll(MAIN);
    expect(pages.map((page) => page.videos.length)).toEqual([50, 50, 21]);
    expect(server.counts()).toEqual({ channels: 0, search: 0, playlistItems: 3, videos: 3, other: 0 });
    expect(api.quotaUnitsUsed).toBe(6);
    expect(pages.map((page) => page.progress)).toEqual([50 / 121, 100 / 121, 1]);
    expect(pages[2]?.next).toBeUndefined();
    expect(new Set(videos.map((video) => video.videoId)).size).toBe(121);

    for (const entry of server.requests()) {
      if (entry.endpoint === 'playlistItems')
        expect(entry.params).toMatchObject({ part: 'contentDetails,snippet', playlistId: `UU${MAIN.slice(2)}`, maxResults: '50' });
      else expect(entry.params.part).toBe('snippet,contentDetails,statistics,status');
    }
    expect(
      server
        .requests()
        .filter((entry) => entry.endpoint === 'videos')
        .map((entry) => entry.params.id?.split(',').length),
    ).toEqual([50, 50, 21]);

    // Every live video as videos.list describes it.
    const live = videos.filter((video) => video.availability === 'live');
    expect(live).toHaveLength(119);
    for (const video of live) {
      const stored = server.video(video.videoId)!;
      expect(video).toMatchObject({
        channelId: MAIN,
        title: stored.title,
        description: stored.description,
        durationSeconds: parseIsoDuration(stored.duration),
        viewCount: stored.viewCount,
        uploadDate: stored.publishedAt.slice(0, 10),
        language: stored.defaultAudioLanguage ?? stored.defaultLanguage,
        thumbnailUrl: `https://i.ytimg.com/vi/${video.videoId}/${stored.hd ? 'maxresdefault' : 'hqdefault'}.jpg`,
      });
      expect(video.tags).toEqual(stored.tags);
    }
    // Titles from videos.list are raw: nothing to decode, nothing decoded.
    expect(live.find((video) => video.title?.startsWith('Q&A'))?.title).toMatch(/^Q&A #\d+: "what's next" <live>$/);
    expect(live.some((video) => video.durationSeconds === 93_784)).toBe(true);
  });

  it('reports deleted and private uploads as deleted, with what the playlist knows', async () => {
    const { videos } = await listAll(MAIN);
    const gone = videos.filter((video) => video.availability === 'deleted');
    expect(gone.map((video) => video.videoId).sort()).toEqual([generatedVideoId(MAIN, 7), PRIVATE_EXTRA].sort());
    for (const video of gone) {
      expect(video.channelId).toBe(MAIN);
      // "Deleted video" / "Private video" are placeholders, not titles.
      expect(video.title).toBeUndefined();
      expect(video.description).toBeUndefined();
      expect(video.thumbnailUrl).toBeUndefined();
      expect(video.uploadDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
    // In playlist order, between their neighbours.
    const order = videos.map((video) => video.videoId);
    expect(order.indexOf(generatedVideoId(MAIN, 7))).toBe(7);
  });

  it('a channel without uploads (the playlist answers 404) or one that is gone gives an empty page', async () => {
    const empty = await source().listVideos({ channelId: EMPTY }, undefined);
    expect(empty).toEqual({ videos: [], progress: 1 });
    expect(server.counts()).toMatchObject({ playlistItems: 1, channels: 1, videos: 0 });
    server.deleteChannel(GONE);
    expect(await source().listVideos({ channelId: GONE }, undefined)).toEqual({ videos: [], progress: 1 });
  });

  it('accepts a bare page token as cursor, without progress until the end', async () => {
    const page = await source().listVideos({ channelId: MAIN }, 'CGQQAA'); // offset 100
    expect(page.videos).toHaveLength(21);
    expect(page.next).toBeUndefined();
    expect(page.progress).toBe(1);
  });

  it('an invalid page token is a definite error', async () => {
    const error = await source()
      .listVideos({ channelId: MAIN }, 'not-a-token')
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DefiniteError);
    expect((error as DefiniteError).status).toBe(400);
    expect((error as Error).message).toMatch(/playlistItems\.list answered 400 \(invalidPageToken: /);
  });
});

describe('failures', () => {
  it('retries a 500, then succeeds', async () => {
    server.failNext(2, 500);
    expect((await source().resolveChannel({ kind: 'channelId', channelId: MAIN }))?.channelId).toBe(MAIN);
    expect(server.requests().map((entry) => entry.status)).toEqual([500, 500, 200]);
  });

  it('retries quotaExceeded and rate limits (403), then succeeds', async () => {
    server.failNext(1, 'quotaExceeded');
    server.failNext(1, 'rateLimitExceeded');
    const page = await source().listVideos({ channelId: MAIN }, undefined);
    expect(page.videos).toHaveLength(50);
    expect(server.requests().map((entry) => [entry.endpoint, entry.status])).toEqual([
      ['playlistItems', 403],
      ['playlistItems', 403],
      ['playlistItems', 200],
      ['videos', 200],
    ]);
  });

  it('retries userRateLimitExceeded on videos.list', async () => {
    server.failNext(1, 'userRateLimitExceeded', 'videos');
    expect((await source().listVideos({ channelId: MAIN }, undefined)).videos).toHaveLength(50);
    expect(server.counts()).toMatchObject({ playlistItems: 1, videos: 2 });
  });

  it('a hang past the timeout is retried', async () => {
    server.failNext(1, 'hang');
    const started = Date.now();
    expect((await source().resolveChannel({ kind: 'handle', handle: '@AfterimageTest' }))?.channelId).toBe(MAIN);
    expect(Date.now() - started).toBeGreaterThanOrEqual(fast.timeoutMs - 20);
    expect(server.counts().channels).toBe(2);
  });

  it('a body that stalls past the timeout, or a reset connection, is retried', async () => {
    server.failNext(1, 'stall');
    server.failNext(1, 'reset');
    expect((await source().resolveChannel({ kind: 'channelId', channelId: MAIN }))?.channelId).toBe(MAIN);
    expect(server.counts().channels).toBe(3);
  });

  it('a persistent 500 ends in a TransientError after the retries, without the key', async () => {
    server.failNext(10, 503);
    const error = await source()
      .resolveChannel({ kind: 'channelId', channelId: MAIN })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TransientError);
    expect((error as TransientError).status).toBe(503);
    expect((error as Error).message).toMatch(/^YouTube Data API channels\.list: /);
    expect((error as Error).message).not.toContain(server.apiKey);
    expect(server.counts().channels).toBe(fast.retries + 1);
  });

  it('a persistent hang ends in a TransientError', async () => {
    server.failNext(10, 'stall');
    const error = await source()
      .resolveChannel({ kind: 'channelId', channelId: MAIN })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TransientError);
    expect(server.counts().channels).toBe(fast.retries + 1);
  });

  it('a persistent quotaExceeded ends in a TransientError that says so', async () => {
    server.failNext(10, 'quotaExceeded');
    const error = await source()
      .listVideos({ channelId: MAIN }, undefined)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TransientError);
    expect((error as TransientError).status).toBe(403);
    expect((error as Error).message).toBe(
      'YouTube Data API playlistItems.list: quotaExceeded: The request cannot be completed because you have exceeded your quota.',
    );
  });

  it('the daily quota of the server runs out like the real one', async () => {
    server.setQuotaLimit(server.quotaUsed() + 1);
    try {
      expect(await source().resolveChannel({ kind: 'channelId', channelId: MAIN })).toBeDefined();
      await expect(source().resolveChannel({ kind: 'channelId', channelId: MAIN })).rejects.toBeInstanceOf(TransientError);
    } finally {
      server.setQuotaLimit(undefined);
    }
  });

  it('an invalid key is a DefiniteError at once, with the API message and without the key', async () => {
    const wrongKey = 'AIzaWrongKey-do-not-print-1234';
    const error = await source(wrongKey)
      .resolveChannel({ kind: 'handle', handle: '@AfterimageTest' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DefiniteError);
    expect((error as DefiniteError).status).toBe(400);
    expect((error as Error).message).toBe(
      'YouTube Data API channels.list answered 400 (keyInvalid: API key not valid. Please pass a valid API key.)',
    );
    expect(`${(error as Error).message} ${(error as Error).stack}`).not.toContain(wrongKey);
    expect(server.counts().channels).toBe(1);
  });

  it('other 4xx are definite too (listVideos of something that is not a channel id)', async () => {
    await expect(source().listVideos({ channelId: 'not-a-channel' }, undefined)).rejects.toBeInstanceOf(DefiniteError);
    expect(server.counts().playlistItems).toBe(0);
  });

  it('an abort from the caller is passed through, not retried', async () => {
    server.failNext(1, 'hang');
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('stop')), 50);
    const error = await source()
      .resolveChannel({ kind: 'channelId', channelId: MAIN }, controller.signal)
      .catch((caught: unknown) => caught);
    expect(error).not.toBeInstanceOf(TransientError);
    expect((error as Error).message).toBe('stop');
    expect(server.counts().channels).toBe(1);
  });

  it('needs a key', () => {
    expect(() => createYoutubeApiSource({ apiKey: '', baseUrl: server.url })).toThrow(/API key/);
  });
});

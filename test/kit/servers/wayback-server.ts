/**
 * A local stand-in for the Wayback Machine: the CDX index (/cdx/search/cdx) and capture replay
 * (/web/<timestamp>[id_]/<original>), answering from an in-memory set of captures.
 *
 * CDX, as the recorded real answers (shared/fixtures/real/edgi-wayback) and the CDX server's README
 * show it: url + matchType exact|prefix (or a trailing `*`), SURT url keys (host reversed, `www.`
 * dropped, query sorted, all lower-cased, so ids differing only in case share a key), `fl`, any
 * number of `filter=[!]field:regex` (whole-field Java-style match), `collapse=field[:N]` on adjacent
 * rows, `from`/`to`, `limit` (negative: the last N), `showResumeKey`/`resumeKey` (the key printed
 * URL-encoded after a blank line, or as `[]`, `[key]` in JSON), default space-separated text or
 * `output=json` with a header row, a 403 "Blocked Site Error" for blocked URLs. Paging by `page=`
 * is not offered (answers 400, as the real server does where no secondary index exists).
 * Quirks on demand: every row twice (overlapping indexes) and a scan budget per request that ends
 * pages early, empty ones included, with a resume key ("filters apply after paging").
 *
 * Replay: `id_` gives the original bytes; without a flag the page gets a toolbar and rewritten image
 * URLs. A timestamp without an exact capture redirects to the nearest one; redirect captures answer
 * 302 to the archived target. Not archived: 404.
 *
 * Dataset helpers build pages the way YouTube served them: watch pages embedding
 * `var ytInitialPlayerResponse = {...};` shaped like the real player responses (videoDetails,
 * microformat.playerMicroformatRenderer, captions), 2014-style watch pages (schema.org meta tags,
 * eow-description, ytplayer.config), removal notices (modern player error and legacy
 * unavailable-message), channel pages (ytInitialData channelMetadataRenderer and video renderers, or
 * the 2014 channels4 HTML), terminated-channel notices.
 *
 * Failure injection: the next K requests (to the CDX, to replay, or any) answer a status, hang,
 * stall after the headers, or have their connection reset.
 */
import { cdxDigest } from '../../../core/sources/wayback/cdxDigest.ts';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { escapeHtml } from '../../../core/text/escapeHtml.ts';
import {
  botCheckHtml,
  playerResponse,
  removalPlayer,
  scriptJson,
  watchPageHtml,
  type PlayerVideo,
} from '../../../core/youtube/watchPageHtml.ts';

// The 2020s watch pages are shared with the demo's recorded source (core/youtube/watchPageHtml.ts).
export { botCheckHtml, playerResponse, watchPageHtml } from '../../../core/youtube/watchPageHtml.ts';
export type VideoFixture = PlayerVideo;

// ---------------------------------------------------------------------------------------------
// Index
// ---------------------------------------------------------------------------------------------

const CDX_FIELDS = ['urlkey', 'timestamp', 'original', 'mimetype', 'statuscode', 'digest', 'length'] as const;
type Field = (typeof CDX_FIELDS)[number];

interface CaptureSeed {
  /** The URL as captured, e.g. "https://www.youtube.com/watch?v=…". */
  url: string;
  /** 14 digits. */
  timestamp: string;
  status?: number;
  mimetype?: string;
  /** Text of a page, or the bytes of an image (replayed with `im_`). */
  body?: string | Buffer;
  /** For 3xx captures: where the page redirected. */
  location?: string;
  /** A warc/revisit row ("-" status) replaying the previous capture of the URL. */
  revisit?: boolean;
}

interface Stored {
  urlkey: string;
  timestamp: string;
  original: string;
  mimetype: string;
  statuscode: string;
  digest: string;
  length: string;
  body: string | Buffer;
  status: number;
  location?: string;
}

/** SURT-style key of the CDX: "com,youtube)/watch?v=abc" (lower-cased, www. dropped, query sorted). */
function surtKey(raw: string): string {
  let value = raw.trim();
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) value = `http://${value}`;
  const url = new URL(value);
  const host = url.hostname.toLowerCase().replace(/^www\d*\./, '');
  const query = url.search.length > 1 ? `?${url.search.slice(1).split('&').filter(Boolean).sort().join('&')}` : '';
  return `${host.split('.').reverse().join(',')})${url.pathname || '/'}${query}`.toLowerCase();
}

/** A 14-digit timestamp: ts(2015, 3, 2) → "20150302120000". */
export function ts(year: number, month = 1, day = 1, hms = '120000'): string {
  return `${year}${String(month).padStart(2, '0')}${String(day).padStart(2, '0')}${hms}`;
}

// ---------------------------------------------------------------------------------------------
// Page builders
// ---------------------------------------------------------------------------------------------

/** A 2014 watch page: schema.org microdata, Open Graph, eow-title/eow-description, ytplayer.config. */
export function legacyWatchPageHtml(video: VideoFixture, options: { user?: string } = {}): string {
  const t = escapeHtml(video.title);
  const length = video.lengthSeconds ?? 253;
  const duration = `PT${Math.floor(length / 60)}M${length % 60}S`;
  const date = video.uploadDate ?? '2014-03-02';
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const monthName = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][m - 1];
  const views = video.viewCount ?? 1234;
  const owner = options.user ? `http://www.youtube.com/user/${options.user}` : `http://www.youtube.com/channel/${video.channelId}`;
  const description = escapeHtml(video.description ?? '').replace(/\n/g, '<br />');
  const args = {
    video_id: video.videoId,
    title: video.title,
    length_seconds: String(length),
    ucid: video.channelId,
    author: video.author ?? 'someone',
    view_count: String(views),
    keywords: (video.keywords ?? []).join(','),
  };
  return `<!DOCTYPE html><html lang="en" data-cast-api-enabled="true"><head><script>var ytcsi = {};</script>
<title>${t} - YouTube</title><link rel="canonical" href="http://www.youtube.com/watch?v=${video.videoId}">
<meta name="title" content="${t}"><meta name="description" content="${escapeHtml((video.description ?? '').slice(0, 150))}">
<meta name="keywords" content="${escapeHtml((video.keywords ?? []).join(', '))}">
<meta property="og:site_name" content="YouTube"><meta property="og:url" content="http://www.youtube.com/watch?v=${video.videoId}">
<meta property="og:title" content="${t}"><meta property="og:image" content="https://i1.ytimg.com/vi/${video.videoId}/hqdefault.jpg">
${(video.keywords ?? []).map((tag) => `<meta property="og:video:tag" content="${escapeHtml(tag)}">`).join('')}
</head><body id="" class="date-20140302 en_US ltr">
<div id="player-unavailable" class="  player-width player-height    player-unavailable  hid"><div class="content"><h1 id="unavailable-message" class="message"></h1><div id="unavailable-submessage" class="submessage"></div></div></div>
<div id="watch7-content" class="watch-main-col " itemscope itemid="" itemtype="http://schema.org/VideoObject">
<link itemprop="url" href="http://www.youtube.com/watch?v=${video.videoId}"><meta itemprop="name" content="${t}"><meta itemprop="description" content="${escapeHtml((video.description ?? '').slice(0, 150))}">
<meta itemprop="paid" content="False"><meta itemprop="channelId" content="${video.channelId}"><meta itemprop="videoId" content="${video.videoId}">
<meta itemprop="duration" content="${duration}"><meta itemprop="unlisted" content="False">
<span itemprop="author" itemscope itemtype="http://schema.org/Person"><link itemprop="url" href="${owner}"></span>
<link itemprop="thumbnailUrl" href="https://i1.ytimg.com/vi/${video.videoId}/hqdefault.jpg">
<meta itemprop="datePublished" content="${date}"><meta itemprop="interactionCount" content="${views}">
<div id="watch-headline-title"><h1 class="yt watch-title-container"><span id="eow-title" class="watch-title " dir="ltr" title="${t}">${t}</span></h1></div>
<div class="watch-view-count">${views.toLocaleString('en-US')}</div>
<div id="watch-uploader-info"><strong class="watch-time-text">Published on ${monthName} ${d}, ${y}</strong></div>
<div id="watch-description-text" class=""><p id="eow-description" >${description}</p></div>
</div>
<script>var ytplayer = ytplayer || {};ytplayer.config = ${scriptJson({ attrs: { id: 'movie_player' }, args })};ytplayer.load = function() {yt.player.Application.create("player-api", ytplayer.config);};</script>
</body></html>`;
}

/** A removal notice page: 'modern' (player error, 2019+) or 'legacy' (unavailable-message, 2010-2018). */
export function removalNoticeHtml(reason: string, style: 'modern' | 'legacy' = 'modern'): string {
  if (style === 'modern') return watchPageHtml(removalPlayer(reason));
  return `<!DOCTYPE html><html lang="en"><head><title>YouTube</title><meta name="title" content="YouTube"><link rel="search" type="application/opensearchdescription+xml" href="http://www.youtube.com/opensearch?locale=en_US" title="YouTube Video Search"></head><body class="date-20150101 en_US ltr">
<div id="player-unavailable" class="  player-width player-height    player-unavailable "><img class="icon meh" src="//s.ytimg.com/yts/img/meh7-vflGevej7.png" alt=""><div class="content"><h1 id="unavailable-message" class="message">
            ${escapeHtml(reason)}
    </h1><div id="unavailable-submessage" class="submessage">
        Sorry about that.
    </div></div></div>
<div id="watch7-sidebar-modules"><a href="/watch?v=zzzzzzzzzzz" class="content-link"><span class="title">Some related video</span></a></div></body></html>`;
}

export interface ChannelFixture {
  channelId: string;
  title: string;
  /** "@name" */
  handle?: string;
  /** legacy youtube.com/user/NAME */
  user?: string;
  /** youtube.com/c/NAME */
  customName?: string;
  description?: string;
  avatarUrl?: string;
}

export interface ListingSeed {
  timestamp: string;
  /** Under which URL the page was captured. */
  form?: 'channel' | 'handle' | 'user' | 'c';
  /** '' (home), '/videos', '/featured', '/streams', '/shorts' … */
  tab?: string;
  videoIds: string[];
  /** Titles by id (default "Video <id>"). */
  titles?: Record<string, string>;
  /** Videos of other channels on the page (home page shelves), with their channel. */
  foreign?: Array<{ videoId: string; channelId: string }>;
  style?: 'modern' | 'legacy';
}

function listingUrl(channel: ChannelFixture, form: ListingSeed['form'] = 'channel', tab = ''): string {
  switch (form) {
    case 'handle':
      if (!channel.handle) throw new Error('channel has no handle');
      return `https://www.youtube.com/${channel.handle}${tab}`;
    case 'user':
      if (!channel.user) throw new Error('channel has no legacy user');
      return `http://www.youtube.com/user/${channel.user}${tab}`;
    case 'c':
      if (!channel.customName) throw new Error('channel has no custom name');
      return `https://www.youtube.com/c/${channel.customName}${tab}`;
    default:
      return `https://www.youtube.com/channel/${channel.channelId}${tab}`;
  }
}

/** A channel page (home or a tab) in the 2020s layout or the 2014 channels4 layout. */
export function channelPageHtml(channel: ChannelFixture, listing: Omit<ListingSeed, 'timestamp'>): string {
  const title = escapeHtml(channel.title);
  const avatar = channel.avatarUrl ?? `https://yt3.ggpht.com/ytc/${channel.channelId.slice(2, 12)}=s900-c-k-c0x00ffffff-no-rj`;
  const titleOf = (id: string) => listing.titles?.[id] ?? `Video ${id}`;
  const canonical = channel.handle ? `https://www.youtube.com/${channel.handle}` : `https://www.youtube.com/channel/${channel.channelId}`;
  if (listing.style === 'legacy') {
    const items = listing.videoIds
      .map(
        (id) =>
          `<li class="channels-content-item yt-shelf-grid-item"><div class="yt-lockup clearfix yt-lockup-video yt-lockup-grid" data-context-item-id="${id}"><div class="yt-lockup-thumbnail"><a href="/watch?v=${id}" class="yt-uix-sessionlink spf-link" aria-hidden="true"><img src="//i.ytimg.com/vi/${id}/mqdefault.jpg" width="196"></a></div><div class="yt-lockup-content"><h3 class="yt-lockup-title"><a class="yt-uix-sessionlink yt-uix-tile-link spf-link yt-ui-ellipsis yt-ui-ellipsis-2" dir="ltr" title="${escapeHtml(titleOf(id))}" href="/watch?v=${id}">${escapeHtml(titleOf(id))}</a></h3></div></div></li>`,
      )
      .join('\n');
    const legacyCanonical = channel.user
      ? `http://www.youtube.com/user/${channel.user}`
      : `http://www.youtube.com/channel/${channel.channelId}`;
    return `<!DOCTYPE html><html lang="en"><head><title>${title} - YouTube</title><meta name="title" content="${title}"><meta name="description" content="${escapeHtml(channel.description ?? '')}"><link rel="canonical" href="${legacyCanonical}"><meta property="og:title" content="${title}"><meta property="og:image" content="${avatar}"><meta itemprop="channelId" content="${channel.channelId}"></head><body class="date-20140301 en_US ltr">
<div id="c4-primary-header-contents" class="primary-header-contents clearfix" data-channel-external-id="${channel.channelId}"><h1 class="branded-page-header-title"><span class="qualified-channel-title-text"><a dir="ltr" href="/user/${channel.user ?? ''}" class="spf-link branded-page-header-title-link yt-uix-sessionlink" title="${title}">${title}</a></span></h1></div>
<ul id="channels-browse-content-grid" class="channels-browse-content-grid">${items}</ul></body></html>`;
  }
  const renderer = (id: string, owner?: string) => ({
    richItemRenderer: {
      content: {
        videoRenderer: {
          videoId: id,
          thumbnail: { thumbnails: [{ url: `https://i.ytimg.com/vi/${id}/hqdefault.jpg`, width: 480, height: 270 }] },
          title: { runs: [{ text: titleOf(id) }], accessibility: { accessibilityData: { label: `${titleOf(id)} 4 minutes` } } },
          lengthText: { simpleText: '4:13' },
          navigationEndpoint: { watchEndpoint: { videoId: id } },
          ...(owner
            ? {
                shortBylineText: {
                  runs: [
                    {
                      text: 'Another channel',
                      navigationEndpoint: { browseEndpoint: { browseId: owner, canonicalBaseUrl: `/channel/${owner}` } },
                    },
                  ],
                },
              }
            : {}),
        },
      },
    },
  });
  const contents = [
    ...listing.videoIds.map((id) => renderer(id)),
    ...(listing.foreign ?? []).map((entry) => renderer(entry.videoId, entry.channelId)),
  ];
  const initialData = {
    contents: {
      twoColumnBrowseResultsRenderer: {
        tabs: [
          { tabRenderer: { title: listing.tab?.replace('/', '') || 'Home', selected: true, content: { richGridRenderer: { contents } } } },
        ],
      },
    },
    header: {
      c4TabbedHeaderRenderer: {
        channelId: channel.channelId,
        title: channel.title,
        avatar: { thumbnails: [{ url: avatar, width: 176, height: 176 }] },
      },
    },
    metadata: {
      channelMetadataRenderer: {
        title: channel.title,
        description: channel.description ?? '',
        rssUrl: `https://www.youtube.com/feeds/videos.xml?channel_id=${channel.channelId}`,
        externalId: channel.channelId,
        keywords: '',
        ownerUrls: [channel.handle ? `http://www.youtube.com/${channel.handle}` : `http://www.youtube.com/channel/${channel.channelId}`],
        avatar: { thumbnails: [{ url: avatar, width: 900, height: 900 }] },
        channelUrl: `https://www.youtube.com/channel/${channel.channelId}`,
        isFamilySafe: true,
        vanityChannelUrl: channel.handle
          ? `http://www.youtube.com/${channel.handle}`
          : channel.user
            ? `http://www.youtube.com/user/${channel.user}`
            : `http://www.youtube.com/channel/${channel.channelId}`,
      },
    },
  };
  return `<!DOCTYPE html><html lang="en"><head><title>${title} - YouTube</title><meta property="og:title" content="${title}"><meta property="og:image" content="${avatar}"><meta property="og:description" content="${escapeHtml(channel.description ?? '')}"><link rel="canonical" href="${canonical}"><meta property="og:url" content="${canonical}"></head><body><script nonce="n">var ytInitialData = ${scriptJson(initialData)};</script></body></html>`;
}

/** A terminated-channel page. */
function terminatedChannelHtml(): string {
  return `<!DOCTYPE html><html lang="en"><head><title>YouTube</title></head><body><div class="channel-empty-message banner-message"><p>This account has been terminated due to multiple or severe violations of YouTube's policy prohibiting hate speech.</p></div></body></html>`;
}

// ---------------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------------

type Failure =
  | { type: 'status'; status: number; body?: string }
  /** No answer at all until the client gives up. */
  | { type: 'hang' }
  /** Headers and half a body, then silence. */
  | { type: 'stall' }
  /** The connection is destroyed without an answer. */
  | { type: 'reset' };

type Target = 'cdx' | 'web';

interface RequestLogEntry {
  target: Target | 'other';
  /** CDX: the query; replay: the path. */
  params?: Record<string, string | string[]>;
  path: string;
  status?: number;
  /** CDX: rows printed (duplicates included). */
  rows?: number;
  /** CDX: whether a resume key was printed. */
  resumeKey?: boolean;
  failure?: Failure['type'];
}

interface WatchCaptureSpec {
  timestamp: string;
  /** metadata (default), a removal notice, or an archived bot check. */
  kind?: 'metadata' | 'removed' | 'botcheck';
  reason?: string;
  style?: 'modern' | 'legacy';
  /** Which URL form was captured. */
  form?: 'watch' | 'shorts' | 'embed';
  /** Use this URL instead (e.g. "http://www.youtube.com:80/watch?v=…&feature=related"). */
  url?: string;
}

export interface StartOptions {
  /** Every CDX row printed twice (the real index has overlapping shards). */
  duplicateRows?: boolean;
  /** Raw index rows one CDX request looks at before it stops and prints a resume key. */
  scanLimit?: number;
}

export interface WaybackServer {
  /** http://127.0.0.1:PORT */
  url: string;
  cdxUrl: string;
  captureBaseUrl: string;
  close(): Promise<void>;
  addCapture(seed: CaptureSeed): void;
  /** Captures of a video's watch page (or shorts/embed) over time. */
  addVideo(video: VideoFixture, captures: WatchCaptureSpec[]): void;
  /** A capture of one of a channel's listing pages. */
  addListing(channel: ChannelFixture, listing: ListingSeed): void;
  /** A terminated-channel notice captured at the channel's URL. */
  addTerminatedChannelPage(channel: ChannelFixture, timestamp: string, form?: ListingSeed['form']): void;
  /** CDX queries for URLs under this prefix answer 403 "Blocked Site Error". */
  block(urlPrefix: string): void;
  /** The next `times` requests (to the CDX, to replay, or any; whose decoded URL contains `match`) fail like this. */
  failNext(times: number, failure: Failure | Failure['type'] | number, target?: Target, match?: string): void;
  clearFailures(): void;
  readonly requestCount: number;
  counts(): Record<Target | 'other', number>;
  requests(): readonly RequestLogEntry[];
  resetCounts(): void;
  setOptions(options: StartOptions): void;
}

function toFailure(spec: Failure | Failure['type'] | number): Failure {
  if (typeof spec === 'number') return { type: 'status', status: spec };
  if (typeof spec === 'string') return spec === 'status' ? { type: 'status', status: 503 } : ({ type: spec } as Failure);
  return spec;
}

function compileFilter(spec: string): ((row: Stored) => boolean) | undefined {
  const match = /^(!?)([a-z]+):(.*)$/i.exec(spec);
  if (!match) return undefined;
  const [, negate, field, pattern] = match;
  if (!(CDX_FIELDS as readonly string[]).includes(field!)) return undefined;
  const regex = new RegExp(`^(?:${pattern})$`);
  return (row) => regex.test(row[field as Field]) !== (negate === '!');
}

/** The printed resume key: "urlkey timestamp!" form-encoded (past every row at that position). */
function resumeKeyAfter(row: Stored): string {
  return encodeURIComponent(`${row.urlkey} ${row.timestamp}!`).replace(/%20/g, '+');
}

function decodeResumeKey(key: string): string {
  try {
    return decodeURIComponent(key.replace(/\+/g, ' '));
  } catch {
    return key;
  }
}

export async function start(startOptions: StartOptions = {}): Promise<WaybackServer> {
  let options: StartOptions = { ...startOptions };
  const byKey = new Map<string, Stored[]>();
  let sortedKeys: string[] = [];
  let keysDirty = false;
  const blocked: string[] = [];
  const failures: Array<{ failure: Failure; remaining: number; target?: Target; match?: string }> = [];
  let log: RequestLogEntry[] = [];
  const sockets = new Set<Socket>();

  function insert(stored: Stored): void {
    let list = byKey.get(stored.urlkey);
    if (!list) {
      list = [];
      byKey.set(stored.urlkey, list);
      keysDirty = true;
    }
    let at = list.length;
    while (at > 0 && list[at - 1]!.timestamp > stored.timestamp) at--;
    list.splice(at, 0, stored);
  }

  function addCapture(seed: CaptureSeed): void {
    if (!/^\d{14}$/.test(seed.timestamp)) throw new Error(`timestamp must have 14 digits: ${seed.timestamp}`);
    const urlkey = surtKey(seed.url);
    let body: string | Buffer = seed.body ?? '';
    let status = seed.status ?? 200;
    if (seed.revisit) {
      const previous = (byKey.get(urlkey) ?? []).filter((row) => row.timestamp < seed.timestamp).pop();
      if (!previous) throw new Error('a revisit needs an earlier capture of the same URL');
      body = previous.body;
      status = previous.status;
    }
    insert({
      urlkey,
      timestamp: seed.timestamp,
      original: seed.url,
      mimetype: seed.revisit ? 'warc/revisit' : (seed.mimetype ?? 'text/html'),
      statuscode: seed.revisit ? '-' : String(status),
      digest: cdxDigest(body),
      length: String(300 + Math.floor(body.length / 4)),
      body,
      status,
      ...(seed.location ? { location: seed.location } : {}),
    });
  }

  function keys(): string[] {
    if (keysDirty) {
      sortedKeys = [...byKey.keys()].sort();
      keysDirty = false;
    }
    return sortedKeys;
  }

  function* rowsFor(key: string, prefix: boolean): Generator<Stored> {
    if (!prefix) {
      yield* byKey.get(key) ?? [];
      return;
    }
    const all = keys();
    let lo = 0;
    let hi = all.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (all[mid]! < key) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < all.length && all[i]!.startsWith(key); i++) yield* byKey.get(all[i]!) ?? [];
  }

  function answerCdx(params: URLSearchParams, res: ServerResponse, entry: RequestLogEntry): number {
    const url = params.get('url');
    if (!url) return send(res, 400, 'text/plain', 'Missing url param\n');
    if (params.has('page') || params.has('showNumPages')) return send(res, 400, 'text/plain', 'Pagination not supported for this query\n');
    let matchType = params.get('matchType') ?? 'exact';
    let target = url;
    if (target.endsWith('*')) {
      matchType = 'prefix';
      target = target.slice(0, -1);
    }
    let key: string;
    try {
      key = surtKey(target);
    } catch {
      return send(res, 400, 'text/plain', 'Bad url\n');
    }
    if (blocked.some((prefix) => key.startsWith(prefix))) {
      res.setHeader(
        'X-Archive-Wayback-Runtime-Error',
        'org.archive.util.io.RuntimeIOException: org.archive.wayback.exception.AdministrativeAccessControlException: Blocked Site Error',
      );
      return send(
        res,
        403,
        'text/plain;charset=UTF-8',
        'org.archive.util.io.RuntimeIOException: org.archive.wayback.exception.AdministrativeAccessControlException: Blocked Site Error\n',
      );
    }
    const fl = (params.get('fl') ?? CDX_FIELDS.join(','))
      .split(',')
      .filter((field): field is Field => (CDX_FIELDS as readonly string[]).includes(field));
    const filters: Array<(row: Stored) => boolean> = [];
    for (const spec of params.getAll('filter')) {
      try {
        const filter = compileFilter(spec);
        if (filter) filters.push(filter);
      } catch {
        return send(res, 400, 'text/plain', `Bad filter ${spec}\n`);
      }
    }
    const collapses = params.getAll('collapse').map((spec) => {
      const [field, n] = spec.split(':');
      return { field: field as Field, n: n ? Number(n) : undefined, last: undefined as string | undefined };
    });
    const from = params.get('from')?.padEnd(14, '0');
    const to = params.get('to')?.padEnd(14, '9');
    const limitParam = params.get('limit');
    const limit = limitParam !== null && limitParam !== '' ? Number(limitParam) : undefined;
    const showResumeKey = params.get('showResumeKey') === 'true';
    const resumeAt = params.get('resumeKey') ? decodeResumeKey(params.get('resumeKey')!) : undefined;
    const scanLimit = options.scanLimit;

    const out: Stored[] = [];
    let resumeKey: string | undefined;
    let scanned = 0;
    let lastScanned: Stored | undefined;
    const iterator = rowsFor(key, matchType === 'prefix');
    for (let step = iterator.next(); !step.done; step = iterator.next()) {
      const row = step.value;
      if (resumeAt !== undefined && `${row.urlkey} ${row.timestamp}` < resumeAt) continue;
      if (limit !== undefined && limit > 0 && out.length >= limit) {
        // More rows follow the page: is one of them a match? (The real server prints the key either way.)
        if (showResumeKey) resumeKey = resumeKeyAfter(out[out.length - 1]!);
        break;
      }
      if (scanLimit !== undefined && scanned >= scanLimit) {
        if (showResumeKey && lastScanned) resumeKey = resumeKeyAfter(lastScanned);
        break;
      }
      scanned++;
      lastScanned = row;
      if (from && row.timestamp < from) continue;
      if (to && row.timestamp > to) continue;
      if (!filters.every((filter) => filter(row))) continue;
      let collapsed = false;
      for (const collapse of collapses) {
        const value = collapse.n ? row[collapse.field]?.slice(0, collapse.n) : row[collapse.field];
        if (value !== undefined && value === collapse.last) collapsed = true;
        collapse.last = value;
      }
      if (collapsed) continue;
      out.push(row);
    }
    let rows = out;
    if (limit !== undefined && limit < 0) {
      rows = out.slice(limit);
      resumeKey = undefined;
    }
    const printed = options.duplicateRows ? rows.flatMap((row) => [row, row]) : rows;
    entry.rows = printed.length;
    entry.resumeKey = !!resumeKey;
    if (params.get('output') === 'json') {
      if (printed.length === 0 && !resumeKey) return send(res, 200, 'application/json', '[]\n');
      const lines = [JSON.stringify(fl), ...printed.map((row) => JSON.stringify(fl.map((field) => row[field])))];
      if (resumeKey) lines.push('[]', JSON.stringify([resumeKey]));
      return send(res, 200, 'application/json', `[${lines.join(',\n')}]\n`);
    }
    let text = printed.map((row) => fl.map((field) => row[field]).join(' ')).join('\n');
    if (text) text += '\n';
    if (resumeKey) text += `\n${resumeKey}\n`;
    return send(res, 200, 'text/plain;charset=UTF-8', text);
  }

  function answerReplay(rawPath: string, res: ServerResponse): number {
    const match = /^\/web\/(\d{1,14})([a-z]{2}_)?\/(.+)$/.exec(rawPath);
    if (!match) return send(res, 400, 'text/html', '<html><body>Bad replay URL</body></html>');
    const [, stamp, flag = '', original] = match as unknown as [string, string, string | undefined, string];
    let key: string;
    try {
      key = surtKey(original);
    } catch {
      return send(res, 400, 'text/html', '<html><body>Bad URL</body></html>');
    }
    const captures = byKey.get(key);
    if (!captures?.length)
      return send(res, 404, 'text/html', '<html><body><p>Wayback Machine has not archived that URL.</p></body></html>');
    const wanted = Number(stamp.padEnd(14, '0'));
    let nearest = captures[0]!;
    for (const capture of captures)
      if (Math.abs(Number(capture.timestamp) - wanted) < Math.abs(Number(nearest.timestamp) - wanted)) nearest = capture;
    if (nearest.timestamp !== stamp) {
      res.setHeader('Location', `/web/${nearest.timestamp}${flag}/${nearest.original}`);
      return send(res, 302, 'text/html', '');
    }
    if (nearest.location) {
      const target = new URL(
        nearest.location,
        nearest.original.startsWith('http') ? nearest.original : `http://${nearest.original}`,
      ).toString();
      res.setHeader('Location', `/web/${nearest.timestamp}${flag}/${target}`);
      return send(res, nearest.status >= 300 && nearest.status < 400 ? nearest.status : 302, 'text/html', '');
    }
    let body = nearest.body;
    if (!flag && typeof body === 'string') {
      body = body.replace(/https:\/\/i\d?\.ytimg\.com\//g, (host) => `https://web.archive.org/web/${nearest.timestamp}im_/${host}`);
      body = body.replace(
        /<head>/i,
        '<head><script src="//archive.org/includes/analytics.js" type="text/javascript"></script><!-- End Wayback Rewrite JS Include -->',
      );
      body = body.replace(
        /<body([^>]*)>/i,
        '<body$1><!-- BEGIN WAYBACK TOOLBAR INSERT --><div id="wm-ipp-base" lang="en"></div><!-- END WAYBACK TOOLBAR INSERT -->',
      );
    }
    res.setHeader(
      'Memento-Datetime',
      new Date(
        Date.UTC(
          +stamp.slice(0, 4),
          +stamp.slice(4, 6) - 1,
          +stamp.slice(6, 8),
          +stamp.slice(8, 10),
          +stamp.slice(10, 12),
          +stamp.slice(12, 14),
        ),
      ).toUTCString(),
    );
    return send(res, nearest.status, nearest.mimetype === 'warc/revisit' ? 'text/html' : nearest.mimetype, body);
  }

  function send(res: ServerResponse, status: number, type: string, body: string | Buffer): number {
    res.statusCode = status;
    res.setHeader('Content-Type', type);
    res.end(body);
    return status;
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const raw = req.url ?? '/';
    const target: Target | 'other' = raw.startsWith('/cdx/') ? 'cdx' : raw.startsWith('/web/') ? 'web' : 'other';
    const entry: RequestLogEntry = { target, path: raw };
    if (target === 'cdx') {
      const params: Record<string, string | string[]> = {};
      const search = new URL(raw, 'http://local').searchParams;
      for (const name of new Set(search.keys())) {
        const all = search.getAll(name);
        params[name] = all.length > 1 ? all : all[0]!;
      }
      entry.params = params;
    }
    log.push(entry);
    let decoded = raw;
    try {
      decoded = decodeURIComponent(raw);
    } catch {
      // keep the raw form
    }
    const index = failures.findIndex((item) => (!item.target || item.target === target) && (!item.match || decoded.includes(item.match)));
    if (index >= 0) {
      const item = failures[index]!;
      if (--item.remaining <= 0) failures.splice(index, 1);
      entry.failure = item.failure.type;
      switch (item.failure.type) {
        case 'status':
          entry.status = send(
            res,
            item.failure.status,
            'text/html',
            item.failure.body ?? `<html><body><h1>${item.failure.status}</h1>The Wayback Machine is temporarily unavailable.</body></html>`,
          );
          return;
        case 'reset':
          req.socket.destroy();
          return;
        case 'stall':
          res.writeHead(200, { 'Content-Type': 'text/plain' });
          res.write('com,youtube)/ 2015');
          return;
        case 'hang':
          return;
      }
    }
    try {
      if (target === 'cdx' && raw.startsWith('/cdx/search/cdx'))
        entry.status = answerCdx(new URL(raw, 'http://local').searchParams, res, entry);
      else if (target === 'web') entry.status = answerReplay(raw, res);
      else entry.status = send(res, 404, 'text/plain', 'not found\n');
    } catch (error) {
      entry.status = send(res, 500, 'text/plain', `fake wayback error: ${(error as Error).message}\n`);
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}`;

  const watchUrl = (videoId: string, form: WatchCaptureSpec['form'] = 'watch') =>
    form === 'shorts'
      ? `https://www.youtube.com/shorts/${videoId}`
      : form === 'embed'
        ? `https://www.youtube.com/embed/${videoId}`
        : `https://www.youtube.com/watch?v=${videoId}`;

  return {
    url: base,
    cdxUrl: `${base}/cdx/search/cdx`,
    captureBaseUrl: `${base}/web`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    addCapture,
    addVideo(video, captures) {
      for (const capture of captures) {
        const kind = capture.kind ?? 'metadata';
        const body =
          kind === 'removed'
            ? removalNoticeHtml(capture.reason ?? 'This video has been removed by the uploader', capture.style ?? 'modern')
            : kind === 'botcheck'
              ? botCheckHtml()
              : capture.style === 'legacy'
                ? legacyWatchPageHtml(video)
                : watchPageHtml(playerResponse(video));
        addCapture({ url: capture.url ?? watchUrl(video.videoId, capture.form), timestamp: capture.timestamp, body });
      }
    },
    addListing(channel, listing) {
      addCapture({
        url: listingUrl(channel, listing.form, listing.tab ?? ''),
        timestamp: listing.timestamp,
        body: channelPageHtml(channel, listing),
      });
    },
    addTerminatedChannelPage(channel, timestamp, form = 'channel') {
      addCapture({ url: listingUrl(channel, form), timestamp, body: terminatedChannelHtml() });
    },
    block(urlPrefix) {
      blocked.push(surtKey(urlPrefix));
    },
    failNext(times, failure, target, match) {
      failures.push({ failure: toFailure(failure), remaining: times, ...(target ? { target } : {}), ...(match ? { match } : {}) });
    },
    clearFailures() {
      failures.length = 0;
    },
    get requestCount() {
      return log.length;
    },
    counts() {
      const counts: Record<Target | 'other', number> = { cdx: 0, web: 0, other: 0 };
      for (const entry of log) counts[entry.target]++;
      return counts;
    },
    requests: () => log,
    resetCounts() {
      log = [];
    },
    setOptions(next) {
      options = { ...options, ...next };
    },
  };
}

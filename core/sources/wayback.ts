/**
 * The Wayback Machine as a video source.
 *
 * resolveChannel: the newest usable 200 capture of the channel's page (/channel/UC…, /@handle,
 * /user/NAME, /c/NAME; then their /videos and /featured) found through the CDX index and read with
 * the `id_` flag (the original bytes); a video query reads the video's newest non-notice watch capture.
 *
 * listVideos walks the captures of the channel's listing pages, one listing-URL form after another,
 * with the CDX resume key (showResumeKey/resumeKey, as the Wayback's own clients page), collects the
 * video ids those captures link to, and looks every new id up: the captures of its watch page
 * (then shorts/, embed/, youtu.be/), newest first, skipping removal notices to older captures with
 * a bounded bisection. Each call does a bounded amount of work (captures read, videos looked up, a
 * time budget) and returns an opaque cursor holding where it stopped.
 *
 * Ownership: a video is reported only when its watch capture names this channel, or, when nothing
 * archived names its channel, when it was listed on an uploads-only tab (/videos, /streams, /shorts)
 * or under this channel's byline. Videos of other channels on a home page are not reported.
 */
import type { ChannelQuery } from '../youtube/channelQuery.ts';
import { CHANNEL_ID } from '../youtube/channelQuery.ts';
import { DefiniteError, TransientError, fetchText, type FetchOptions } from './http.ts';
import type { ChannelRecord, VideoPage, VideoRecord, VideoSource } from './types.ts';
import {
  CdxFormatError,
  classifyWatchPage,
  extractChannelInfo,
  extractListedVideos,
  parseCdx,
  rowPosition,
  videoIdOfUrl,
  type CdxPage,
  type CdxRow,
  type ChannelPageInfo,
  type RemovalCategory,
  type VideoMeta,
} from './waybackParse.ts';

export interface WaybackLimits {
  /** Listing captures read per listVideos call. */
  listingCapturesPerCall: number;
  /** Videos looked up (CDX + captures) per listVideos call. */
  videoLookupsPerCall: number;
  /** CDX listing pages requested per listVideos call (filters can leave pages empty). */
  cdxPagesPerCall: number;
  /** Watch captures read per video before giving up on older ones. */
  capturesPerVideo: number;
  /** Requests in flight at once. */
  concurrency: number;
  /** No new request is started after this many ms of a call. */
  timeBudgetMs: number;
  /** Video ids remembered in the cursor so later pages skip them (the oldest are forgotten). */
  seenIds: number;
  /** Calls a video's lookup may fail transiently before it is reported from its listing alone. */
  lookupAttempts: number;
}

export const DEFAULT_LIMITS: WaybackLimits = {
  listingCapturesPerCall: 25,
  videoLookupsPerCall: 30,
  cdxPagesPerCall: 4,
  capturesPerVideo: 4,
  concurrency: 4,
  timeBudgetMs: 45_000,
  seenIds: 1_000,
  lookupAttempts: 3,
};

export interface WaybackSourceOptions {
  cdxUrl?: string;
  /** Where captures are read: `{captureBaseUrl}/{timestamp}id_/{original}`. */
  captureBaseUrl?: string;
  /** What archiveUrl/evidenceUrl point to (the public Wayback), whatever captureBaseUrl is. */
  publicCaptureBaseUrl?: string;
  /** Timeouts and retry backoff of every call; `isTransient` is set by this source. */
  fetchOptions?: Omit<FetchOptions, 'isTransient' | 'signal'>;
  /** CDX rows per listing page (the `limit` of each resumed query). */
  pageSize?: number;
  limits?: Partial<WaybackLimits>;
}

export interface WaybackSource extends VideoSource {
  name: 'wayback';
}

// ---------------------------------------------------------------------------------------------
// CDX access
// ---------------------------------------------------------------------------------------------

export interface CdxQuery {
  url: string;
  matchType?: 'exact' | 'prefix';
  output?: 'json' | 'text';
  fl: readonly string[];
  filter?: string[];
  collapse?: string[];
  limit?: number;
  showResumeKey?: boolean;
  resumeKey?: string;
}

export function buildCdxUrl(cdxUrl: string, query: CdxQuery): string {
  const params = new URLSearchParams();
  params.set('url', query.url);
  if (query.matchType && query.matchType !== 'exact') params.set('matchType', query.matchType);
  if (query.output === 'json') params.set('output', 'json');
  params.set('fl', query.fl.join(','));
  for (const filter of query.filter ?? []) params.append('filter', filter);
  for (const collapse of query.collapse ?? []) params.append('collapse', collapse);
  if (query.limit !== undefined) params.set('limit', String(query.limit));
  if (query.showResumeKey) params.set('showResumeKey', 'true');
  // The key goes back exactly as printed (still URL-encoded), so it is encoded once more here.
  if (query.resumeKey) params.set('resumeKey', query.resumeKey);
  return `${cdxUrl}?${params.toString()}`;
}

const BLOCKED = /Blocked Site Error|AdministrativeAccessControlException|RobotAccessControlException/i;

/**
 * One CDX request. 429, 5xx, timeouts and an HTML page instead of an index are transient; a 403
 * "Blocked Site Error" (the URL is excluded from the archive) is a definite empty answer.
 */
export async function queryCdx(cdxUrl: string, query: CdxQuery, fetchOptions: FetchOptions = {}): Promise<CdxPage & { blocked?: boolean }> {
  let body: string;
  try {
    ({ body } = await fetchText(buildCdxUrl(cdxUrl, query), {
      ...fetchOptions,
      isTransient: (status, text) => status === 200 && /^\s*<(?:!doctype|html)/i.test(text),
    }));
  } catch (error) {
    if (error instanceof DefiniteError && error.status === 403) return { rows: [], blocked: true };
    throw error;
  }
  if (BLOCKED.test(body.slice(0, 500))) return { rows: [], blocked: true };
  try {
    return parseCdx(body, query.output === 'json' ? undefined : query.fl);
  } catch (error) {
    if (error instanceof CdxFormatError) throw new TransientError(`${new URL(cdxUrl).host}: ${error.message}`);
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// Cursor
// ---------------------------------------------------------------------------------------------

/** A listing-URL form walked with the CDX: "p:" prefix or "e:" exact match, then the URL. */
type Form = string;

interface PendingVideo {
  /** video id */
  i: string;
  /** 1: listed as this channel's (uploads tab or byline) */
  o?: 1;
  /** title the listing gave */
  t?: string;
  /** duration (s) the listing gave */
  d?: number;
  /** index into CursorState.c: the listing capture it was found in */
  c?: number;
  /** transient failures so far */
  r?: number;
}

interface CursorState {
  v: 1;
  /** listing-URL forms to walk, in order */
  f: Form[];
  /** index of the form being walked */
  i: number;
  /** CDX resume key of the current page of that form (absent on its first page) */
  k?: string;
  /** position ("urlkey timestamp") of the last row of the current page already read */
  a?: string;
  /** ids found but not yet looked up */
  p: PendingVideo[];
  /** ids already queued in this walk, 11 characters each, oldest first */
  s: string;
  /** listing captures ("timestamp original") pending videos were found in */
  c: string[];
  /** digests of the listing captures read last (identical captures under other URLs are skipped) */
  g: string[];
}

const CURSOR_PREFIX = 'wb1.';

export function encodeCursor(state: CursorState): string {
  // Drop listing-capture refs no pending video uses any more, renumbering the rest.
  const used = [...new Set(state.p.map((entry) => entry.c).filter((c): c is number => c !== undefined))].sort((x, y) => x - y);
  const renumber = new Map(used.map((old, index) => [old, index]));
  const compact: CursorState = {
    ...state,
    c: used.map((index) => state.c[index]!),
    p: state.p.map((entry) => (entry.c === undefined ? entry : { ...entry, c: renumber.get(entry.c)! })),
  };
  return CURSOR_PREFIX + Buffer.from(JSON.stringify(compact)).toString('base64url');
}

export function decodeCursor(cursor: string): CursorState {
  const invalid = () => new DefiniteError('not a cursor of the wayback source', 400);
  if (!cursor.startsWith(CURSOR_PREFIX)) throw invalid();
  let state: unknown;
  try {
    state = JSON.parse(Buffer.from(cursor.slice(CURSOR_PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const s = state as Partial<CursorState>;
  if (!s || s.v !== 1 || !Array.isArray(s.f) || typeof s.i !== 'number' || !Array.isArray(s.p) || typeof s.s !== 'string') throw invalid();
  return { v: 1, f: s.f, i: s.i, k: s.k, a: s.a, p: s.p, s: s.s, c: Array.isArray(s.c) ? s.c : [], g: Array.isArray(s.g) ? s.g : [] };
}

const RESERVED_PATHS = new Set(['watch', 'results', 'feed', 'playlist', 'channel', 'user', 'c', 'embed', 'shorts', 'live', 'v', 'e', 'about', 'account', 'signin', 'premium', 'gaming', 'music', 'kids', 't', 'redirect', 'attribution_link', 'hashtag', 'index', 'logout', 'upload', 'search']);

/** The listing-URL forms of a channel, most canonical first. */
export function listingForms(channel: ChannelRecord): Form[] {
  const forms: Form[] = [`p:youtube.com/channel/${channel.channelId}`];
  const names = new Set<string>();
  const addName = (path: string) => {
    const key = path.toLowerCase();
    if (names.has(key)) return;
    names.add(key);
    // The exact page and its sub-pages; a bare prefix would also match longer names.
    forms.push(`e:youtube.com/${path}`, `p:youtube.com/${path}/`);
  };
  const handle = channel.handle?.replace(/^@?/, '@');
  if (handle && handle.length > 1) addName(handle);
  const custom = channel.customUrl?.trim();
  if (custom) {
    if (custom.startsWith('@')) addName(custom);
    else {
      const name = custom.replace(/^\/?(?:c\/|user\/)?/i, '');
      if (name) {
        addName(`user/${name}`);
        addName(`c/${name}`);
        addName(name);
      }
    }
  }
  return forms;
}

// ---------------------------------------------------------------------------------------------
// The source
// ---------------------------------------------------------------------------------------------

const LISTING_FL = ['urlkey', 'timestamp', 'original', 'mimetype', 'statuscode', 'digest'] as const;
const CAPTURE_FL = ['timestamp', 'original', 'statuscode', 'mimetype', 'digest'] as const;
/** Tabs whose captures are read: the home page and the tabs listing the channel's own videos. */
const LISTING_TABS = new Set(['', 'featured', 'videos', 'streams', 'shorts', 'live', 'home', 'feed', 'uploads']);
const UPLOADS_TABS = new Set(['videos', 'streams', 'shorts', 'uploads']);
/** Captures of one page looked at, newest first, to find its channel. */
const CHANNEL_PAGE_PROBES = 3;
/** Rows asked for per video or channel page (one per month: enough to bisect between notices and metadata). */
const TIMELINE_LIMIT = 400;

type Probe<T> = { kind: 'good'; value: T } | { kind: 'notice'; reason: string; category?: RemovalCategory } | { kind: 'skip' };

interface TimelineResult<T> {
  good?: { row: CdxRow; value: T };
  notice?: { row: CdxRow; reason: string; category?: RemovalCategory };
  /** The newest capture looked at was a notice. */
  newestIsNotice: boolean;
}

/**
 * Looks at up to `maxProbes` captures (ascending by time) to find the newest one that is not a
 * removal notice: the newest first; if it is a notice, the oldest; then bisection between the
 * newest good and the oldest notice seen. Captures that are neither (bot checks, broken pages)
 * are stepped over.
 */
async function probeTimeline<T>(rows: CdxRow[], maxProbes: number, probe: (row: CdxRow) => Promise<Probe<T>>): Promise<TimelineResult<T>> {
  const result: TimelineResult<T> = { newestIsNotice: false };
  const probed = new Set<number>();
  let good = -1;
  let bad = rows.length;
  const next = (): number | undefined => {
    if (probed.size === 0) return rows.length - 1;
    if (good < 0) {
      for (let i = 0; i < bad; i++) if (!probed.has(i)) return i;
      return undefined;
    }
    const mid = Math.floor((good + bad) / 2);
    for (let step = 0; mid - step > good || mid + step < bad; step++) {
      if (mid + step < bad && mid + step > good && !probed.has(mid + step)) return mid + step;
      if (mid - step > good && mid - step < bad && !probed.has(mid - step)) return mid - step;
    }
    return undefined;
  };
  for (let count = 0; count < maxProbes && rows.length > 0; count++) {
    const index = next();
    if (index === undefined) break;
    const first = probed.size === 0;
    probed.add(index);
    const row = rows[index]!;
    const outcome = await probe(row);
    if (outcome.kind === 'good') {
      if (!result.good || index > good) result.good = { row, value: outcome.value };
      good = Math.max(good, index);
      if (index === rows.length - 1) break;
    } else if (outcome.kind === 'notice') {
      if (first) result.newestIsNotice = true;
      if (!result.notice || row.timestamp > result.notice.row.timestamp) {
        result.notice = { row, reason: outcome.reason, ...(outcome.category ? { category: outcome.category } : {}) };
      }
      bad = Math.min(bad, index);
    }
  }
  return result;
}

type VideoLookup =
  | { kind: 'metadata'; meta: VideoMeta; row: CdxRow }
  | { kind: 'removed'; reason: string; category: RemovalCategory; row: CdxRow }
  | { kind: 'none' };

function compact<T extends object>(value: T): T {
  for (const key of Object.keys(value) as Array<keyof T>) if (value[key] === undefined) delete value[key];
  return value;
}

/** Pages of `forms` this form's path covers: the tab after the base, lower-cased, or undefined if outside. */
function tabOf(form: Form, original: string, channelId: string): string | undefined {
  const base = form.slice(2).replace(/\/$/, '');
  let url: URL;
  try {
    url = new URL(/^[a-z]+:\/\//i.test(original) ? original : `http://${original}`);
  } catch {
    return undefined;
  }
  const basePath = base.slice(base.indexOf('/'));
  const path = decodeURIComponentSafe(url.pathname).replace(/\/+$/, '');
  if (form.startsWith('p:youtube.com/channel/')) {
    // The index is case-insensitive; channel ids are not.
    if (!path.startsWith(`/channel/${channelId}`)) return undefined;
  } else if (!path.toLowerCase().startsWith(basePath.toLowerCase())) return undefined;
  const rest = path.slice(basePath.length);
  if (rest && !rest.startsWith('/')) return undefined;
  return (rest.split('/')[1] ?? '').toLowerCase();
}

function decodeURIComponentSafe(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function sameName(profileUrl: string | undefined, channel: ChannelRecord): boolean {
  if (!profileUrl) return false;
  const url = profileUrl.toLowerCase();
  const handle = channel.handle?.replace(/^@?/, '@').toLowerCase();
  if (handle && new RegExp(`/${escapeRegExp(handle)}(?:$|[/?#])`).test(url)) return true;
  if (url.includes(`/channel/${channel.channelId.toLowerCase()}`)) return true;
  const custom = channel.customUrl?.replace(/^\/?(?:c\/|user\/)?/i, '').toLowerCase();
  return !!custom && new RegExp(`/(?:user/|c/)?${escapeRegExp(custom)}(?:$|[/?#])`).test(url);
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

type Settled<R> = { ok: true; value: R } | { ok: false; error: unknown };

const settle = async <R>(promise: Promise<R>): Promise<Settled<R>> => {
  try {
    return { ok: true, value: await promise };
  } catch (error) {
    return { ok: false, error };
  }
};

export function createWaybackSource(options: WaybackSourceOptions = {}): WaybackSource {
  const cdxUrl = options.cdxUrl ?? 'https://web.archive.org/cdx/search/cdx';
  const captureBase = (options.captureBaseUrl ?? 'https://web.archive.org/web').replace(/\/+$/, '');
  const publicBase = (options.publicCaptureBaseUrl ?? 'https://web.archive.org/web').replace(/\/+$/, '');
  const pageSize = Math.max(1, options.pageSize ?? 25);
  const limits: WaybackLimits = { ...DEFAULT_LIMITS, ...options.limits };
  const baseFetch: FetchOptions = { timeoutMs: 20_000, retries: 2, minDelayMs: 1_000, maxDelayMs: 8_000, ...options.fetchOptions };

  const withSignal = (signal?: AbortSignal): FetchOptions => (signal ? { ...baseFetch, signal } : baseFetch);
  const cdx = (query: CdxQuery, signal?: AbortSignal) => queryCdx(cdxUrl, query, withSignal(signal));
  const publicUrl = (row: CdxRow) => `${publicBase}/${row.timestamp}/${row.original}`;

  /** A capture's original bytes (`id_`), or the replay (which follows archived redirects). */
  async function readCapture(row: CdxRow, signal: AbortSignal | undefined, replay = false): Promise<string | undefined> {
    const url = `${captureBase}/${row.timestamp}${replay ? '' : 'id_'}/${row.original}`;
    try {
      // Archived pages may hold a bot check or a "try again later" text: that is content, not our refusal.
      const { body } = await fetchText(url, { ...withSignal(signal), isTransient: () => false });
      return body;
    } catch (error) {
      if (error instanceof DefiniteError) return undefined; // not replayable: step over it
      throw error;
    }
  }

  /** Captures of one exact URL, ascending, one a month, 200s only (or redirects too, for youtu.be). */
  async function timeline(url: string, signal: AbortSignal | undefined, { anyStatus = false } = {}): Promise<CdxRow[]> {
    const page = await cdx(
      {
        url,
        output: 'json',
        fl: CAPTURE_FL,
        filter: anyStatus ? ['!statuscode:[45]..'] : ['statuscode:200'],
        collapse: ['timestamp:6'],
        limit: TIMELINE_LIMIT,
      },
      signal,
    );
    return page.rows.filter((row) => !row.mimetype || /html|revisit/i.test(row.mimetype));
  }

  async function lookupVideo(videoId: string, signal: AbortSignal | undefined): Promise<VideoLookup> {
    const forms: Array<{ url: string; replay: boolean; probes: number }> = [
      { url: `youtube.com/watch?v=${videoId}`, replay: false, probes: limits.capturesPerVideo },
      { url: `youtube.com/shorts/${videoId}`, replay: false, probes: 1 },
      { url: `youtube.com/embed/${videoId}`, replay: false, probes: 1 },
      // youtu.be captures are redirects: the replay follows them to the archived watch page.
      { url: `youtu.be/${videoId}`, replay: true, probes: 1 },
    ];
    let notice: VideoLookup | undefined;
    for (const form of forms) {
      const rows = (await timeline(form.url, signal, { anyStatus: form.replay })).filter((row) => videoIdOfUrl(row.original) === videoId);
      if (rows.length === 0) continue;
      const result = await probeTimeline<VideoMeta>(rows, form.probes, async (row) => {
        const body = await readCapture(row, signal, form.replay);
        if (body === undefined) return { kind: 'skip' };
        const page = classifyWatchPage(body, videoId);
        if (page.kind === 'metadata') return { kind: 'good', value: page.meta };
        if (page.kind === 'removed') return { kind: 'notice', reason: page.reason, category: page.category };
        return { kind: 'skip' };
      });
      if (result.good) return { kind: 'metadata', meta: result.good.value, row: result.good.row };
      if (result.notice && (!notice || (notice.kind === 'removed' && result.notice.row.timestamp > notice.row.timestamp))) {
        notice = { kind: 'removed', reason: result.notice.reason, category: result.notice.category ?? 'unavailable', row: result.notice.row };
      }
    }
    return notice ?? { kind: 'none' };
  }

  /** The channel an archived page of it names, from the newest usable of its captures. */
  async function channelFromPages(urls: string[], signal: AbortSignal | undefined, accept: (info: ChannelPageInfo) => boolean): Promise<{ info: ChannelPageInfo; terminated?: string } | undefined> {
    let terminated: string | undefined;
    for (const url of urls) {
      const rows = await timeline(url, signal);
      if (rows.length === 0) continue;
      const result = await probeTimeline<ChannelPageInfo>(rows, CHANNEL_PAGE_PROBES, async (row) => {
        const body = await readCapture(row, signal);
        if (body === undefined) return { kind: 'skip' };
        const info = extractChannelInfo(body);
        if (accept(info)) return { kind: 'good', value: info };
        if (info.terminated) return { kind: 'notice', reason: info.terminated };
        return { kind: 'skip' };
      });
      // The newest capture of the page says the channel is gone (older ones still tell who it was).
      if (result.newestIsNotice && result.notice) terminated ??= result.notice.reason;
      if (result.good) return { info: result.good.value, ...(terminated ? { terminated } : {}) };
    }
    return undefined;
  }

  function channelRecord(channelId: string, info: ChannelPageInfo, extra: Partial<ChannelRecord> = {}, terminated?: string): ChannelRecord {
    return compact<ChannelRecord>({
      channelId,
      title: info.title,
      description: info.description,
      avatarUrl: info.avatarUrl,
      handle: info.handle,
      customUrl: info.customName ?? info.legacyUser,
      ...compact(extra),
      ...(terminated ? { channelStatus: 'deleted' as const } : {}),
    });
  }

  async function resolveChannel(query: ChannelQuery, signal?: AbortSignal): Promise<ChannelRecord | undefined> {
    const pages = (base: string) => [base, `${base}/videos`, `${base}/featured`];
    const hasId = (info: ChannelPageInfo) => !!info.channelId;
    switch (query.kind) {
      case 'channelId': {
        const found = await channelFromPages(pages(`youtube.com/channel/${query.channelId}`), signal, (info) => !!info.title || info.channelId === query.channelId);
        return found ? channelRecord(query.channelId, found.info, {}, found.terminated) : undefined;
      }
      case 'handle': {
        const handle = query.handle.replace(/^@?/, '@');
        const found = await channelFromPages(pages(`youtube.com/${handle}`), signal, hasId);
        return found?.info.channelId ? channelRecord(found.info.channelId, found.info, { handle: found.info.handle ?? handle }, found.terminated) : undefined;
      }
      case 'user': {
        const found = await channelFromPages(pages(`youtube.com/user/${query.name}`), signal, hasId);
        // The legacy username is what the API's customUrl held for such channels; listVideos walks /user/NAME from it.
        return found?.info.channelId ? channelRecord(found.info.channelId, found.info, { customUrl: found.info.legacyUser ?? query.name }, found.terminated) : undefined;
      }
      case 'customUrl': {
        const found = await channelFromPages([`youtube.com/c/${query.name}`, `youtube.com/c/${query.name}/videos`, `youtube.com/${query.name}`], signal, hasId);
        return found?.info.channelId ? channelRecord(found.info.channelId, found.info, { customUrl: query.name }, found.terminated) : undefined;
      }
      case 'video': {
        const lookup = await lookupVideo(query.videoId, signal);
        if (lookup.kind !== 'metadata') return undefined;
        const { meta } = lookup;
        const names: ChannelPageInfo = {};
        const profile = meta.ownerProfileUrl ?? '';
        const handle = /\/(@[^/?#]+)/.exec(profile)?.[1];
        const user = /\/(?:user|c)\/([^/?#]+)/.exec(profile)?.[1];
        const idFromProfile = /\/channel\/(UC[A-Za-z0-9_-]{22})/.exec(profile)?.[1];
        if (handle) names.handle = decodeURIComponentSafe(handle);
        if (user) names.customName = decodeURIComponentSafe(user);
        const channelId = meta.channelId ?? idFromProfile;
        if (channelId && CHANNEL_ID.test(channelId)) return channelRecord(channelId, { ...names, ...(meta.author ? { title: meta.author } : {}) });
        if (names.handle) return resolveChannel({ kind: 'handle', handle: names.handle }, signal);
        if (user) return resolveChannel({ kind: 'user', name: decodeURIComponentSafe(user) }, signal);
        return undefined;
      }
    }
  }

  function videoRecord(channel: ChannelRecord, entry: PendingVideo, lookup: VideoLookup, listingCapture: string | undefined): VideoRecord | undefined {
    if (lookup.kind === 'metadata') {
      const { meta } = lookup;
      const owned = meta.channelId ? meta.channelId === channel.channelId : entry.o === 1 || sameName(meta.ownerProfileUrl, channel);
      if (!owned) return undefined;
      const url = publicUrl(lookup.row);
      return compact<VideoRecord>({
        videoId: entry.i,
        channelId: channel.channelId,
        title: meta.title ?? entry.t,
        description: meta.description,
        durationSeconds: meta.durationSeconds ?? entry.d,
        viewCount: meta.viewCount,
        uploadDate: meta.uploadDate,
        thumbnailUrl: meta.thumbnailUrl,
        tags: meta.tags,
        captions: meta.captions,
        archiveUrl: url,
        evidenceUrl: url,
        availability: 'unknown',
      });
    }
    if (entry.o !== 1) return undefined;
    if (lookup.kind === 'removed') {
      const url = publicUrl(lookup.row);
      return compact<VideoRecord>({ videoId: entry.i, channelId: channel.channelId, title: entry.t, durationSeconds: entry.d, archiveUrl: url, evidenceUrl: url, availability: 'deleted' });
    }
    // Only the listing knows of it.
    const evidence = listingCapture ? `${publicBase}/${listingCapture.replace(' ', '/')}` : undefined;
    return compact<VideoRecord>({ videoId: entry.i, channelId: channel.channelId, title: entry.t, durationSeconds: entry.d, evidenceUrl: evidence, availability: 'unknown' });
  }

  async function listVideos(channel: ChannelRecord, cursor: string | undefined, signal?: AbortSignal): Promise<VideoPage> {
    const state: CursorState = cursor ? decodeCursor(cursor) : { v: 1, f: listingForms(channel), i: 0, p: [], s: '', c: [], g: [] };
    const deadline = Date.now() + limits.timeBudgetMs;
    // Only lookups that already failed in earlier calls are left: their failures count, no throwing.
    const onlyRetriesLeft = state.i >= state.f.length && state.p.length > 0 && state.p.every((entry) => (entry.r ?? 0) >= 1);
    const videos: VideoRecord[] = [];
    const seen = new Set<string>();
    for (let i = 0; i + 11 <= state.s.length; i += 11) seen.add(state.s.slice(i, i + 11));
    const seenOrder: string[] = [...seen];
    const digests = new Set(state.g);
    let lookups = 0;
    let listingReads = 0;
    let cdxPages = 0;
    let advanced = false;
    let failure: unknown;

    const markSeen = (id: string) => {
      seen.add(id);
      seenOrder.push(id);
    };

    const lookupBatch = async () => {
      const batch = state.p.splice(0, Math.max(0, limits.videoLookupsPerCall - lookups));
      lookups += batch.length;
      const outcomes = await mapLimit(batch, limits.concurrency, async (entry): Promise<Settled<VideoLookup> | undefined> => {
        if (failure || Date.now() > deadline) return undefined;
        const outcome = await settle(lookupVideo(entry.i, signal));
        // One transient failure stops new lookups of this call: the archive may be struggling.
        if (!outcome.ok && outcome.error instanceof TransientError) failure ??= outcome.error;
        return outcome;
      });
      const notStarted: PendingVideo[] = [];
      const failed: PendingVideo[] = [];
      batch.forEach((entry, index) => {
        const outcome = outcomes[index];
        if (!outcome) {
          notStarted.push(entry); // the budget ran out or an earlier lookup failed
          return;
        }
        if (!outcome.ok) {
          if (!(outcome.error instanceof TransientError)) throw outcome.error;
          const attempts = (entry.r ?? 0) + 1;
          if (attempts < limits.lookupAttempts) {
            failed.push({ ...entry, r: attempts });
            return;
          }
          // The archive keeps failing on this one: report what the listing said.
          const record = videoRecord(channel, entry, { kind: 'none' }, entry.c === undefined ? undefined : state.c[entry.c]);
          if (record) videos.push(record);
          advanced = true;
          return;
        }
        advanced = true;
        const record = videoRecord(channel, entry, outcome.value, entry.c === undefined ? undefined : state.c[entry.c]);
        if (record) videos.push(record);
      });
      // Failed lookups go to the back, so the rest of the walk goes on before they are tried again.
      state.p.unshift(...notStarted);
      state.p.push(...failed);
    };

    const listingQuery = (form: Form, resumeKey: string | undefined): CdxQuery => ({
      url: form.slice(2),
      matchType: form.startsWith('p:') ? 'prefix' : 'exact',
      fl: LISTING_FL,
      // SPF captures (?spf=navigate, application/json) hold the same page inside JSON strings.
      filter: ['statuscode:200', 'mimetype:(?:text/html|application/json).*'],
      collapse: ['digest'],
      limit: pageSize,
      showResumeKey: true,
      ...(resumeKey ? { resumeKey } : {}),
    });

    // A CDX page stays the same within a call: read it once even when the call comes back to it.
    let cached: { key: string; page: CdxPage } | undefined;
    const readListingPage = async (): Promise<void> => {
      const form = state.f[state.i]!;
      const cacheKey = `${state.i} ${state.k ?? ''}`;
      const page = cached?.key === cacheKey ? cached.page : await cdx(listingQuery(form, state.k), signal);
      if (cached?.key !== cacheKey) {
        cdxPages++;
        cached = { key: cacheKey, page };
      }
      const after = state.a ?? '';
      const rows = page.rows.filter((row) => rowPosition(row) > after);
      let index = 0;
      while (index < rows.length) {
        if (listingReads >= limits.listingCapturesPerCall || state.p.length >= limits.videoLookupsPerCall || Date.now() > deadline) return;
        // A group of rows to read together; rows outside the listing tabs or already read are stepped over.
        const group: Array<{ row: CdxRow; tab: string }> = [];
        let end = index;
        while (end < rows.length && group.length < limits.concurrency && listingReads + group.length < limits.listingCapturesPerCall) {
          const row = rows[end]!;
          end++;
          const tab = tabOf(form, row.original, channel.channelId);
          if (tab === undefined || !LISTING_TABS.has(tab)) continue;
          if (row.digest && digests.has(row.digest)) continue;
          if (row.digest) digests.add(row.digest);
          group.push({ row, tab });
        }
        const bodies = await mapLimit(group, limits.concurrency, ({ row }) => settle(readCapture(row, signal)));
        for (let g = 0; g < group.length; g++) {
          const outcome = bodies[g]!;
          const { row, tab } = group[g]!;
          if (!outcome.ok) {
            if (!(outcome.error instanceof TransientError)) throw outcome.error;
            failure ??= outcome.error;
            // Resume at this capture next time; the captures after it in the group are read again too.
            const previous = rows.indexOf(row) - 1;
            if (previous >= 0) state.a = rowPosition(rows[previous]!);
            for (const unread of group.slice(g)) if (unread.row.digest) digests.delete(unread.row.digest);
            return;
          }
          listingReads++;
          advanced = true;
          if (outcome.value !== undefined) {
            const listed = extractListedVideos(outcome.value, channel.channelId, UPLOADS_TABS.has(tab));
            let ref: number | undefined;
            for (const [id, info] of listed) {
              if (info.owned === false) continue;
              if (seen.has(id)) {
                // Listed as the channel's own after being seen elsewhere: upgrade it if still queued.
                if (info.owned) {
                  const queued = state.p.find((entry) => entry.i === id);
                  if (queued) queued.o = 1;
                }
                continue;
              }
              markSeen(id);
              if (ref === undefined) {
                state.c.push(`${row.timestamp} ${row.original}`);
                ref = state.c.length - 1;
              }
              const entry: PendingVideo = { i: id, c: ref };
              if (info.owned) entry.o = 1;
              if (info.title) entry.t = info.title.slice(0, 200);
              if (info.durationSeconds) entry.d = info.durationSeconds;
              state.p.push(entry);
            }
          }
          state.a = rowPosition(row);
        }
        index = end;
        state.a = rowPosition(rows[end - 1]!);
      }
      // The whole page is read: on to the next page of this form, or to the next form.
      advanced = true;
      if (page.resumeKey && page.resumeKey !== state.k) {
        state.k = page.resumeKey;
      } else {
        state.i++;
        delete state.k;
      }
      delete state.a;
    };

    while (!failure && Date.now() <= deadline) {
      signal?.throwIfAborted();
      if (state.p.length > 0) {
        if (lookups >= limits.videoLookupsPerCall) break;
        await lookupBatch();
        continue;
      }
      if (state.i >= state.f.length) break;
      if (listingReads >= limits.listingCapturesPerCall || cdxPages >= limits.cdxPagesPerCall) break;
      try {
        await readListingPage();
      } catch (error) {
        if (!(error instanceof TransientError)) throw error;
        failure = error;
      }
    }
    // Nothing got through: the archive is down or refusing; the caller backs off and retries the same cursor.
    if (failure && !advanced && videos.length === 0 && !onlyRetriesLeft) throw failure;

    const keep = seenOrder.slice(-limits.seenIds);
    state.s = keep.join('');
    state.g = [...digests].slice(-50);
    const done = state.i >= state.f.length && state.p.length === 0;
    const progress = done ? 1 : Math.min(0.99, state.i / Math.max(1, state.f.length));
    return done ? { videos, progress } : { videos, next: encodeCursor(state), progress };
  }

  return { name: 'wayback', resolveChannel, listVideos };
}

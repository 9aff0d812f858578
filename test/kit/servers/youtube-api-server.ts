/**
 * A local stand-in for the YouTube Data API v3 (channels.list, search.list, playlistItems.list,
 * videos.list), answering from an in-memory dataset with the envelopes and field shapes of the real
 * API (as in the recorded responses under shared/fixtures/real: python-youtube apidata and
 * Thoroldvix api_v3_responses): kind, etag, pageInfo, nextPageToken/prevPageToken, items[].snippet
 * with thumbnails {default, medium, high[, standard, maxres]}, contentDetails, statistics, status,
 * and the `{error: {code, message, errors: [{message, domain, reason}], status}}` error body.
 *
 * Controls: generated channels of any size (paging), deleted/private uploads, failure injection
 * (status codes, quota and rate-limit 403s, hangs, stalled bodies, connection resets), per-endpoint
 * request counts, quota accounting with an optional daily limit, key checking (wrong key → 400
 * keyInvalid; none → 403 forbidden), artificial latency.
 *
 * Every request costs O(page size): uploads are arrays in playlist order, videos a Map by id.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fakeVideoId } from '../ids.ts';

type Endpoint = 'channels' | 'search' | 'playlistItems' | 'videos';
const ENDPOINTS: Endpoint[] = ['channels', 'search', 'playlistItems', 'videos'];
const QUOTA_COST: Record<Endpoint, number> = { channels: 1, search: 100, playlistItems: 1, videos: 1 };

/** What the uploads playlist and videos.list make of a video. */
type VideoState = 'public' | 'unlisted' | 'private' | 'deleted';

interface VideoSeed {
  videoId: string;
  title?: string;
  description?: string;
  /** RFC 3339; defaults to a fixed date. */
  publishedAt?: string;
  /** ISO 8601 as videos.list gives it ("PT21M7S"); defaults from durationSeconds or "PT1M". */
  duration?: string;
  viewCount?: number;
  likeCount?: number;
  tags?: string[];
  defaultLanguage?: string;
  defaultAudioLanguage?: string;
  liveBroadcastContent?: 'none' | 'live' | 'upcoming';
  /** Also give standard and maxres thumbnails (videos of real channels mostly have them). */
  hd?: boolean;
  state?: VideoState;
}

interface ChannelSeed {
  channelId: string;
  /** "@name"; becomes snippet.customUrl (lower-cased, as the API gives it) and forHandle's key. */
  handle?: string;
  title: string;
  description?: string;
  /** Legacy username for channels.list?forUsername=. */
  username?: string;
  country?: string;
  subscriberCount?: number;
  hiddenSubscriberCount?: boolean;
  bannerUrl?: string;
  publishedAt?: string;
  /** Generated public videos, newest first in the uploads playlist. */
  videoCount?: number;
  /** Ids of uploads that are gone: a generated id is turned deleted, any other is added. */
  deleted?: string[];
  /** Ids of uploads that are private, like `deleted`. */
  private?: string[];
  /** Explicit videos, placed before the generated ones (newest first). */
  videos?: VideoSeed[];
}

interface StoredVideo
  extends Required<Pick<VideoSeed, 'videoId' | 'title' | 'description' | 'publishedAt' | 'duration' | 'viewCount' | 'likeCount'>> {
  channelId: string;
  state: VideoState;
  tags?: string[];
  defaultLanguage?: string;
  defaultAudioLanguage?: string;
  liveBroadcastContent: 'none' | 'live' | 'upcoming';
  hd: boolean;
  /** When the video was added to the uploads playlist (snippet.publishedAt of its entry). */
  addedAt: string;
}

interface StoredChannel {
  seed: ChannelSeed;
  /** Video ids in uploads-playlist order (newest first). */
  uploads: string[];
  etag: string;
  publicCount: number;
}

interface CreatedChannel {
  channelId: string;
  uploadsPlaylistId: string;
  handle?: string;
  /** Every uploads entry, playlist order (deleted and private included). */
  videoIds: string[];
}

type Failure =
  | { type: 'status'; status: number }
  | { type: 'quotaExceeded' | 'rateLimitExceeded' | 'userRateLimitExceeded' }
  /** No answer for `ms` (then the normal one), or none at all until the client gives up. */
  | { type: 'hang'; ms?: number }
  /** Headers and half a body, then silence. */
  | { type: 'stall' }
  /** The connection is destroyed without an answer. */
  | { type: 'reset' };

type FailureSpec = Failure | Failure['type'] | number;

interface RequestLogEntry {
  endpoint: Endpoint | 'other';
  /** Query parameters without the key. */
  params: Record<string, string>;
  status?: number;
  /** The injected failure, if one answered. */
  failure?: Failure['type'];
}

export interface StartOptions {
  /** The key the server accepts (`key` parameter). */
  apiKey?: string;
  latencyMs?: number;
  /** Quota units per "day"; beyond it every call answers 403 quotaExceeded. */
  quotaLimit?: number;
}

export interface YoutubeApiServer {
  /** Base URL to give the source as `baseUrl` (…/youtube/v3). */
  url: string;
  apiKey: string;
  close(): Promise<void>;
  createChannel(seed: ChannelSeed): CreatedChannel;
  /** Adds a new upload at the top of a channel's uploads playlist. */
  addVideo(channelId: string, seed: VideoSeed): void;
  /** Changes what the API shows of a video (e.g. 'deleted' after the first crawl). */
  setVideoState(videoId: string, state: VideoState): void;
  /** Takes an entry out of the uploads playlist entirely (the video stays known to no call). */
  removeFromUploads(videoId: string): void;
  /** Removes a channel: channels.list no longer finds it, its playlist answers 404. */
  deleteChannel(channelId: string): void;
  /** The stored video, as the expected values of a test. */
  video(videoId: string): Readonly<StoredVideo> | undefined;
  /** The next `times` requests (to `endpoint`, or any) fail like this. */
  failNext(times: number, failure: FailureSpec, endpoint?: Endpoint): void;
  clearFailures(): void;
  /** Requests received per endpoint since the start or the last resetCounts(). */
  counts(): Record<Endpoint | 'other', number>;
  requests(): readonly RequestLogEntry[];
  resetCounts(): void;
  quotaUsed(): number;
  setQuotaLimit(limit: number | undefined): void;
  setLatency(ms: number): void;
}

// ---------------------------------------------------------------------------------------------
// Shapes
// ---------------------------------------------------------------------------------------------

/** 27 characters like the API's etags, stable for the same input. */
function etag(input: string): string {
  return createHash('sha1').update(input).digest('base64url').slice(0, 27);
}

/** An 11-character video id, stable for (channel, index). */
export function generatedVideoId(channelId: string, index: number): string {
  return fakeVideoId(`${channelId}:${index}`);
}

export function isoDuration(seconds: number): string {
  if (seconds <= 0) return 'P0D';
  const days = Math.floor(seconds / 86_400);
  const hours = Math.floor((seconds % 86_400) / 3_600);
  const minutes = Math.floor((seconds % 3_600) / 60);
  const rest = seconds % 60;
  let text = 'P';
  if (days) text += `${days}D`;
  if (hours || minutes || rest) {
    text += 'T';
    if (hours) text += `${hours}H`;
    if (minutes) text += `${minutes}M`;
    if (rest) text += `${rest}S`;
  }
  return text;
}

/** The API's page tokens are protobuf: field 1 the offset (varint), field 2 = 1 for a previous page. */
function encodePageToken(offset: number, previous = false): string {
  const bytes = [0x08];
  let value = offset;
  do {
    let byte = value & 0x7f;
    value = Math.floor(value / 128);
    if (value > 0) byte |= 0x80;
    bytes.push(byte);
  } while (value > 0);
  bytes.push(0x10, previous ? 1 : 0);
  return Buffer.from(bytes).toString('base64url');
}

function decodePageToken(token: string): number | undefined {
  const bytes = Buffer.from(token, 'base64url');
  if (bytes.length < 4 || bytes[0] !== 0x08) return undefined;
  let value = 0;
  let shift = 1;
  let index = 1;
  for (; index < bytes.length; index++) {
    const byte = bytes[index]!;
    value += (byte & 0x7f) * shift;
    shift *= 128;
    if ((byte & 0x80) === 0) break;
  }
  return bytes[index + 1] === 0x10 ? value : undefined;
}

/** search.list escapes titles and descriptions as HTML; the other endpoints do not. */
function htmlEscape(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!);
}

function videoThumbnails(videoId: string, hd: boolean) {
  const thumbnails: Record<string, { url: string; width: number; height: number }> = {
    default: { url: `https://i.ytimg.com/vi/${videoId}/default.jpg`, width: 120, height: 90 },
    medium: { url: `https://i.ytimg.com/vi/${videoId}/mqdefault.jpg`, width: 320, height: 180 },
    high: { url: `https://i.ytimg.com/vi/${videoId}/hqdefault.jpg`, width: 480, height: 360 },
  };
  if (hd) {
    thumbnails.standard = { url: `https://i.ytimg.com/vi/${videoId}/sddefault.jpg`, width: 640, height: 480 };
    thumbnails.maxres = { url: `https://i.ytimg.com/vi/${videoId}/maxresdefault.jpg`, width: 1280, height: 720 };
  }
  return thumbnails;
}

function avatarUrl(channelId: string, size: 88 | 240 | 800): string {
  return `https://yt3.ggpht.com/ytc/${etag(channelId)}=s${size}-c-k-c0x00ffffff-no-rj`;
}

function channelThumbnails(channelId: string, withSizes: boolean) {
  const one = (size: 88 | 240 | 800) =>
    withSizes ? { url: avatarUrl(channelId, size), width: size, height: size } : { url: avatarUrl(channelId, size) };
  return { default: one(88), medium: one(240), high: one(800) };
}

interface ErrorSpec {
  code: number;
  message: string;
  reason: string;
  domain: string;
  status: string;
  details?: unknown[];
}

const ERRORS = {
  backendError: (code: number): ErrorSpec => ({
    code,
    message: code === 503 ? 'The service is currently unavailable.' : 'Backend Error',
    reason: 'backendError',
    domain: 'global',
    status: code === 503 ? 'UNAVAILABLE' : 'INTERNAL',
  }),
  quotaExceeded: (): ErrorSpec => ({
    code: 403,
    message: 'The request cannot be completed because you have exceeded your <a href="/youtube/v3/getting-started#quota">quota</a>.',
    reason: 'quotaExceeded',
    domain: 'youtube.quota',
    status: 'PERMISSION_DENIED',
  }),
  rateLimitExceeded: (): ErrorSpec => ({
    code: 403,
    message: 'Rate Limit Exceeded',
    reason: 'rateLimitExceeded',
    domain: 'usageLimits',
    status: 'PERMISSION_DENIED',
  }),
  userRateLimitExceeded: (): ErrorSpec => ({
    code: 403,
    message: 'User Rate Limit Exceeded',
    reason: 'userRateLimitExceeded',
    domain: 'usageLimits',
    status: 'PERMISSION_DENIED',
  }),
  keyInvalid: (): ErrorSpec => ({
    code: 400,
    message: 'API key not valid. Please pass a valid API key.',
    reason: 'keyInvalid',
    domain: 'usageLimits',
    status: 'INVALID_ARGUMENT',
    details: [
      {
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: 'API_KEY_INVALID',
        domain: 'googleapis.com',
        metadata: { service: 'youtube.googleapis.com' },
      },
    ],
  }),
  keyMissing: (): ErrorSpec => ({
    code: 403,
    message: 'The request is missing a valid API key.',
    reason: 'forbidden',
    domain: 'global',
    status: 'PERMISSION_DENIED',
  }),
  badRequest: (message: string, reason = 'invalidParameter'): ErrorSpec => ({
    code: 400,
    message,
    reason,
    domain: 'youtube.parameter',
    status: 'INVALID_ARGUMENT',
  }),
  playlistNotFound: (): ErrorSpec => ({
    code: 404,
    message: "The playlist identified with the request's <code>playlistId</code> parameter cannot be found.",
    reason: 'playlistNotFound',
    domain: 'youtube.playlistItem',
    status: 'NOT_FOUND',
  }),
  generic: (code: number): ErrorSpec => ({
    code,
    message: `Injected ${code}`,
    reason: code === 404 ? 'notFound' : code === 403 ? 'forbidden' : 'badRequest',
    domain: 'global',
    status: code >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION',
  }),
};

function errorBody(spec: ErrorSpec) {
  const error: Record<string, unknown> = {
    code: spec.code,
    message: spec.message,
    errors: [{ message: spec.message, domain: spec.domain, reason: spec.reason }],
    status: spec.status,
  };
  if (spec.details) error.details = spec.details;
  return { error };
}

function normalise(failure: FailureSpec): Failure {
  if (typeof failure === 'number') return { type: 'status', status: failure };
  if (typeof failure === 'string') return failure === 'status' ? { type: 'status', status: 500 } : ({ type: failure } as Failure);
  return failure;
}

const squash = (text: string) =>
  text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '');

// ---------------------------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------------------------

const BASE_TIME = Date.UTC(2024, 5, 1, 15, 0, 0);
const HOUR = 3_600_000;

export async function start(options: StartOptions = {}): Promise<YoutubeApiServer> {
  const apiKey = options.apiKey ?? 'test-api-key';
  let latencyMs = options.latencyMs ?? 0;
  let quotaLimit = options.quotaLimit;
  let quotaUsed = 0;

  const channels = new Map<string, StoredChannel>();
  const videos = new Map<string, StoredVideo>();
  const handles = new Map<string, string>();
  const usernames = new Map<string, string>();
  /** Channels in creation order, for search.list. */
  const channelOrder: string[] = [];

  let counts = Object.fromEntries([...ENDPOINTS, 'other'].map((name) => [name, 0])) as Record<Endpoint | 'other', number>;
  let log: RequestLogEntry[] = [];
  let failures: Array<{ remaining: number; failure: Failure; endpoint?: Endpoint }> = [];
  const timers = new Set<NodeJS.Timeout>();
  const sockets = new Set<Socket>();

  function storeVideo(channelId: string, seed: VideoSeed, addedAt: string): StoredVideo {
    const stored: StoredVideo = {
      videoId: seed.videoId,
      channelId,
      title: seed.title ?? `Video ${seed.videoId}`,
      description: seed.description ?? '',
      publishedAt: seed.publishedAt ?? addedAt,
      duration: seed.duration ?? 'PT1M',
      viewCount: seed.viewCount ?? 0,
      likeCount: seed.likeCount ?? 0,
      state: seed.state ?? 'public',
      liveBroadcastContent: seed.liveBroadcastContent ?? 'none',
      hd: seed.hd ?? true,
      addedAt: seed.publishedAt ?? addedAt,
    };
    if (seed.tags) stored.tags = seed.tags;
    if (seed.defaultLanguage) stored.defaultLanguage = seed.defaultLanguage;
    if (seed.defaultAudioLanguage) stored.defaultAudioLanguage = seed.defaultAudioLanguage;
    videos.set(stored.videoId, stored);
    return stored;
  }

  /** Deterministic variety: shorts, hour-long and day-long videos, tags or none, two languages. */
  function generatedSeed(channel: ChannelSeed, index: number, total: number): VideoSeed {
    const number = total - index;
    const seconds = index % 97 === 5 ? 93_784 : index % 25 === 3 ? 3_600 + ((index * 131) % 7_200) : 15 + ((index * 7_919) % 1_800);
    const seed: VideoSeed = {
      videoId: generatedVideoId(channel.channelId, index),
      title: index % 10 === 7 ? `Q&A #${number}: "what's next" <live>` : `${channel.title} video ${number}`,
      description: `Upload ${number} of ${channel.title}.\n\nhttps://example.org/${number}`,
      publishedAt: new Date(BASE_TIME - index * 6 * HOUR - (index % 7) * 37 * 60_000).toISOString().replace('.000Z', 'Z'),
      duration: isoDuration(seconds),
      viewCount: (index * 104_729) % 1_000_003,
      likeCount: (index * 31) % 5_000,
      hd: index % 5 !== 4,
    };
    if (index % 3 !== 0) seed.tags = ['afterimage', `tag${index % 5}`];
    // Languages: metadata language only, both, or audio language only (the usual case).
    if (index % 4 === 0) seed.defaultLanguage = 'de';
    else if (index % 4 === 1) Object.assign(seed, { defaultLanguage: 'en', defaultAudioLanguage: 'en-GB' });
    else seed.defaultAudioLanguage = 'en';
    return seed;
  }

  function createChannel(seed: ChannelSeed): CreatedChannel {
    if (!/^UC[A-Za-z0-9_-]{22}$/.test(seed.channelId)) throw new Error(`not a channel id: ${seed.channelId}`);
    if (channels.has(seed.channelId)) throw new Error(`channel exists: ${seed.channelId}`);
    const uploads: string[] = [];
    for (const video of seed.videos ?? []) {
      storeVideo(seed.channelId, video, video.publishedAt ?? new Date(BASE_TIME + HOUR).toISOString());
      uploads.push(video.videoId);
    }
    const total = seed.videoCount ?? 0;
    for (let index = 0; index < total; index++) {
      const video = storeVideo(seed.channelId, generatedSeed(seed, index, total), '');
      uploads.push(video.videoId);
    }
    const extras: string[] = [];
    for (const [ids, state] of [
      [seed.deleted ?? [], 'deleted'],
      [seed.private ?? [], 'private'],
    ] as const) {
      for (const id of ids) {
        const known = videos.get(id);
        if (known && known.channelId === seed.channelId) known.state = state;
        else {
          storeVideo(seed.channelId, { videoId: id, state, title: `Lost video ${id}` }, '');
          extras.push(id);
        }
      }
    }
    // Extra gone entries are spread through the playlist, each dated like its new neighbour.
    extras.forEach((id, k) => {
      const position = Math.min(uploads.length, Math.floor(((k + 1) * (uploads.length + extras.length)) / (extras.length + 1)));
      const neighbour = videos.get(uploads[Math.min(position, uploads.length - 1)] ?? '');
      const stored = videos.get(id)!;
      stored.addedAt = stored.publishedAt = neighbour?.addedAt || new Date(BASE_TIME).toISOString();
      uploads.splice(position, 0, id);
    });
    for (const id of uploads) {
      const stored = videos.get(id)!;
      if (!stored.addedAt) stored.addedAt = stored.publishedAt = new Date(BASE_TIME).toISOString();
    }
    const stored: StoredChannel = { seed, uploads, etag: etag(`channel:${seed.channelId}`), publicCount: 0 };
    recount(stored);
    channels.set(seed.channelId, stored);
    channelOrder.push(seed.channelId);
    if (seed.handle) handles.set(seed.handle.replace(/^@/, '').toLowerCase(), seed.channelId);
    if (seed.username) usernames.set(seed.username.toLowerCase(), seed.channelId);
    const created: CreatedChannel = {
      channelId: seed.channelId,
      uploadsPlaylistId: `UU${seed.channelId.slice(2)}`,
      videoIds: [...uploads],
    };
    if (seed.handle) created.handle = seed.handle;
    return created;
  }

  /** O(uploads), so run on changes only, never per request. */
  function recount(channel: StoredChannel) {
    let count = 0;
    for (const id of channel.uploads) if (videos.get(id)?.state === 'public') count++;
    channel.publicCount = count;
  }

  // ---- item builders ----

  function channelItem(channel: StoredChannel, parts: Set<string>) {
    const { seed } = channel;
    const item: Record<string, unknown> = { kind: 'youtube#channel', etag: channel.etag, id: seed.channelId };
    const description = seed.description ?? '';
    if (parts.has('snippet')) {
      const snippet: Record<string, unknown> = { title: seed.title, description };
      if (seed.handle) snippet.customUrl = `@${seed.handle.replace(/^@/, '').toLowerCase()}`;
      snippet.publishedAt = seed.publishedAt ?? '2015-03-03T23:11:55Z';
      snippet.thumbnails = channelThumbnails(seed.channelId, true);
      snippet.localized = { title: seed.title, description };
      if (seed.country) snippet.country = seed.country;
      item.snippet = snippet;
    }
    if (parts.has('contentDetails')) item.contentDetails = { relatedPlaylists: { likes: '', uploads: `UU${seed.channelId.slice(2)}` } };
    if (parts.has('statistics')) {
      const statistics: Record<string, unknown> = { viewCount: String(channel.uploads.length * 1_234) };
      if (!seed.hiddenSubscriberCount) statistics.subscriberCount = String(seed.subscriberCount ?? 1_000);
      statistics.hiddenSubscriberCount = seed.hiddenSubscriberCount ?? false;
      // Like the real API: public videos only.
      statistics.videoCount = String(channel.publicCount);
      item.statistics = statistics;
    }
    if (parts.has('brandingSettings')) {
      const branding: Record<string, unknown> = {
        channel: { title: seed.title, description, ...(seed.country ? { country: seed.country } : {}) },
      };
      if (seed.bannerUrl) branding.image = { bannerExternalUrl: seed.bannerUrl };
      item.brandingSettings = branding;
    }
    return item;
  }

  function videoItem(video: StoredVideo, parts: Set<string>) {
    const channel = channels.get(video.channelId);
    const item: Record<string, unknown> = { kind: 'youtube#video', etag: etag(`video:${video.videoId}:${video.state}`), id: video.videoId };
    if (parts.has('snippet')) {
      const snippet: Record<string, unknown> = {
        publishedAt: video.publishedAt,
        channelId: video.channelId,
        title: video.title,
        description: video.description,
        thumbnails: videoThumbnails(video.videoId, video.hd),
        channelTitle: channel?.seed.title ?? '',
      };
      if (video.tags) snippet.tags = video.tags;
      snippet.categoryId = '28';
      snippet.liveBroadcastContent = video.liveBroadcastContent;
      if (video.defaultLanguage) snippet.defaultLanguage = video.defaultLanguage;
      snippet.localized = { title: video.title, description: video.description };
      if (video.defaultAudioLanguage) snippet.defaultAudioLanguage = video.defaultAudioLanguage;
      item.snippet = snippet;
    }
    if (parts.has('contentDetails')) {
      item.contentDetails = {
        duration: video.duration,
        dimension: '2d',
        definition: video.hd ? 'hd' : 'sd',
        caption: 'false',
        licensedContent: false,
        contentRating: {},
        projection: 'rectangular',
      };
    }
    if (parts.has('status')) {
      item.status = {
        uploadStatus: 'processed',
        privacyStatus: video.state,
        license: 'youtube',
        embeddable: true,
        publicStatsViewable: true,
        madeForKids: false,
      };
    }
    if (parts.has('statistics')) {
      item.statistics = {
        viewCount: String(video.viewCount),
        likeCount: String(video.likeCount),
        favoriteCount: '0',
        commentCount: String(video.likeCount % 97),
      };
    }
    return item;
  }

  function playlistItem(channel: StoredChannel, playlistId: string, position: number, video: StoredVideo, parts: Set<string>) {
    const gone = video.state === 'deleted' || video.state === 'private';
    const item: Record<string, unknown> = {
      kind: 'youtube#playlistItem',
      etag: etag(`item:${playlistId}:${video.videoId}:${video.state}`),
      id: Buffer.from(`${playlistId}.${etag(video.videoId).slice(0, 16)}`).toString('base64'),
    };
    if (parts.has('snippet')) {
      const snippet: Record<string, unknown> = {
        publishedAt: video.addedAt,
        channelId: channel.seed.channelId,
        title: video.state === 'deleted' ? 'Deleted video' : video.state === 'private' ? 'Private video' : video.title,
        description:
          video.state === 'deleted'
            ? 'This video is unavailable.'
            : video.state === 'private'
              ? 'This video is private.'
              : video.description,
        thumbnails: gone ? {} : videoThumbnails(video.videoId, video.hd),
        channelTitle: channel.seed.title,
        playlistId,
        position,
        resourceId: { kind: 'youtube#video', videoId: video.videoId },
      };
      if (!gone) {
        snippet.videoOwnerChannelTitle = channel.seed.title;
        snippet.videoOwnerChannelId = channel.seed.channelId;
      }
      item.snippet = snippet;
    }
    if (parts.has('contentDetails'))
      item.contentDetails = gone ? { videoId: video.videoId } : { videoId: video.videoId, videoPublishedAt: video.publishedAt };
    if (parts.has('status'))
      item.status = { privacyStatus: gone ? (video.state === 'private' ? 'private' : 'privacyStatusUnspecified') : video.state };
    return item;
  }

  // ---- endpoint handlers: return [status, body] ----

  type Answer = [number, unknown];
  const fail = (spec: ErrorSpec): Answer => [spec.code, errorBody(spec)];

  function parseParts(params: URLSearchParams): Set<string> | undefined {
    const part = params.get('part');
    if (!part) return undefined;
    return new Set(
      part
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean),
    );
  }

  function parseMaxResults(params: URLSearchParams, fallback: number): number | ErrorSpec {
    const raw = params.get('maxResults');
    if (raw === null) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 0 || value > 50)
      return ERRORS.badRequest(`Invalid value '${raw}'. Values must be within the range: [0, 50]`, 'invalidValue');
    return value;
  }

  function parseOffset(params: URLSearchParams): number | ErrorSpec {
    const token = params.get('pageToken');
    if (!token) return 0;
    const offset = decodePageToken(token);
    return offset === undefined ? ERRORS.badRequest('The request specifies an invalid page token.', 'invalidPageToken') : offset;
  }

  function pageFields(offset: number, size: number, total: number) {
    const fields: Record<string, unknown> = {};
    if (size > 0 && offset + size < total) fields.nextPageToken = encodePageToken(offset + size);
    if (offset > 0) fields.prevPageToken = encodePageToken(offset, true);
    return fields;
  }

  function channelsList(params: URLSearchParams): Answer {
    const parts = parseParts(params);
    if (!parts) return fail(ERRORS.badRequest("No filter selected. Expected one of: the 'part' parameter", 'required'));
    let ids: string[];
    if (params.has('id')) ids = (params.get('id') ?? '').split(',').filter(Boolean);
    else if (params.has('forHandle')) ids = [handles.get((params.get('forHandle') ?? '').replace(/^@/, '').toLowerCase()) ?? ''];
    else if (params.has('forUsername')) ids = [usernames.get((params.get('forUsername') ?? '').toLowerCase()) ?? ''];
    else
      return fail(
        ERRORS.badRequest(
          'No filter selected. Expected one of: forUsername, managedByMe, forHandle, mine, id, mySubscribers, categoryId, hl',
          'missingRequiredParameter',
        ),
      );
    if (ids.length > 50) return fail(ERRORS.badRequest('Too many ids: at most 50.'));
    const items = ids
      .map((id) => channels.get(id))
      .filter((channel): channel is StoredChannel => channel !== undefined)
      .map((channel) => channelItem(channel, parts));
    const body: Record<string, unknown> = {
      kind: 'youtube#channelListResponse',
      etag: etag(`channels:${ids.join(',')}:${items.length}`),
      pageInfo: { totalResults: items.length, resultsPerPage: 5 },
    };
    // Like the real API, an answer without matches has no `items` at all.
    if (items.length > 0) body.items = items;
    return [200, body];
  }

  function searchList(params: URLSearchParams): Answer {
    if (!parseParts(params)?.has('snippet')) return fail(ERRORS.badRequest('Required parameter: part', 'required'));
    const max = parseMaxResults(params, 5);
    if (typeof max !== 'number') return fail(max);
    const offset = parseOffset(params);
    if (typeof offset !== 'number') return fail(offset);
    const types = (params.get('type') ?? 'video,channel,playlist').split(',');
    const query = squash(params.get('q') ?? '');
    // Channels only (dataset channels are few): those whose title or handle contains the query.
    const matches = types.includes('channel')
      ? channelOrder.filter((id) => {
          const seed = channels.get(id)?.seed;
          return seed !== undefined && (query === '' || squash(seed.title).includes(query) || squash(seed.handle ?? '').includes(query));
        })
      : [];
    const page = matches.slice(offset, offset + max);
    const items = page.map((id) => {
      const seed = channels.get(id)!.seed;
      const description = seed.description ?? '';
      const published = seed.publishedAt ?? '2015-03-03T23:11:55Z';
      return {
        kind: 'youtube#searchResult',
        etag: etag(`search:${id}`),
        id: { kind: 'youtube#channel', channelId: id },
        snippet: {
          publishedAt: published,
          channelId: id,
          title: htmlEscape(seed.title),
          description: htmlEscape(description.length > 120 ? `${description.slice(0, 120)} ...` : description),
          thumbnails: channelThumbnails(id, false),
          channelTitle: htmlEscape(seed.title),
          liveBroadcastContent: 'none',
          publishTime: published,
        },
      };
    });
    return [
      200,
      {
        kind: 'youtube#searchListResponse',
        etag: etag(`search:${query}:${offset}`),
        ...pageFields(offset, page.length, matches.length),
        regionCode: 'US',
        pageInfo: { totalResults: matches.length, resultsPerPage: max },
        items,
      },
    ];
  }

  function playlistItemsList(params: URLSearchParams): Answer {
    const parts = parseParts(params);
    if (!parts) return fail(ERRORS.badRequest('Required parameter: part', 'required'));
    const playlistId = params.get('playlistId');
    if (!playlistId) return fail(ERRORS.badRequest('No filter selected. Expected one of: id, playlistId', 'missingRequiredParameter'));
    const max = parseMaxResults(params, 5);
    if (typeof max !== 'number') return fail(max);
    const offset = parseOffset(params);
    if (typeof offset !== 'number') return fail(offset);
    const channel = playlistId.startsWith('UU') ? channels.get(`UC${playlistId.slice(2)}`) : undefined;
    // A channel without uploads has no uploads playlist: the real API answers 404 then too.
    if (!channel || channel.uploads.length === 0) return fail(ERRORS.playlistNotFound());
    const end = Math.min(channel.uploads.length, offset + max);
    const items: unknown[] = [];
    for (let position = offset; position < end; position++) {
      items.push(playlistItem(channel, playlistId, position, videos.get(channel.uploads[position]!)!, parts));
    }
    return [
      200,
      {
        kind: 'youtube#playlistItemListResponse',
        etag: etag(`items:${playlistId}:${offset}:${max}`),
        ...pageFields(offset, items.length, channel.uploads.length),
        items,
        pageInfo: { totalResults: channel.uploads.length, resultsPerPage: max },
      },
    ];
  }

  function videosList(params: URLSearchParams): Answer {
    const parts = parseParts(params);
    if (!parts) return fail(ERRORS.badRequest('Required parameter: part', 'required'));
    if (!params.has('id'))
      return fail(ERRORS.badRequest('No filter selected. Expected one of: chart, id, myRating', 'missingRequiredParameter'));
    const ids = (params.get('id') ?? '').split(',').filter(Boolean);
    if (ids.length > 50) return fail(ERRORS.badRequest('The request specifies too many video ids: at most 50.'));
    const items = ids
      .map((id) => videos.get(id))
      .filter(
        (video): video is StoredVideo =>
          video !== undefined && (video.state === 'public' || video.state === 'unlisted') && channels.has(video.channelId),
      )
      .map((video) => videoItem(video, parts));
    return [
      200,
      {
        kind: 'youtube#videoListResponse',
        etag: etag(`videos:${ids.join(',')}:${items.length}`),
        items,
        pageInfo: { totalResults: items.length, resultsPerPage: items.length },
      },
    ];
  }

  // ---- HTTP ----

  function send(response: ServerResponse, entry: RequestLogEntry, [status, body]: Answer) {
    entry.status = status;
    if (response.destroyed) return;
    const text = JSON.stringify(body);
    response.writeHead(status, {
      'Content-Type': 'application/json; charset=UTF-8',
      'Content-Length': Buffer.byteLength(text),
      Vary: 'Origin, X-Origin, Referer',
    });
    response.end(text);
  }

  function later(ms: number, run: () => void) {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timers.add(timer);
    return timer;
  }

  function takeFailure(endpoint: Endpoint | 'other'): Failure | undefined {
    const index = failures.findIndex((entry) => entry.remaining > 0 && (entry.endpoint === undefined || entry.endpoint === endpoint));
    if (index === -1) return undefined;
    const entry = failures[index]!;
    entry.remaining--;
    if (entry.remaining === 0) failures.splice(index, 1);
    return entry.failure;
  }

  function answer(endpoint: Endpoint | 'other', params: URLSearchParams): Answer {
    const key = params.get('key');
    if (!key) return fail(ERRORS.keyMissing());
    if (key !== apiKey) return fail(ERRORS.keyInvalid());
    if (endpoint === 'other') return fail({ code: 404, message: 'Not Found', reason: 'notFound', domain: 'global', status: 'NOT_FOUND' });
    if (quotaLimit !== undefined && quotaUsed + QUOTA_COST[endpoint] > quotaLimit) return fail(ERRORS.quotaExceeded());
    quotaUsed += QUOTA_COST[endpoint];
    switch (endpoint) {
      case 'channels':
        return channelsList(params);
      case 'search':
        return searchList(params);
      case 'playlistItems':
        return playlistItemsList(params);
      case 'videos':
        return videosList(params);
    }
  }

  function handle(request: IncomingMessage, response: ServerResponse) {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const last = url.pathname.split('/').filter(Boolean).pop() ?? '';
    const endpoint: Endpoint | 'other' = (ENDPOINTS as string[]).includes(last) ? (last as Endpoint) : 'other';
    counts[endpoint]++;
    const params = Object.fromEntries([...url.searchParams].filter(([name]) => name !== 'key'));
    const entry: RequestLogEntry = { endpoint, params };
    log.push(entry);
    if (request.method !== 'GET')
      return send(
        response,
        entry,
        fail({ code: 405, message: 'Method Not Allowed', reason: 'methodNotAllowed', domain: 'global', status: 'INVALID_ARGUMENT' }),
      );

    const failure = takeFailure(endpoint);
    const respond = () => {
      if (failure) {
        entry.failure = failure.type;
        switch (failure.type) {
          case 'status':
            return send(
              response,
              entry,
              fail(failure.status >= 500 ? ERRORS.backendError(failure.status) : ERRORS.generic(failure.status)),
            );
          case 'quotaExceeded':
          case 'rateLimitExceeded':
          case 'userRateLimitExceeded':
            return send(response, entry, fail(ERRORS[failure.type]()));
          case 'reset':
            entry.status = 0;
            return request.socket.destroy();
          case 'stall':
            entry.status = 200;
            response.writeHead(200, { 'Content-Type': 'application/json; charset=UTF-8' });
            response.write('{"kind": "youtube#videoListResponse", "items": [');
            return; // never ends; close() or the client's abort frees it
          case 'hang':
            if (failure.ms === undefined) return; // no answer at all
            break; // answered normally below, after the delay
        }
      }
      send(response, entry, answer(endpoint, url.searchParams));
    };
    const delay = (failure?.type === 'hang' && failure.ms !== undefined ? failure.ms : 0) + latencyMs;
    if (delay > 0) {
      const timer = later(delay, respond);
      response.on('close', () => {
        clearTimeout(timer);
        timers.delete(timer);
      });
    } else respond();
  }

  const server = createServer(handle);
  server.keepAliveTimeout = 5_000;
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/youtube/v3`,
    apiKey,
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    createChannel,
    addVideo(channelId, seed) {
      const channel = channels.get(channelId);
      if (!channel) throw new Error(`no channel ${channelId}`);
      storeVideo(channelId, seed, seed.publishedAt ?? new Date().toISOString().replace(/\.\d+Z$/, 'Z'));
      channel.uploads.unshift(seed.videoId);
      recount(channel);
    },
    setVideoState(videoId, state) {
      const video = videos.get(videoId);
      if (!video) throw new Error(`no video ${videoId}`);
      video.state = state;
      const channel = channels.get(video.channelId);
      if (channel) recount(channel);
    },
    removeFromUploads(videoId) {
      const video = videos.get(videoId);
      const channel = video && channels.get(video.channelId);
      if (!channel) throw new Error(`no video ${videoId}`);
      const index = channel.uploads.indexOf(videoId);
      if (index !== -1) channel.uploads.splice(index, 1);
      video.state = 'deleted';
      recount(channel);
    },
    deleteChannel(channelId) {
      const channel = channels.get(channelId);
      if (!channel) return;
      channels.delete(channelId);
      channelOrder.splice(channelOrder.indexOf(channelId), 1);
      if (channel.seed.handle) handles.delete(channel.seed.handle.replace(/^@/, '').toLowerCase());
      if (channel.seed.username) usernames.delete(channel.seed.username.toLowerCase());
    },
    video: (videoId) => videos.get(videoId),
    failNext(times, failure, endpoint) {
      if (times > 0) failures.push({ remaining: times, failure: normalise(failure), ...(endpoint ? { endpoint } : {}) });
    },
    clearFailures() {
      failures = [];
    },
    counts: () => ({ ...counts }),
    requests: () => log,
    resetCounts() {
      counts = Object.fromEntries([...ENDPOINTS, 'other'].map((name) => [name, 0])) as Record<Endpoint | 'other', number>;
      log = [];
    },
    quotaUsed: () => quotaUsed,
    setQuotaLimit(limit) {
      quotaLimit = limit;
    },
    setLatency(ms) {
      latencyMs = ms;
    },
  };
}

/**
 * Pure mapping of YouTube Data API v3 responses (channels.list, search.list, playlistItems.list,
 * videos.list and the error envelope) to the source records. Every field is checked at run time:
 * the API leaves parts out (hidden statistics, deleted entries, unrequested parts), so nothing here
 * assumes a field is present.
 */
import { decodeEntities } from '../text/entities.ts';
import { parseIsoDuration } from '../youtube/isoDuration.ts';
import { isObject, type JsonObject as Json } from '../youtube/json.ts';
import type { ChannelRecord, VideoRecord } from './types.ts';

const obj = (value: unknown): Json => (isObject(value) ? value : {});
const str = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);
/** The API sends counts as decimal strings ("7920"); numbers are accepted too. */
function count(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? Math.floor(value) : undefined;
  if (typeof value === 'string' && /^\d+$/.test(value)) {
    const parsed = Number(value);
    return Number.isSafeInteger(parsed) ? parsed : undefined;
  }
  return undefined;
}

/** The `items` array of a list response; absent (channels.list with no match) reads as empty. */
export function listItems(response: unknown): Json[] {
  const items = obj(response).items;
  return Array.isArray(items) ? items.filter(isObject) : [];
}

export interface ListPage {
  items: Json[];
  nextPageToken?: string;
  totalResults?: number;
}

export function listPage(response: unknown): ListPage {
  const body = obj(response);
  const page: ListPage = { items: listItems(body) };
  const next = str(body.nextPageToken);
  if (next) page.nextPageToken = next;
  const total = count(obj(body.pageInfo).totalResults);
  if (total !== undefined) page.totalResults = total;
  return page;
}

// ---------------------------------------------------------------------------------------------
// Small value parsers
// ---------------------------------------------------------------------------------------------

/** YYYY-MM-DD (UTC) of an RFC 3339 timestamp such as "2019-03-21T20:37:49.000Z". */
function isoDate(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const time = Date.parse(value);
  if (Number.isNaN(time)) return undefined;
  return new Date(time).toISOString().slice(0, 10);
}

const THUMBNAIL_ORDER = ['maxres', 'standard', 'high', 'medium', 'default'];

/** The largest thumbnail: by width when the API gives sizes, else by the usual size names. */
export function bestThumbnail(thumbnails: unknown): string | undefined {
  const all = obj(thumbnails);
  let best: { url: string; width: number; rank: number } | undefined;
  for (const [name, value] of Object.entries(all)) {
    const url = str(obj(value).url);
    if (!url) continue;
    const width = count(obj(value).width) ?? 0;
    const rank = THUMBNAIL_ORDER.indexOf(name) === -1 ? THUMBNAIL_ORDER.length : THUMBNAIL_ORDER.indexOf(name);
    if (!best || width > best.width || (width === best.width && rank < best.rank)) best = { url, width, rank };
  }
  return best?.url;
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

export interface ApiErrorInfo {
  code?: number;
  /** The top-level message with HTML tags removed (quota errors link to the docs). */
  message?: string;
  /** errors[].reason, then details[].reason (e.g. quotaExceeded, keyInvalid, API_KEY_INVALID). */
  reasons: string[];
  status?: string;
}

/** The `{error: {code, message, errors: [{reason}], status}}` envelope, or undefined when it is not one. */
export function parseApiError(body: string): ApiErrorInfo | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  const error = obj(obj(parsed).error);
  if (Object.keys(error).length === 0) return undefined;
  const reasons: string[] = [];
  for (const list of [error.errors, error.details]) {
    if (!Array.isArray(list)) continue;
    for (const entry of list) {
      const reason = str(obj(entry).reason);
      if (reason && !reasons.includes(reason)) reasons.push(reason);
    }
  }
  const info: ApiErrorInfo = { reasons };
  if (typeof error.code === 'number') info.code = error.code;
  const message = str(error.message);
  if (message)
    info.message = message
      .replace(/<[^>]*>/g, '')
      .replace(/\s+/g, ' ')
      .trim();
  const status = str(error.status);
  if (status) info.status = status;
  return info;
}

/** Reasons that mean "not now" rather than "no": the daily quota or a per-second/per-user rate limit. */
const TRANSIENT_REASONS = new Set([
  'quotaExceeded',
  'rateLimitExceeded',
  'userRateLimitExceeded',
  'dailyLimitExceeded',
  'RATE_LIMIT_EXCEEDED',
]);

/** The isTransient hook of fetchJson: a 403/429 carrying a quota or rate-limit reason. */
export function isTransientApiError(status: number, body: string): boolean {
  if (status !== 403 && status !== 429) return false;
  const info = parseApiError(body);
  return info !== undefined && info.reasons.some((reason) => TRANSIENT_REASONS.has(reason));
}

// ---------------------------------------------------------------------------------------------
// Channels
// ---------------------------------------------------------------------------------------------

/** A channels.list item (any of snippet, contentDetails, statistics, brandingSettings). */
export function channelFromApi(item: unknown): ChannelRecord | undefined {
  const channel = obj(item);
  const channelId = str(channel.id);
  if (!channelId) return undefined;
  const snippet = obj(channel.snippet);
  const statistics = obj(channel.statistics);
  const branding = obj(channel.brandingSettings);
  const record: ChannelRecord = { channelId, channelStatus: 'live' };
  const title = str(snippet.title) ?? str(obj(branding.channel).title);
  if (title) record.title = title;
  const customUrl = str(snippet.customUrl);
  if (customUrl?.startsWith('@')) record.handle = customUrl;
  else if (customUrl) record.customUrl = customUrl;
  const description = str(snippet.description) ?? str(obj(branding.channel).description);
  if (description) record.description = description;
  const avatarUrl = bestThumbnail(snippet.thumbnails);
  if (avatarUrl) record.avatarUrl = avatarUrl;
  const bannerUrl = str(obj(branding.image).bannerExternalUrl);
  if (bannerUrl) record.bannerUrl = bannerUrl;
  if (statistics.hiddenSubscriberCount !== true) {
    const subscribers = count(statistics.subscriberCount);
    if (subscribers !== undefined) record.subscriberCount = subscribers;
  }
  const videos = count(statistics.videoCount);
  if (videos !== undefined) record.videoCount = videos;
  const country = str(snippet.country) ?? str(obj(branding.channel).country);
  if (country) record.country = country;
  return record;
}

/** contentDetails.relatedPlaylists.uploads of a channels.list item. */
export function uploadsPlaylistOf(item: unknown): string | undefined {
  return str(obj(obj(obj(item).contentDetails).relatedPlaylists).uploads);
}

/** The uploads playlist id every channel has: UC… → UU…. */
export function uploadsPlaylistFromChannelId(channelId: string): string | undefined {
  return channelId.startsWith('UC') ? `UU${channelId.slice(2)}` : undefined;
}

export interface SearchChannelHit {
  channelId: string;
  /** HTML entities decoded. */
  title?: string;
}

/** Channel hits of a search.list response, titles decoded. */
export function channelsFromSearch(response: unknown): SearchChannelHit[] {
  const hits: SearchChannelHit[] = [];
  for (const item of listItems(response)) {
    const id = obj(item.id);
    if (id.kind !== undefined && id.kind !== 'youtube#channel') continue;
    const channelId = str(id.channelId);
    if (!channelId) continue;
    const hit: SearchChannelHit = { channelId };
    const title = str(obj(item.snippet).title);
    if (title) hit.title = decodeEntities(title);
    hits.push(hit);
  }
  return hits;
}

/** Videos of a search.list response (type=video), titles and descriptions decoded. */
export function videosFromSearch(response: unknown): VideoRecord[] {
  const videos: VideoRecord[] = [];
  for (const item of listItems(response)) {
    const videoId = str(obj(item.id).videoId);
    const snippet = obj(item.snippet);
    const channelId = str(snippet.channelId);
    if (!videoId || !channelId) continue;
    const record: VideoRecord = { videoId, channelId };
    const title = str(snippet.title);
    if (title) record.title = decodeEntities(title);
    const description = str(snippet.description);
    if (description) record.description = decodeEntities(description);
    const uploadDate = isoDate(snippet.publishedAt);
    if (uploadDate) record.uploadDate = uploadDate;
    const thumbnailUrl = bestThumbnail(snippet.thumbnails);
    if (thumbnailUrl) record.thumbnailUrl = thumbnailUrl;
    videos.push(record);
  }
  return videos;
}

// ---------------------------------------------------------------------------------------------
// Videos
// ---------------------------------------------------------------------------------------------

/** A videos.list item: the video is publicly reachable, so availability is 'live'. */
export function videoFromApi(item: unknown, fallbackChannelId?: string): VideoRecord | undefined {
  const video = obj(item);
  const videoId = str(video.id);
  const snippet = obj(video.snippet);
  const channelId = str(snippet.channelId) ?? fallbackChannelId;
  if (!videoId || !channelId) return undefined;
  const details = obj(video.contentDetails);
  const record: VideoRecord = { videoId, channelId, availability: 'live' };
  const title = str(snippet.title);
  if (title) record.title = title;
  const description = str(snippet.description);
  if (description) record.description = description;
  const duration = parseIsoDuration(details.duration);
  // A stream that is live or scheduled reports P0D: its length is not known yet, not zero.
  const broadcast = str(snippet.liveBroadcastContent);
  if (duration !== undefined && !(duration === 0 && (broadcast === 'live' || broadcast === 'upcoming'))) record.durationSeconds = duration;
  const views = count(obj(video.statistics).viewCount);
  if (views !== undefined) record.viewCount = views;
  const uploadDate = isoDate(snippet.publishedAt);
  if (uploadDate) record.uploadDate = uploadDate;
  const thumbnailUrl = bestThumbnail(snippet.thumbnails);
  if (thumbnailUrl) record.thumbnailUrl = thumbnailUrl;
  if (Array.isArray(snippet.tags)) {
    const tags = snippet.tags.filter((tag): tag is string => typeof tag === 'string' && tag !== '');
    if (tags.length > 0) record.tags = tags;
  }
  const language = str(snippet.defaultAudioLanguage) ?? str(snippet.defaultLanguage);
  if (language) record.language = language;
  return record;
}

/** The video id of a playlistItems.list item (contentDetails.videoId, else snippet.resourceId). */
export function playlistItemVideoId(item: unknown): string | undefined {
  const entry = obj(item);
  const fromDetails = str(obj(entry.contentDetails).videoId);
  if (fromDetails) return fromDetails;
  const resource = obj(obj(entry.snippet).resourceId);
  if (resource.kind !== undefined && resource.kind !== 'youtube#video') return undefined;
  return str(resource.videoId);
}

/** Placeholders the API puts in playlist entries of videos that are gone or private: not real titles. */
const PLACEHOLDER_TITLES = new Set(['Deleted video', 'Private video']);
const PLACEHOLDER_DESCRIPTIONS = new Set(['This video is unavailable.', 'This video is private.']);

/**
 * A playlist entry on its own: what the playlist knows of a video that videos.list no longer returns
 * (deleted, private, blocked). Placeholder titles ("Deleted video") are not kept as titles; the
 * upload date is contentDetails.videoPublishedAt or, failing it, when the entry was added to the
 * playlist (for an uploads playlist, the upload time).
 */
export function videoFromPlaylistItem(
  item: unknown,
  channelId: string,
  availability: VideoRecord['availability'] = 'deleted',
): VideoRecord | undefined {
  const videoId = playlistItemVideoId(item);
  if (!videoId) return undefined;
  const entry = obj(item);
  const snippet = obj(entry.snippet);
  const details = obj(entry.contentDetails);
  const record: VideoRecord = { videoId, channelId: str(snippet.videoOwnerChannelId) ?? channelId };
  if (availability) record.availability = availability;
  const title = str(snippet.title);
  if (title && !PLACEHOLDER_TITLES.has(title)) record.title = title;
  const description = str(snippet.description);
  if (description && !PLACEHOLDER_DESCRIPTIONS.has(description)) record.description = description;
  const uploadDate = isoDate(details.videoPublishedAt) ?? isoDate(snippet.publishedAt);
  if (uploadDate) record.uploadDate = uploadDate;
  const thumbnailUrl = bestThumbnail(snippet.thumbnails);
  if (thumbnailUrl) record.thumbnailUrl = thumbnailUrl;
  return record;
}

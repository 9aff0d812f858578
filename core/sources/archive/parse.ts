/**
 * Turns one parsed yt-dlp / youtube-dl JSON document into channel and video records. Pure: no
 * file access here; the files found beside the document are handed in by the scanner.
 *
 * Tolerant of every era: modern full dumps (2023+: channel_id, uploader_id "@handle",
 * channel_follower_count, language, availability), youtube-dl-era dumps (uploader_id = UC id or
 * legacy user name, channel_id sometimes missing), channel-level info.json (`_type: playlist`,
 * extractor youtube:tab, avatar/banner thumbnails), `--flat-playlist` dumps (entries of
 * `_type: url`), `-J` playlist dumps with full entries, and nested tab playlists.
 */
import { CHANNEL_ID, VIDEO_ID } from '../../youtube/channelQuery.ts';
import { readTrackNames } from '../../youtube/infoJsonTracks.ts';
import type { ChannelRecord, VideoRecord } from '../types.ts';

type Obj = Record<string, unknown>;

/** Names a channel can be reached by besides its id and handle (lower-cased by the index, not here). */
export interface ChannelNames {
  /** youtube.com/c/<name> and legacy youtube.com/<name> */
  customNames: string[];
  /** youtube.com/user/<name>, and youtube-dl-era uploader_id values that are neither UC ids nor handles */
  userNames: string[];
}

/** Files found beside the document (same base name), as absolute paths or file URLs. */
interface Siblings {
  /** file:// URL of the chosen media file */
  mediaUrl?: string;
  /** file:// URL of the thumbnail yt-dlp wrote beside it (--write-thumbnail) */
  thumbnailUrl?: string;
  /** Subtitle files: yt-dlp's names of their tracks (`<base>.<name>.<ext>`: en, en-uYU-mmqFLq8, live_chat), read by captionsOf. */
  subtitleLanguages: string[];
}

export type ParsedItem =
  | {
      kind: 'video';
      /** channelId is '' when the document does not say (merging may fill it in). */
      video: VideoRecord;
      /** true for `--flat-playlist` entries, which carry a few fields only. */
      partial: boolean;
      /** yt-dlp's `epoch` (when the document was written), 0 when absent. */
      epoch: number;
    }
  | {
      kind: 'channel';
      channel: ChannelRecord;
      names: ChannelNames;
      /** 2 = a channel-level document (the channel's own page), 1 = learnt from a video or a playlist. */
      rank: 1 | 2;
      epoch: number;
    };

export type ParseOutcome =
  | { ok: true; items: ParsedItem[] }
  /** Not a YouTube yt-dlp document (another extractor, or not yt-dlp output at all). */
  | { ok: false; skipped: true; reason: string }
  /** Looks like yt-dlp output but is unusable (no id, not an object…). */
  | { ok: false; skipped: false; reason: string };

export interface ParseContext {
  /** file:// URL of the document, kept as provenance. */
  evidenceUrl: string;
  /** Its path inside the archive folder (archiveFileName). */
  evidencePath?: string;
  siblings?: Siblings;
}

const MAX_DEPTH = 4;
const PLACEHOLDER_TITLES = /^\[(?:deleted|private|unavailable) video\]$/i;
const TAB_TITLE = / - (?:Videos|Shorts|Live|Streams|Home|Podcasts|Releases|Playlists|Uploads)$/;
const RESERVED_PATHS = new Set([
  'watch',
  'results',
  'playlist',
  'feed',
  'hashtag',
  'shorts',
  'live',
  'embed',
  'channel',
  'c',
  'user',
  'v',
  'e',
]);

// ---------------------------------------------------------------------------------------------
// Field helpers

const isObj = (value: unknown): value is Obj => typeof value === 'object' && value !== null && !Array.isArray(value);

function str(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed ? trimmed : undefined;
}

/** A finite, non-negative number; numeric strings are accepted (some tools stringify). */
function num(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : undefined;
  if (typeof value === 'string' && /^\d+(?:\.\d+)?$/.test(value.trim())) return Number(value);
  return undefined;
}

function int(value: unknown): number | undefined {
  const n = num(value);
  return n === undefined ? undefined : Math.round(n);
}

/** "1:02:03" / "4:05" / "19" → seconds. */
function durationFromString(value: unknown): number | undefined {
  const s = str(value);
  if (!s || !/^\d+(?::\d{1,2}){0,2}$/.test(s)) return undefined;
  return s.split(':').reduce((total, part) => total * 60 + Number(part), 0);
}

function validDate(y: number, m: number, d: number): boolean {
  const date = new Date(Date.UTC(y, m - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d && y >= 1990 && y <= 2200;
}

/** YYYYMMDD (or YYYY-MM-DD) → YYYY-MM-DD. */
function ymd(value: unknown): string | undefined {
  const s = str(value);
  const match = s && /^(\d{4})-?(\d{2})-?(\d{2})$/.exec(s);
  if (!match) return undefined;
  const [, y, m, d] = match;
  return validDate(Number(y), Number(m), Number(d)) ? `${y}-${m}-${d}` : undefined;
}

/** Unix seconds → ISO 8601 instant; nothing before 1990 (not a time this archive can hold). */
function instantFromSeconds(value: unknown): string | undefined {
  const seconds = num(value);
  if (seconds === undefined || seconds < 631_152_000 /* 1990 */) return undefined;
  const date = new Date(seconds * 1000);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** Unix seconds → YYYY-MM-DD (UTC, as yt-dlp derives upload_date). */
function dateFromTimestamp(value: unknown): string | undefined {
  return instantFromSeconds(value)?.slice(0, 10);
}

function stringList(value: unknown): string[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.filter((v): v is string => typeof v === 'string' && v.trim() !== '');
}

function httpUrl(value: unknown): string | undefined {
  const s = str(value);
  return s && /^https?:\/\//i.test(s) ? s : undefined;
}

interface UrlFacts {
  channelId?: string;
  handle?: string;
  customName?: string;
  userName?: string;
}

/** What a channel_url / uploader_url says: /channel/UC…, /@handle, /c/name, /user/name, /name. */
function channelUrlFacts(value: unknown): UrlFacts {
  const s = str(value);
  if (!s) return {};
  let url: URL;
  try {
    url = new URL(/^[a-z]+:\/\//i.test(s) ? s : `https://${s}`);
  } catch {
    return {};
  }
  if (!/(?:^|\.)youtube\.com$/i.test(url.hostname)) return {};
  const parts = url.pathname
    .split('/')
    .filter(Boolean)
    .map((part) => {
      try {
        return decodeURIComponent(part);
      } catch {
        return part;
      }
    });
  const [first, second] = parts;
  if (!first) return {};
  if (first.startsWith('@') && first.length > 1) return { handle: first };
  if (first === 'channel' && second && CHANNEL_ID.test(second)) return { channelId: second };
  if (first === 'c' && second) return { customName: second };
  if (first === 'user' && second) return { userName: second };
  if (parts.length <= 2 && !RESERVED_PATHS.has(first)) return { customName: first };
  return {};
}

/** channel_id, else uploader_id when it is a UC id, else the id in channel_url / uploader_url. */
function channelIdOf(obj: Obj): string | undefined {
  const direct = str(obj.channel_id);
  if (direct && CHANNEL_ID.test(direct)) return direct;
  const uploaderId = str(obj.uploader_id);
  if (uploaderId && CHANNEL_ID.test(uploaderId)) return uploaderId;
  return channelUrlFacts(obj.channel_url).channelId ?? channelUrlFacts(obj.uploader_url).channelId;
}

interface Thumb {
  url: string;
  id?: string;
  width?: number;
  height?: number;
  preference?: number;
}

function thumbs(value: unknown): Thumb[] {
  if (!Array.isArray(value)) return [];
  const out: Thumb[] = [];
  for (const t of value) {
    if (!isObj(t)) continue;
    const url = httpUrl(t.url);
    if (!url) continue;
    const id = t.id === undefined || t.id === null ? undefined : String(t.id);
    const preference = typeof t.preference === 'number' ? t.preference : undefined;
    out.push({ url, id, width: num(t.width), height: num(t.height), preference });
  }
  return out;
}

const area = (t: Thumb) => (t.width ?? 0) * (t.height ?? 0);

/** yt-dlp's own pick (`thumbnail`), else the thumbnail it prefers most, else the largest. */
function bestVideoThumbnail(obj: Obj): string | undefined {
  const direct = httpUrl(obj.thumbnail);
  if (direct) return direct;
  const list = thumbs(obj.thumbnails);
  if (!list.length) return undefined;
  let best = list[list.length - 1]!;
  for (const t of list) {
    const better =
      (t.preference ?? -1e9) !== (best.preference ?? -1e9) ? (t.preference ?? -1e9) > (best.preference ?? -1e9) : area(t) > area(best);
    if (better) best = t;
  }
  return best.url;
}

function channelArt(obj: Obj): { avatarUrl?: string; bannerUrl?: string } {
  const list = thumbs(obj.thumbnails);
  if (!list.length) return {};
  const avatar =
    list.find((t) => t.id === 'avatar_uncropped') ??
    list.filter((t) => t.width && t.width === t.height).sort((a, b) => area(b) - area(a))[0];
  const banner =
    list.find((t) => t.id === 'banner_uncropped') ??
    list.filter((t) => t.width && t.height && t.width / t.height >= 3).sort((a, b) => area(b) - area(a))[0];
  return { avatarUrl: avatar?.url, bannerUrl: banner?.url };
}

function dropUndefined<T extends object>(record: T): T {
  for (const key of Object.keys(record) as Array<keyof T>) if (record[key] === undefined) delete record[key];
  return record;
}

/** Whether a non-YouTube extractor wrote this (another site in the same archive). */
function foreignExtractor(obj: Obj): string | undefined {
  const extractor = str(obj.extractor_key) ?? str(obj.extractor) ?? str(obj.ie_key);
  return extractor && !/^youtube/i.test(extractor) ? extractor : undefined;
}

// ---------------------------------------------------------------------------------------------
// Captions

/** The caption tracks of the subtitle files beside the document (core/youtube/infoJsonTracks.ts), one entry per language and kind. */
function captionsOf(obj: Obj, siblings: Siblings | undefined): VideoRecord['captions'] {
  if (!siblings) return undefined;
  const seen = new Map<string, { language: string; kind: 'manual' | 'auto' }>();
  for (const track of readTrackNames(obj, siblings.subtitleLanguages)) {
    const kind = track.kind === 'manual' ? 'manual' : 'auto';
    seen.set(`${track.language}\0${kind}`, { language: track.language, kind });
  }
  if (!seen.size) return undefined;
  return [...seen.values()].sort((a, b) => (a.language < b.language ? -1 : a.language > b.language ? 1 : a.kind < b.kind ? -1 : 1));
}

// ---------------------------------------------------------------------------------------------
// Records

function channelFrom(obj: Obj, channelId: string, rank: 1 | 2, epoch: number, channelTab: boolean): ParsedItem {
  const uploaderId = str(obj.uploader_id);
  const fromUploaderUrl = channelUrlFacts(obj.uploader_url);
  const fromChannelUrl = channelUrlFacts(obj.channel_url);
  const handle = [uploaderId, str(obj.uploader_handle), fromUploaderUrl.handle, fromChannelUrl.handle].find(
    (h) => h?.startsWith('@') && h.length > 1,
  );
  const customNames = [fromUploaderUrl.customName, fromChannelUrl.customName].filter((n): n is string => !!n);
  const userNames = [fromUploaderUrl.userName, fromChannelUrl.userName].filter((n): n is string => !!n);
  // youtube-dl era: uploader_id was the legacy user name when the channel had one.
  if (
    uploaderId &&
    !uploaderId.startsWith('@') &&
    !CHANNEL_ID.test(uploaderId) &&
    uploaderId !== channelId &&
    !customNames.includes(uploaderId)
  ) {
    userNames.push(uploaderId);
  }
  const playlistTitle = str(obj.title);
  const title = str(obj.channel) ?? str(obj.uploader) ?? (channelTab && playlistTitle ? playlistTitle.replace(TAB_TITLE, '') : undefined);
  const channel: ChannelRecord = dropUndefined({
    channelId,
    title,
    handle,
    customUrl: customNames[0],
    subscriberCount: int(obj.channel_follower_count) ?? int(obj.subscriber_count),
    ...(channelTab ? { description: str(obj.description), ...channelArt(obj) } : {}),
  });
  return { kind: 'channel', channel, names: { customNames: [...new Set(customNames)], userNames: [...new Set(userNames)] }, rank, epoch };
}

/** yt-dlp `availability` values of a video the platform serves to anyone with its link (an age gate asks only for a sign-in). */
const SERVED_TO_ANYONE = new Set(['public', 'unlisted', 'needs_auth']);

/**
 * When a document shows the platform serving the video: a full extraction is one, made at yt-dlp's
 * `epoch`; without it, at the upload time (`timestamp`, else the upload date), which the video
 * outlived. Flat entries (placeholders of deleted videos among them) and private or members-only
 * videos are no such observation.
 */
function servedAt(obj: Obj, partial: boolean, epoch: number, uploadDate: string | undefined): string | undefined {
  const availability = str(obj.availability);
  if (partial || (availability && !SERVED_TO_ANYONE.has(availability))) return undefined;
  return instantFromSeconds(epoch) ?? instantFromSeconds(obj.timestamp) ?? (uploadDate && `${uploadDate}T00:00:00.000Z`);
}

function videoFrom(obj: Obj, id: string, channelId: string, ctx: ParseContext, partial: boolean, epoch: number): ParsedItem {
  const rawTitle = str(obj.title) ?? str(obj.fulltitle);
  const title = rawTitle && !PLACEHOLDER_TITLES.test(rawTitle) ? rawTitle : undefined;
  const duration = num(obj.duration);
  const uploadDate =
    ymd(obj.upload_date) ?? dateFromTimestamp(obj.timestamp) ?? ymd(obj.release_date) ?? dateFromTimestamp(obj.release_timestamp);
  const observedAt = servedAt(obj, partial, epoch, uploadDate);
  const video: VideoRecord = dropUndefined({
    videoId: id,
    channelId,
    title,
    description: typeof obj.description === 'string' && (obj.description !== '' || !partial) ? obj.description : undefined,
    durationSeconds: duration !== undefined ? Math.round(duration) : durationFromString(obj.duration_string),
    viewCount: int(obj.view_count),
    uploadDate,
    thumbnailUrl: bestVideoThumbnail(obj),
    videoFileUrl: partial ? undefined : ctx.siblings?.mediaUrl,
    thumbnailFileUrl: partial ? undefined : ctx.siblings?.thumbnailUrl,
    tags: stringList(obj.tags),
    language: str(obj.language),
    // Live when downloaded, not necessarily now: the time goes with it, and newer observations win.
    availability: observedAt ? 'live' : 'unknown',
    observedAt,
    captions: partial ? undefined : captionsOf(obj, ctx.siblings),
    evidenceUrl: ctx.evidenceUrl,
    evidencePath: ctx.evidencePath,
  });
  return { kind: 'video', video, partial, epoch };
}

function isFlatVideoEntry(entry: Obj): boolean {
  const type = str(entry._type);
  if (type !== 'url' && type !== 'url_transparent') return false;
  const ieKey = str(entry.ie_key);
  if (ieKey) return ieKey === 'Youtube';
  const url = str(entry.url) ?? '';
  return /youtube\.com\/(?:watch|shorts\/)|youtu\.be\//.test(url) || /^[A-Za-z0-9_-]{11}$/.test(url);
}

/** Whether a full (not flat) video document: yt-dlp writes these fields only after extraction. */
function looksExtracted(obj: Obj): boolean {
  return 'formats' in obj || 'upload_date' in obj || 'extractor' in obj || 'webpage_url' in obj || 'subtitles' in obj;
}

function parseVideoDoc(
  obj: Obj,
  ctx: ParseContext,
  fallbackChannelId: string | undefined,
  partial: boolean,
  epoch: number,
  out: ParsedItem[],
): void {
  const id = str(obj.id) ?? str(obj.display_id);
  // An entry whose id is not a YouTube video id could never be stored (see invalidIdReason).
  if (!id || !VIDEO_ID.test(id)) return;
  const channelId = channelIdOf(obj) ?? fallbackChannelId ?? '';
  out.push(videoFrom(obj, id, channelId, ctx, partial, epoch));
  if (channelId && (!partial || str(obj.channel_id))) out.push(channelFrom(obj, channelId, 1, epoch, false));
}

function parsePlaylistDoc(
  obj: Obj,
  ctx: ParseContext,
  parentChannelId: string | undefined,
  epoch: number,
  depth: number,
  out: ParsedItem[],
): void {
  const id = str(obj.id);
  const ownChannelId = channelIdOf(obj);
  const title = str(obj.title) ?? '';
  const pageFacts = channelUrlFacts(obj.webpage_url);
  const channelTab =
    !!ownChannelId &&
    (id === ownChannelId ||
      (!!id && id.startsWith('UU') && id.slice(2) === ownChannelId.slice(2)) ||
      TAB_TITLE.test(title) ||
      pageFacts.channelId === ownChannelId ||
      !!pageFacts.handle);
  if (ownChannelId) out.push(channelFrom(obj, ownChannelId, channelTab ? 2 : 1, epoch, channelTab));
  // The entries of a channel's tab are that channel's; those of another playlist may be anyone's.
  const entryChannelId = channelTab ? ownChannelId : parentChannelId;
  if (!Array.isArray(obj.entries) || depth >= MAX_DEPTH) return;
  // Files beside a playlist document are the playlist's, not its entries'.
  const entryCtx: ParseContext = {
    evidenceUrl: ctx.evidenceUrl,
    ...(ctx.evidencePath === undefined ? {} : { evidencePath: ctx.evidencePath }),
  };
  for (const entry of obj.entries) {
    if (!isObj(entry) || foreignExtractor(entry)) continue;
    const type = str(entry._type);
    if (type === 'playlist' || Array.isArray(entry.entries)) {
      parsePlaylistDoc(entry, entryCtx, entryChannelId, num(entry.epoch) ?? epoch, depth + 1, out);
    } else if (type === 'url' || type === 'url_transparent') {
      if (isFlatVideoEntry(entry)) parseVideoDoc(entry, entryCtx, entryChannelId, true, epoch, out);
    } else {
      parseVideoDoc(entry, entryCtx, entryChannelId, !looksExtracted(entry), num(entry.epoch) ?? epoch, out);
    }
  }
}

/**
 * Why a video document's ids cannot be YouTube's (hand-edited or anonymised files exist in the wild,
 * e.g. id "ABC123", channel "UCEABC123"); the database would refuse them.
 */
function invalidIdReason(obj: Obj): string | undefined {
  const id = str(obj.id) ?? str(obj.display_id);
  if (id && !VIDEO_ID.test(id)) return `video id ${JSON.stringify(id)} is not a YouTube video id (11 letters, digits, - or _)`;
  const channelId = str(obj.channel_id);
  if (channelId && !CHANNEL_ID.test(channelId))
    return `channel id ${JSON.stringify(channelId)} is not a YouTube channel id (UC and 22 letters, digits, - or _)`;
  return undefined;
}

/** Whether a JSON document looks like something yt-dlp / youtube-dl wrote. */
export function looksLikeYtDlp(data: unknown): boolean {
  if (!isObj(data) || typeof data.id !== 'string') return false;
  return (
    'extractor' in data || 'extractor_key' in data || '_type' in data || 'webpage_url' in data || 'ie_key' in data || 'formats' in data
  );
}

/**
 * Records of one yt-dlp document. Video documents give a video record (+ the channel as the video
 * describes it); playlist documents give the channel (when they name one) and their entries.
 */
export function parseYtDlpDocument(data: unknown, ctx: ParseContext): ParseOutcome {
  if (!isObj(data)) return { ok: false, skipped: false, reason: 'not a JSON object' };
  const foreign = foreignExtractor(data);
  if (foreign) return { ok: false, skipped: true, reason: `not a YouTube document (extractor ${foreign})` };
  const epoch = num(data.epoch) ?? 0;
  const out: ParsedItem[] = [];
  const type = str(data._type);
  if (type === 'playlist' || type === 'multi_video' || Array.isArray(data.entries)) {
    if (!str(data.id) && !channelIdOf(data)) return { ok: false, skipped: false, reason: 'playlist document without an id' };
    parsePlaylistDoc(data, ctx, undefined, epoch, 0, out);
  } else if (type === 'url' || type === 'url_transparent') {
    if (isFlatVideoEntry(data)) parseVideoDoc(data, ctx, undefined, true, epoch, out);
  } else {
    if (!str(data.id) && !str(data.display_id)) return { ok: false, skipped: false, reason: 'no video id' };
    const invalid = invalidIdReason(data);
    if (invalid) return { ok: false, skipped: false, reason: invalid };
    parseVideoDoc(data, ctx, undefined, !looksExtracted(data), epoch, out);
  }
  return { ok: true, items: out };
}

/**
 * Pure parsing for the Wayback Machine source: CDX answers (plain text and JSON, with resume keys),
 * archived watch pages (the embedded player response of 2019+ pages, `ytplayer.config` of 2014-2020
 * pages, schema.org meta tags of older ones), removal notices, channel pages and channel listings.
 * No network here; core/sources/wayback.ts does the fetching.
 */
import { CHANNEL_ID, VIDEO_ID } from '../youtube/channelQuery.ts';
import { looksLikeBotCheck } from './http.ts';
import type { VideoRecord } from './types.ts';

// ---------------------------------------------------------------------------------------------
// CDX
// ---------------------------------------------------------------------------------------------

/** The CDX fields the Wayback serves, in its default order. */
export const CDX_FIELDS = ['urlkey', 'timestamp', 'original', 'mimetype', 'statuscode', 'digest', 'length'] as const;
export type CdxField = (typeof CDX_FIELDS)[number];

/** One capture as the CDX lists it; `statuscode` is "-" for warc/revisit rows. */
export type CdxRow = Partial<Record<CdxField, string>> & { timestamp: string; original: string };

export interface CdxPage {
  rows: CdxRow[];
  /** Given (as printed, still URL-encoded) when the query has more rows; pass it back as `resumeKey`. */
  resumeKey?: string;
}

export class CdxFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CdxFormatError';
  }
}

const TIMESTAMP = /^\d{14}$/;

function toRow(values: string[], fields: readonly string[]): CdxRow | undefined {
  let cells = values;
  // An original URL with a raw space would split into more cells than fields: glue it back.
  const originalAt = fields.indexOf('original');
  if (cells.length > fields.length && originalAt >= 0) {
    const extra = cells.length - fields.length;
    cells = [...cells.slice(0, originalAt), cells.slice(originalAt, originalAt + extra + 1).join('%20'), ...cells.slice(originalAt + extra + 1)];
  }
  if (cells.length !== fields.length) return undefined;
  const row: Record<string, string> = {};
  fields.forEach((field, index) => {
    row[field] = cells[index]!;
  });
  if (!row.timestamp || !TIMESTAMP.test(row.timestamp) || !row.original) return undefined;
  return row as CdxRow;
}

/**
 * Parses a CDX answer: the default space-separated lines (fields in `fields` order, the `fl` asked
 * for) or `output=json` (a header row, then rows). With showResumeKey the text form ends with a blank
 * line and the key; the JSON form with `[]` and `[key]`. Rows repeated verbatim (the Wayback's
 * indexes overlap) are given once.
 */
export function parseCdx(body: string, fields: readonly string[] = CDX_FIELDS): CdxPage {
  const text = body.replace(/^\uFEFF/, '');
  const trimmed = text.trimStart();
  const rows: CdxRow[] = [];
  const seen = new Set<string>();
  const push = (key: string, row: CdxRow | undefined) => {
    if (!row || seen.has(key)) return;
    seen.add(key);
    rows.push(row);
  };
  if (trimmed.startsWith('[')) {
    let data: unknown;
    try {
      data = JSON.parse(trimmed);
    } catch {
      throw new CdxFormatError('CDX answer is not valid JSON');
    }
    if (!Array.isArray(data)) throw new CdxFormatError('CDX JSON answer is not an array');
    if (data.length === 0) return { rows };
    const header = data[0];
    if (!Array.isArray(header) || !header.every((cell) => typeof cell === 'string')) throw new CdxFormatError('CDX JSON answer has no header row');
    let resumeKey: string | undefined;
    for (let index = 1; index < data.length; index++) {
      const entry = data[index];
      if (!Array.isArray(entry)) continue;
      if (entry.length === 0) {
        const key = data[index + 1];
        if (Array.isArray(key) && typeof key[0] === 'string' && key[0]) resumeKey = key[0];
        break;
      }
      const cells = entry.map((cell) => String(cell));
      push(cells.join(' '), toRow(cells, header as string[]));
    }
    return resumeKey ? { rows, resumeKey } : { rows };
  }
  if (/^<(?:!doctype|html|\?xml)/i.test(trimmed)) throw new CdxFormatError('CDX answered with a page, not an index');
  const lines = text.split(/\r?\n/);
  let resumeKey: string | undefined;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!.trim();
    if (!line) {
      // After the blank line comes the resume key (the last non-empty line).
      const rest = lines.slice(index + 1).map((entry) => entry.trim()).filter(Boolean);
      if (rest.length === 1 && !rest[0]!.includes(' ')) resumeKey = rest[0];
      else if (rest.length > 0) continue; // a stray blank line between rows
      break;
    }
    push(line, toRow(line.split(/ +/), fields));
  }
  return resumeKey ? { rows, resumeKey } : { rows };
}

/** "com,cnn)/ 20010414005939": the position of a row in the index, for resuming within a page. */
export const rowPosition = (row: CdxRow): string => `${row.urlkey ?? ''} ${row.timestamp}`;

// ---------------------------------------------------------------------------------------------
// Small text helpers
// ---------------------------------------------------------------------------------------------

const NAMED_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', '#39': "'" };

export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+|#39);/gi, (whole, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number.parseInt(name.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED_ENTITIES[name.toLowerCase()] ?? whole;
  });
}

/** Visible text of an HTML fragment: <br> become line breaks, tags go, entities are decoded. */
export function htmlToText(fragment: string): string {
  const text = fragment
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(?:p|div|li)>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/[ \t\r\f\v]+/g, ' ');
  return decodeEntities(text)
    .split('\n')
    .map((line) => line.trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Strips the Wayback's rewriting ("https://web.archive.org/web/2020…im_/https://i.ytimg.com/…"). */
export function unwrapArchiveUrl(url: string): string {
  let value = url.trim();
  for (let i = 0; i < 3; i++) {
    const match = /^(?:https?:)?(?:\/\/web\.archive\.org)?\/web\/\d{1,14}[a-z]{0,3}_?\/(.+)$/i.exec(value);
    if (!match) break;
    value = match[1]!;
  }
  if (value.startsWith('//')) value = `https:${value}`;
  return value;
}

function attributes(tag: string): Record<string, string> {
  const result: Record<string, string> = {};
  const pattern = /([a-zA-Z_:][-a-zA-Z0-9_:.]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/g;
  for (const match of tag.matchAll(pattern)) {
    const name = match[1]!.toLowerCase();
    if (!(name in result)) result[name] = decodeEntities(match[2] ?? match[3] ?? match[4] ?? '');
  }
  return result;
}

/** Every `<meta>` and `<link>` tag of a page, as attribute maps. */
function headTags(html: string): Array<Record<string, string> & { tag: string }> {
  const tags: Array<Record<string, string> & { tag: string }> = [];
  for (const match of html.matchAll(/<(meta|link)\b[^>]*>/gi)) tags.push({ ...attributes(match[0]), tag: match[1]!.toLowerCase() });
  return tags;
}

function metaValues(tags: ReturnType<typeof headTags>, key: 'name' | 'property' | 'itemprop', value: string): string[] {
  const out: string[] = [];
  for (const tag of tags) if (tag.tag === 'meta' && tag[key]?.toLowerCase() === value && tag.content !== undefined) out.push(tag.content);
  return out;
}

function linkHref(tags: ReturnType<typeof headTags>, key: 'rel' | 'itemprop', value: string): string | undefined {
  return tags.find((tag) => tag.tag === 'link' && tag[key]?.toLowerCase() === value && tag.href)?.href;
}

const GENERIC_TITLES = /^(?:youtube|-?\s*youtube|broadcast yourself\.?|youtube - broadcast yourself\.?|before you continue(?: to youtube)?|404 not found|error 404.*)$/i;

function cleanTitle(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const title = decodeEntities(value).replace(/\s+/g, ' ').trim().replace(/\s*-\s*YouTube$/i, '').replace(/^YouTube\s*-\s*/i, '').trim();
  return title && !GENERIC_TITLES.test(title) ? title : undefined;
}

function toInt(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const digits = value.replace(/[,.\s\u00a0\u202f]/g, '');
  if (!/^\d{1,16}$/.test(digits)) return undefined;
  const number = Number(digits);
  return Number.isSafeInteger(number) ? number : undefined;
}

/** "PT4M13S", "PT1H2M3S", "P0D" (ISO 8601 as itemprop=duration gives it) to seconds. */
export function parseIsoDuration(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const match = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/i.exec(value.trim());
  if (!match) return undefined;
  const [, d, h, m, s] = match;
  return Number(d ?? 0) * 86_400 + Number(h ?? 0) * 3_600 + Number(m ?? 0) * 60 + Math.round(Number(s ?? 0));
}

/** "4:13", "1:02:03" (lengthText of listings) to seconds. */
export function parseClockDuration(value: string | undefined): number | undefined {
  if (!value || !/^\d{1,3}(?::\d{1,2}){1,2}$/.test(value.trim())) return undefined;
  return value
    .trim()
    .split(':')
    .reduce((total, part) => total * 60 + Number(part), 0);
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** YYYY-MM-DD from "2022-08-04T12:59:59-07:00", "2012-05-21", "May 21, 2012" or "21 May 2012". */
export function normaliseDate(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const text = value.trim();
  const iso = /^(\d{4})-(\d{2})-(\d{2})(?:$|[T ])/.exec(text);
  if (iso) return valid(Number(iso[1]), Number(iso[2]), Number(iso[3]));
  const us = /^([A-Za-z]{3,9})\.? (\d{1,2}),? (\d{4})$/.exec(text);
  if (us) return valid(Number(us[3]), MONTHS.indexOf(us[1]!.slice(0, 3).toLowerCase()) + 1, Number(us[2]));
  const eu = /^(\d{1,2}) ([A-Za-z]{3,9})\.? (\d{4})$/.exec(text);
  if (eu) return valid(Number(eu[3]), MONTHS.indexOf(eu[2]!.slice(0, 3).toLowerCase()) + 1, Number(eu[1]));
  return undefined;

  function valid(year: number, month: number, day: number): string | undefined {
    if (year < 2005 || year > 2100 || month < 1 || month > 12 || day < 1 || day > 31) return undefined;
    const date = new Date(Date.UTC(year, month - 1, day));
    if (date.getUTCDate() !== day) return undefined;
    return date.toISOString().slice(0, 10);
  }
}

// ---------------------------------------------------------------------------------------------
// Embedded JSON
// ---------------------------------------------------------------------------------------------

/** The balanced `{…}` starting at `start` (which must be `{`), strings and escapes respected. */
export function sliceJsonObject(text: string, start: number): string | undefined {
  if (text.charCodeAt(start) !== 123) return undefined;
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (escaped) escaped = false;
      else if (c === 92) escaped = true;
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 123) depth++;
    else if (c === 125 && --depth === 0) return text.slice(start, i + 1);
  }
  return undefined;
}

function parseObject(text: string | undefined): Record<string, unknown> | undefined {
  if (!text) return undefined;
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Objects a page assigns to a global: `var NAME = {…};`, `window["NAME"] = {…};`, `NAME = {…}`,
 * and `"NAME": {…}` inside other objects.
 */
export function findAssignedObjects(html: string, name: string): Array<Record<string, unknown>> {
  const found: Array<Record<string, unknown>> = [];
  const pattern = new RegExp(`(?:\\b${name}\\b["']?\\s*\\]?\\s*=|["']${name}["']\\s*:)\\s*(?=\\{)`, 'g');
  for (const match of html.matchAll(pattern)) {
    const object = parseObject(sliceJsonObject(html, match.index + match[0].length));
    if (object) found.push(object);
  }
  return found;
}

/** JSON-in-a-string values such as `"player_response":"{\"videoDetails\":…}"`, decoded twice. */
function findStringifiedObjects(html: string, key: string): Array<Record<string, unknown>> {
  const found: Array<Record<string, unknown>> = [];
  const pattern = new RegExp(`["']?${key}["']?\\s*[:=]\\s*"`, 'g');
  for (const match of html.matchAll(pattern)) {
    const open = match.index + match[0].length - 1;
    let end = open + 1;
    for (; end < html.length; end++) {
      const c = html.charCodeAt(end);
      if (c === 92) end++;
      else if (c === 34) break;
    }
    try {
      const inner = JSON.parse(html.slice(open, end + 1)) as unknown;
      if (typeof inner === 'string') {
        const object = parseObject(inner);
        if (object) found.push(object);
      }
    } catch {
      // not a JSON string literal
    }
  }
  return found;
}

const isObject = (value: unknown): value is Record<string, unknown> => !!value && typeof value === 'object' && !Array.isArray(value);
const asObject = (value: unknown): Record<string, unknown> | undefined => (isObject(value) ? value : undefined);
const asString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** Text of `{simpleText}`, `{runs: [{text}]}` or `{content}` (YouTube's formatted strings). */
export function formattedText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  const object = asObject(value);
  if (!object) return undefined;
  if (typeof object.simpleText === 'string') return object.simpleText;
  if (typeof object.content === 'string') return object.content;
  if (Array.isArray(object.runs)) {
    const text = object.runs.map((run) => asString(asObject(run)?.text) ?? '').join('');
    return text || undefined;
  }
  return undefined;
}

function bestThumbnail(value: unknown): string | undefined {
  const list = asObject(value)?.thumbnails;
  if (!Array.isArray(list)) return undefined;
  let best: { url: string; width: number } | undefined;
  for (const entry of list) {
    const object = asObject(entry);
    const url = asString(object?.url);
    if (!url) continue;
    const width = typeof object?.width === 'number' ? object.width : 0;
    if (!best || width >= best.width) best = { url, width };
  }
  return best ? unwrapArchiveUrl(best.url) : undefined;
}

// ---------------------------------------------------------------------------------------------
// Watch pages
// ---------------------------------------------------------------------------------------------

/** What an archived watch page tells of its video (a VideoRecord's fields, channel optional). Absent fields are unknown. */
export type VideoMeta = Pick<VideoRecord, 'videoId'> &
  Partial<Pick<VideoRecord, 'channelId' | 'title' | 'description' | 'durationSeconds' | 'viewCount' | 'uploadDate' | 'thumbnailUrl' | 'tags' | 'captions'>> & {
    /** The channel's name as the page shows it. */
    author?: string;
    /** "http://www.youtube.com/@MrBeast" or "…/user/name" or "…/channel/UC…". */
    ownerProfileUrl?: string;
  };

export type RemovalCategory = 'removed_by_uploader' | 'account_terminated' | 'private' | 'copyright' | 'policy' | 'unavailable';

export type WatchPage =
  | { kind: 'metadata'; meta: VideoMeta }
  | { kind: 'removed'; reason: string; category: RemovalCategory }
  | { kind: 'unusable'; why: string };

/** Removal notices of YouTube's watch pages, 2006 to now. */
const REMOVAL_PHRASES = [
  /This video has been removed by the (?:user|uploader)/i,
  /This video is no longer available because the (?:YouTube )?account associated with this video has been (?:terminated|closed)/i,
  /account associated with this video has been (?:terminated|closed)/i,
  /This video is no longer available due to a copyright claim[^<."]*/i,
  /This video (?:has been|was) removed (?:for|because|due to)[^<."]*/i,
  /This video has been removed[^<."]*/i,
  /This video is private/i,
  /This video is unavailable/i,
  /This video is no longer available/i,
  /This video is not available/i,
  /This video does not exist/i,
  /This video has been deleted/i,
  /Video unavailable/i,
  /Private video/i,
];

export function removalCategory(reason: string): RemovalCategory {
  if (/terminat|account .*closed/i.test(reason)) return 'account_terminated';
  if (/removed by the (?:user|uploader)|deleted/i.test(reason)) return 'removed_by_uploader';
  if (/private/i.test(reason)) return 'private';
  if (/copyright/i.test(reason)) return 'copyright';
  if (/violat|terms of (?:use|service)|guidelines|policy|harass|spam/i.test(reason)) return 'policy';
  return 'unavailable';
}

/** Player responses embedded in a page, in every form YouTube used. */
export function findPlayerResponses(html: string): Array<Record<string, unknown>> {
  const found = [...findAssignedObjects(html, 'ytInitialPlayerResponse')];
  for (const key of ['player_response', 'embedded_player_response', 'PLAYER_RESPONSE']) found.push(...findStringifiedObjects(html, key));
  for (const config of [...findAssignedObjects(html, 'ytplayer\\.config'), ...findAssignedObjects(html, 'PLAYER_CONFIG')]) {
    const args = asObject(config.args);
    for (const key of ['player_response', 'embedded_player_response']) {
      const object = parseObject(asString(args?.[key]));
      if (object) found.push(object);
    }
  }
  return found.filter((object) => isObject(object.videoDetails) || isObject(object.playabilityStatus));
}

/** `ytplayer.config.args` of 2012-2020 pages (title, length_seconds, ucid, author, view_count, keywords). */
function playerArgs(html: string): Record<string, unknown> | undefined {
  for (const config of [...findAssignedObjects(html, 'ytplayer\\.config'), ...findAssignedObjects(html, 'PLAYER_CONFIG')]) {
    const args = asObject(config.args);
    if (args) return args;
  }
  return undefined;
}

function metaFromPlayer(player: Record<string, unknown>, videoId: string): VideoMeta | undefined {
  const details = asObject(player.videoDetails);
  const micro = asObject(asObject(player.microformat)?.playerMicroformatRenderer);
  if (!details || (details.videoId !== undefined && details.videoId !== videoId)) return undefined;
  const title = asString(details.title) ?? formattedText(micro?.title);
  if (!title) return undefined;
  const meta: VideoMeta = { videoId, title };
  const channelId = asString(details.channelId) ?? asString(micro?.externalChannelId);
  if (channelId && CHANNEL_ID.test(channelId)) meta.channelId = channelId;
  const description = asString(details.shortDescription) ?? formattedText(micro?.description);
  if (description !== undefined) meta.description = description;
  const duration = toInt(details.lengthSeconds) ?? toInt(micro?.lengthSeconds);
  if (duration) meta.durationSeconds = duration;
  const views = toInt(details.viewCount) ?? toInt(micro?.viewCount);
  if (views !== undefined) meta.viewCount = views;
  const date = normaliseDate(asString(micro?.uploadDate)) ?? normaliseDate(asString(micro?.publishDate));
  if (date) meta.uploadDate = date;
  const thumbnail = bestThumbnail(details.thumbnail) ?? bestThumbnail(micro?.thumbnail);
  if (thumbnail) meta.thumbnailUrl = thumbnail;
  if (Array.isArray(details.keywords)) {
    const tags = details.keywords.filter((tag): tag is string => typeof tag === 'string' && tag.trim() !== '');
    if (tags.length) meta.tags = tags;
  }
  const author = asString(details.author) ?? asString(micro?.ownerChannelName);
  if (author) meta.author = author;
  const owner = asString(micro?.ownerProfileUrl);
  if (owner) meta.ownerProfileUrl = unwrapArchiveUrl(owner);
  const tracks = asObject(asObject(player.captions)?.playerCaptionsTracklistRenderer)?.captionTracks;
  if (Array.isArray(tracks)) {
    const captions: Array<{ language: string; kind: 'manual' | 'auto' }> = [];
    const keys = new Set<string>();
    for (const entry of tracks) {
      const track = asObject(entry);
      const language = asString(track?.languageCode);
      if (!language) continue;
      const kind = track?.kind === 'asr' || asString(track?.vssId)?.startsWith('a.') ? 'auto' : 'manual';
      if (keys.has(`${kind}:${language}`)) continue;
      keys.add(`${kind}:${language}`);
      captions.push({ language, kind });
    }
    if (captions.length) meta.captions = captions;
  }
  return meta;
}

/** Metadata of pre-2019 watch pages: schema.org meta tags, Open Graph, the eow-* elements, player args. */
function metaFromHtml(html: string, videoId: string): VideoMeta | undefined {
  const tags = headTags(html);
  const pageVideoId = metaValues(tags, 'itemprop', 'videoid')[0];
  if (pageVideoId && pageVideoId !== videoId) return undefined;
  const args = playerArgs(html);
  if (args && asString(args.video_id) && args.video_id !== videoId) return undefined;
  const eowTitle = /<(?:span|h1|h2)[^>]*id="eow-title"[^>]*?(?:title="([^"]*)")?[^>]*>([\s\S]*?)<\/(?:span|h1|h2)>/i.exec(html);
  const title =
    cleanTitle(metaValues(tags, 'name', 'title')[0]) ??
    cleanTitle(metaValues(tags, 'property', 'og:title')[0]) ??
    cleanTitle(metaValues(tags, 'itemprop', 'name')[0]) ??
    cleanTitle(eowTitle?.[1] ?? (eowTitle?.[2] !== undefined ? htmlToText(eowTitle[2]) : undefined)) ??
    cleanTitle(asString(args?.title));
  // Without a title and a sign that the page is this video's, it is not a metadata page.
  const ogUrl = metaValues(tags, 'property', 'og:url')[0] ?? linkHref(tags, 'rel', 'canonical') ?? '';
  const aboutThisVideo =
    pageVideoId === videoId ||
    ogUrl.includes(videoId) ||
    asString(args?.video_id) === videoId ||
    // 2007-2012 pages name their video in the player's flashvars / swfArgs.
    new RegExp(`["']?(?:video_id|VIDEO_ID)["']?\\s*[:=]\\s*["']${videoId}["']|[?&]video_id=${videoId}(?![\\w-])`).test(html);
  if (!title || !aboutThisVideo) return undefined;
  const meta: VideoMeta = { videoId, title };
  const channelId = metaValues(tags, 'itemprop', 'channelid')[0] ?? asString(args?.ucid);
  if (channelId && CHANNEL_ID.test(channelId)) meta.channelId = channelId;
  const eowDescription = /<p[^>]*id="eow-description"[^>]*>([\s\S]*?)<\/p>/i.exec(html);
  const description = eowDescription ? htmlToText(eowDescription[1]!) : (metaValues(tags, 'name', 'description')[0] ?? metaValues(tags, 'property', 'og:description')[0]);
  if (description !== undefined) meta.description = description;
  const duration = parseIsoDuration(metaValues(tags, 'itemprop', 'duration')[0]) ?? toInt(args?.length_seconds);
  if (duration) meta.durationSeconds = duration;
  const viewText = /class="watch-view-count"[^>]*>\s*([\d,.\s\u00a0]+)/i.exec(html)?.[1];
  const views = toInt(metaValues(tags, 'itemprop', 'interactioncount')[0]) ?? toInt(viewText) ?? toInt(args?.view_count);
  if (views !== undefined) meta.viewCount = views;
  const published = /(?:Published|Uploaded|Streamed live) on ([A-Za-z]{3,9}\.? \d{1,2}, \d{4}|\d{1,2} [A-Za-z]{3,9}\.? \d{4})/.exec(html)?.[1];
  const date = normaliseDate(metaValues(tags, 'itemprop', 'datepublished')[0]) ?? normaliseDate(metaValues(tags, 'itemprop', 'uploaddate')[0]) ?? normaliseDate(published);
  if (date) meta.uploadDate = date;
  const thumbnail = linkHref(tags, 'itemprop', 'thumbnailurl') ?? metaValues(tags, 'itemprop', 'thumbnailurl')[0] ?? metaValues(tags, 'property', 'og:image')[0] ?? asString(args?.thumbnail_url);
  if (thumbnail) meta.thumbnailUrl = unwrapArchiveUrl(thumbnail);
  const ogTags = metaValues(tags, 'property', 'og:video:tag').map((tag) => tag.trim()).filter(Boolean);
  const keywords = metaValues(tags, 'name', 'keywords')[0] ?? asString(args?.keywords);
  const list = ogTags.length ? ogTags : (keywords ?? '').split(',').map((tag) => tag.trim()).filter(Boolean);
  if (list.length) meta.tags = list;
  const authorLink = /itemprop="author"[^>]*>\s*<link[^>]*itemprop="url"[^>]*href="([^"]+)"/i.exec(html)?.[1];
  if (authorLink) meta.ownerProfileUrl = unwrapArchiveUrl(decodeEntities(authorLink));
  const author = asString(args?.author) ?? /itemprop="author"[\s\S]{0,400}?itemprop="name"\s+content="([^"]*)"/i.exec(html)?.[1];
  if (author) meta.author = decodeEntities(author);
  return meta;
}

/** Fills what `base` lacks from `extra`. */
function mergeMeta(base: VideoMeta, extra: VideoMeta | undefined): VideoMeta {
  if (!extra) return base;
  const merged: VideoMeta = { ...base };
  for (const [key, value] of Object.entries(extra) as Array<[keyof VideoMeta, unknown]>) {
    if (merged[key] === undefined && value !== undefined) (merged as unknown as Record<string, unknown>)[key] = value;
  }
  return merged;
}

function playabilityTexts(status: Record<string, unknown>): string[] {
  const texts: string[] = [];
  const add = (value: unknown) => {
    const text = formattedText(value)?.trim();
    if (text) texts.push(text);
  };
  const error = asObject(asObject(status.errorScreen)?.playerErrorMessageRenderer);
  add(error?.subreason);
  add(error?.reason);
  if (Array.isArray(status.messages)) status.messages.forEach(add);
  add(status.reason);
  return texts;
}

/** Player errors that are not removals: age gates, region blocks, paid or members-only videos, upcoming lives. */
const NOT_A_REMOVAL = /confirm your age|age[- ]restricted|inappropriate for some users|available in your country|not made this video available|members|requires payment|rent this|premiere|live event|will begin|scheduled/i;

function noticeInHtml(html: string): string | undefined {
  // Visible text only: scripts carry i18n strings such as "This video is unavailable." on every page.
  html = html.replace(/<script\b[\s\S]*?<\/script>/gi, ' ');
  const block = /id="unavailable-message"[^>]*>([\s\S]*?)<\/(?:h1|div|p)>/i.exec(html);
  if (block) {
    const text = htmlToText(block[1]!);
    if (text) {
      const sub = /id="unavailable-submessage"[^>]*>([\s\S]*?)<\/(?:div|p|h2)>/i.exec(html);
      const subText = sub ? htmlToText(sub[1]!) : '';
      return /^(?:sorry about that\.?)?$/i.test(subText) ? text : `${text} ${subText}`.trim();
    }
  }
  for (const phrase of REMOVAL_PHRASES) {
    const match = phrase.exec(html);
    if (match) return decodeEntities(match[0]).trim();
  }
  return undefined;
}

/**
 * What one archived watch (or shorts/embed) page of `videoId` is: the video's metadata, a removal
 * notice (removed by the uploader, account terminated, private, copyright, policy, unavailable), or
 * neither (a bot check, another video, an empty page). Metadata wins when a page has both.
 */
export function classifyWatchPage(html: string, videoId: string): WatchPage {
  const players = findPlayerResponses(html);
  const own = players.filter((player) => {
    const id = asObject(player.videoDetails)?.videoId;
    return id === undefined || id === videoId;
  });
  const fromHtml = metaFromHtml(html, videoId);
  for (const player of own) {
    const meta = metaFromPlayer(player, videoId);
    if (meta) return { kind: 'metadata', meta: mergeMeta(meta, fromHtml) };
  }
  if (players.length > 0 && own.length === 0) return { kind: 'unusable', why: 'the page is about another video' };
  if (fromHtml) return { kind: 'metadata', meta: fromHtml };
  for (const player of own) {
    const status = asObject(player.playabilityStatus);
    if (!status) continue;
    const texts = playabilityTexts(status);
    if (texts.some(looksLikeBotCheck)) return { kind: 'unusable', why: 'an archived bot check' };
    if (texts.some((text) => NOT_A_REMOVAL.test(text))) return { kind: 'unusable', why: `not a removal: ${texts[0]}` };
    const code = asString(status.status) ?? '';
    if (code && code !== 'OK' && code !== 'LIVE_STREAM_OFFLINE') {
      const reason = texts.find((text) => REMOVAL_PHRASES.some((phrase) => phrase.test(text))) ?? texts[0] ?? code;
      return { kind: 'removed', reason, category: removalCategory(texts.join(' ') || reason) };
    }
  }
  if (looksLikeBotCheck(html)) return { kind: 'unusable', why: 'an archived bot check' };
  const notice = noticeInHtml(html);
  if (notice) return { kind: 'removed', reason: notice, category: removalCategory(notice) };
  return { kind: 'unusable', why: 'neither metadata nor a removal notice' };
}

/** The video id a watch, shorts, embed, live or youtu.be URL names (case kept), if any. */
export function videoIdOfUrl(url: string): string | undefined {
  const query = /[?&]v=([A-Za-z0-9_-]{11})(?![A-Za-z0-9_-])/.exec(url);
  if (query && /\/watch\b/i.test(url)) return query[1];
  const path = /(?:youtu\.be\/|\/(?:shorts|embed|live|v|e)\/)([A-Za-z0-9_-]{11})(?![A-Za-z0-9_-])/i.exec(url);
  return path?.[1];
}

// ---------------------------------------------------------------------------------------------
// Channel pages
// ---------------------------------------------------------------------------------------------

export interface ChannelPageInfo {
  channelId?: string;
  title?: string;
  description?: string;
  avatarUrl?: string;
  /** "@name" */
  handle?: string;
  /** The legacy username of youtube.com/user/NAME. */
  legacyUser?: string;
  /** NAME of youtube.com/c/NAME. */
  customName?: string;
  /** The page is a notice that the channel was terminated or does not exist. */
  terminated?: string;
}

const CHANNEL_NOTICE = /This account has been terminated[^<."]*|This channel (?:does not exist|is not available|was removed)[^<."]*|This account has been suspended[^<."]*|This user account has been (?:terminated|suspended|closed)[^<."]*/i;

function namesFromUrl(url: string | undefined, info: ChannelPageInfo): void {
  if (!url) return;
  const value = unwrapArchiveUrl(url);
  const handle = /youtube\.com\/(@[^/?#"&\s]+)/i.exec(value)?.[1];
  if (handle && !info.handle) info.handle = decodeURIComponentSafe(handle);
  const user = /youtube\.com\/user\/([^/?#"&\s]+)/i.exec(value)?.[1];
  if (user && !info.legacyUser) info.legacyUser = decodeURIComponentSafe(user);
  const custom = /youtube\.com\/c\/([^/?#"&\s]+)/i.exec(value)?.[1];
  if (custom && !info.customName) info.customName = decodeURIComponentSafe(custom);
  const id = /youtube\.com\/channel\/(UC[A-Za-z0-9_-]{22})(?![A-Za-z0-9_-])/.exec(value)?.[1];
  if (id && !info.channelId) info.channelId = id;
}

function decodeURIComponentSafe(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** Channel id, names, title, description and avatar of an archived channel page (any layout). */
export function extractChannelInfo(html: string): ChannelPageInfo {
  const info: ChannelPageInfo = {};
  const data = findAssignedObjects(html, 'ytInitialData')[0];
  const metadata = asObject(asObject(data?.metadata)?.channelMetadataRenderer);
  if (metadata) {
    const id = asString(metadata.externalId);
    if (id && CHANNEL_ID.test(id)) info.channelId = id;
    const title = asString(metadata.title);
    if (title) info.title = title;
    const description = asString(metadata.description);
    if (description !== undefined) info.description = description;
    const avatar = bestThumbnail(metadata.avatar);
    if (avatar) info.avatarUrl = avatar;
    namesFromUrl(asString(metadata.vanityChannelUrl), info);
    if (Array.isArray(metadata.ownerUrls)) for (const url of metadata.ownerUrls) namesFromUrl(asString(url), info);
    namesFromUrl(asString(metadata.channelUrl), info);
  }
  const header = asObject(asObject(data?.header)?.c4TabbedHeaderRenderer);
  if (header) {
    const id = asString(header.channelId);
    if (!info.channelId && id && CHANNEL_ID.test(id)) info.channelId = id;
    if (!info.title) info.title = asString(header.title);
    if (!info.avatarUrl) info.avatarUrl = bestThumbnail(header.avatar);
  }
  const tags = headTags(html);
  const metaId = metaValues(tags, 'itemprop', 'channelid')[0];
  if (!info.channelId && metaId && CHANNEL_ID.test(metaId)) info.channelId = metaId;
  if (!info.channelId) {
    const attr = /data-channel-external-id="(UC[A-Za-z0-9_-]{22})"/.exec(html)?.[1];
    if (attr) info.channelId = attr;
  }
  namesFromUrl(linkHref(tags, 'rel', 'canonical'), info);
  namesFromUrl(metaValues(tags, 'property', 'og:url')[0], info);
  if (!info.channelId) {
    const json = /"(?:externalId|channelId|ucid)"\s*:\s*"(UC[A-Za-z0-9_-]{22})"/.exec(html)?.[1];
    if (json) info.channelId = json;
  }
  info.title ??= cleanTitle(metaValues(tags, 'property', 'og:title')[0]) ?? cleanTitle(metaValues(tags, 'name', 'title')[0]) ?? cleanTitle(/<title>([\s\S]*?)<\/title>/i.exec(html)?.[1]);
  if (info.description === undefined) {
    const description = metaValues(tags, 'property', 'og:description')[0] ?? metaValues(tags, 'name', 'description')[0];
    if (description !== undefined) info.description = description;
  }
  if (!info.avatarUrl) {
    const image = metaValues(tags, 'property', 'og:image')[0] ?? linkHref(tags, 'itemprop', 'thumbnailurl') ?? linkHref(tags, 'rel', 'image_src');
    if (image) info.avatarUrl = unwrapArchiveUrl(image);
  }
  if (!info.channelId) {
    const notice = CHANNEL_NOTICE.exec(html)?.[0];
    if (notice) info.terminated = decodeEntities(notice).trim();
  }
  for (const key of Object.keys(info) as Array<keyof ChannelPageInfo>) if (info[key] === undefined) delete info[key];
  return info;
}

// ---------------------------------------------------------------------------------------------
// Listings
// ---------------------------------------------------------------------------------------------

export interface ListedVideo {
  /** True when the page says the video is this channel's, false when it names another channel. */
  owned?: boolean;
  title?: string;
  durationSeconds?: number;
}

const VIDEO_LINK = /(?:watch\?(?:[^"'<>\s]*?&(?:amp;)?)?v=|\/shorts\/|youtu\.be\/)([A-Za-z0-9_-]{11})(?![A-Za-z0-9_-])/g;
const VIDEO_ID_JSON = /\\?["']videoId\\?["']\s*:\s*\\?["']([A-Za-z0-9_-]{11})\\?["']/g;
const VIDEO_ID_ATTR = /data-(?:video-ids?|context-item-id|vid)="([A-Za-z0-9_-]{11})"/g;

function bylineChannel(renderer: Record<string, unknown>): string | undefined {
  for (const key of ['shortBylineText', 'longBylineText', 'ownerText']) {
    const runs = asObject(renderer[key])?.runs;
    if (!Array.isArray(runs)) continue;
    for (const run of runs) {
      const id = asString(asObject(asObject(asObject(run)?.navigationEndpoint)?.browseEndpoint)?.browseId);
      if (id && CHANNEL_ID.test(id)) return id;
    }
  }
  return undefined;
}

function walkRenderers(value: unknown, visit: (object: Record<string, unknown>) => void, depth = 0): void {
  if (depth > 60) return;
  if (Array.isArray(value)) {
    for (const item of value) walkRenderers(item, visit, depth + 1);
  } else if (isObject(value)) {
    visit(value);
    for (const inner of Object.values(value)) if (inner && typeof inner === 'object') walkRenderers(inner, visit, depth + 1);
  }
}

/**
 * The videos a channel listing page (home, /videos, /streams, /shorts, legacy layouts) links to,
 * with the title and owner the page gives when it gives them. `uploadsTab` marks pages that only
 * list the channel's own uploads.
 */
export function extractListedVideos(html: string, channelId: string, uploadsTab: boolean): Map<string, ListedVideo> {
  const found = new Map<string, ListedVideo>();
  const note = (id: string, info: ListedVideo = {}) => {
    if (!VIDEO_ID.test(id)) return;
    const entry = found.get(id) ?? {};
    if (info.owned === true) entry.owned = true;
    else if (info.owned === false && entry.owned === undefined) entry.owned = false;
    if (info.title && !entry.title) entry.title = info.title;
    if (info.durationSeconds && !entry.durationSeconds) entry.durationSeconds = info.durationSeconds;
    found.set(id, entry);
  };
  for (const data of findAssignedObjects(html, 'ytInitialData')) {
    walkRenderers(data, (object) => {
      let id = asString(object.videoId);
      let title = formattedText(object.title) ?? formattedText(object.headline);
      if (!id && typeof object.contentId === 'string' && /VIDEO/i.test(asString(object.contentType) ?? '')) {
        id = object.contentId;
        title = formattedText(asObject(asObject(asObject(object.metadata)?.lockupMetadataViewModel)?.title));
      }
      if (!id || !VIDEO_ID.test(id)) return;
      const owner = bylineChannel(object);
      const info: ListedVideo = {};
      if (owner) info.owned = owner === channelId;
      if (title && title.trim()) info.title = title.trim();
      const length = parseClockDuration(formattedText(object.lengthText));
      if (length) info.durationSeconds = length;
      note(id, info);
    });
  }
  // Legacy layouts: <a href="/watch?v=ID" title="Title">.
  for (const match of html.matchAll(/<a\b[^>]*>/gi)) {
    const attrs = attributes(match[0]);
    const id = attrs.href ? videoIdOfUrl(attrs.href) : undefined;
    if (!id) continue;
    const title = attrs.title ? cleanTitle(attrs.title) : undefined;
    note(id, title ? { title } : {});
  }
  for (const pattern of [VIDEO_LINK, VIDEO_ID_JSON, VIDEO_ID_ATTR]) for (const match of html.matchAll(pattern)) note(match[1]!);
  if (uploadsTab) for (const entry of found.values()) if (entry.owned === undefined) entry.owned = true;
  return found;
}

/**
 * What an archived watch page says of its video: the embedded player response of 2019+ pages,
 * `ytplayer.config` of 2014-2020 pages, schema.org meta tags of older ones, or a removal notice.
 */
import { decodeEntities } from '../../text/entities.ts';
import { captionTrackOf } from '../../youtube/captionTrack.ts';
import { CHANNEL_ID } from '../../youtube/channelQuery.ts';
import { parseIsoDuration } from '../../youtube/isoDuration.ts';
import { asObject, asString } from '../../youtube/json.ts';
import { findPlayerConfigs, findPlayerResponses, formattedText, isPlayerOf, playabilityMessages } from '../../youtube/playerResponse.ts';
import { looksLikeBotCheck } from '../http.ts';
import type { VideoRecord } from '../types.ts';
import {
  bestThumbnail,
  cleanTitle,
  headTags,
  htmlToText,
  linkHref,
  metaValues,
  normaliseDate,
  toInt,
  unwrapArchiveUrl,
} from './archivedPage.ts';

/** What an archived watch page tells of its video (a VideoRecord's fields, channel optional). Absent fields are unknown. */
export type VideoMeta = Pick<VideoRecord, 'videoId'> &
  Partial<
    Pick<
      VideoRecord,
      'channelId' | 'title' | 'description' | 'durationSeconds' | 'viewCount' | 'uploadDate' | 'thumbnailUrl' | 'tags' | 'captions'
    >
  > & {
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

function removalCategory(reason: string): RemovalCategory {
  if (/terminat|account .*closed/i.test(reason)) return 'account_terminated';
  if (/removed by the (?:user|uploader)|deleted/i.test(reason)) return 'removed_by_uploader';
  if (/private/i.test(reason)) return 'private';
  if (/copyright/i.test(reason)) return 'copyright';
  if (/violat|terms of (?:use|service)|guidelines|policy|harass|spam/i.test(reason)) return 'policy';
  return 'unavailable';
}

/** `ytplayer.config.args` of 2012-2020 pages (title, length_seconds, ucid, author, view_count, keywords). */
function playerArgs(html: string): Record<string, unknown> | undefined {
  for (const config of findPlayerConfigs(html)) {
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
      const object = asObject(entry);
      const track = object ? captionTrackOf(object) : undefined;
      if (!track) continue;
      const { language, kind } = track;
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
  const description = eowDescription
    ? htmlToText(eowDescription[1]!)
    : (metaValues(tags, 'name', 'description')[0] ?? metaValues(tags, 'property', 'og:description')[0]);
  if (description !== undefined) meta.description = description;
  const duration = parseIsoDuration(metaValues(tags, 'itemprop', 'duration')[0]) ?? toInt(args?.length_seconds);
  if (duration) meta.durationSeconds = duration;
  const viewText = /class="watch-view-count"[^>]*>\s*([\d,.\s\u00a0]+)/i.exec(html)?.[1];
  const views = toInt(metaValues(tags, 'itemprop', 'interactioncount')[0]) ?? toInt(viewText) ?? toInt(args?.view_count);
  if (views !== undefined) meta.viewCount = views;
  const published = /(?:Published|Uploaded|Streamed live) on ([A-Za-z]{3,9}\.? \d{1,2}, \d{4}|\d{1,2} [A-Za-z]{3,9}\.? \d{4})/.exec(
    html,
  )?.[1];
  const date =
    normaliseDate(metaValues(tags, 'itemprop', 'datepublished')[0]) ??
    normaliseDate(metaValues(tags, 'itemprop', 'uploaddate')[0]) ??
    normaliseDate(published);
  if (date) meta.uploadDate = date;
  const thumbnail =
    linkHref(tags, 'itemprop', 'thumbnailurl') ??
    metaValues(tags, 'itemprop', 'thumbnailurl')[0] ??
    metaValues(tags, 'property', 'og:image')[0] ??
    asString(args?.thumbnail_url);
  if (thumbnail) meta.thumbnailUrl = unwrapArchiveUrl(thumbnail);
  const ogTags = metaValues(tags, 'property', 'og:video:tag')
    .map((tag) => tag.trim())
    .filter(Boolean);
  const keywords = metaValues(tags, 'name', 'keywords')[0] ?? asString(args?.keywords);
  const list = ogTags.length
    ? ogTags
    : (keywords ?? '')
        .split(',')
        .map((tag) => tag.trim())
        .filter(Boolean);
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

/** The player's messages, most specific first (the error screen's subreason names the removal). */
function playabilityTexts(status: Record<string, unknown>): string[] {
  const { errorSubreason, errorReason, messages, reason } = playabilityMessages(status);
  return [errorSubreason, errorReason, ...messages, reason].map((text) => text?.trim()).filter((text): text is string => !!text);
}

/** Player errors that are not removals: age gates, region blocks, paid or members-only videos, upcoming lives. */
const NOT_A_REMOVAL =
  /confirm your age|age[- ]restricted|inappropriate for some users|available in your country|not made this video available|members|requires payment|rent this|premiere|live event|will begin|scheduled/i;

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
  const own = players.filter((player) => isPlayerOf(player, videoId));
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

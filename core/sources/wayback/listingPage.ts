/** The videos an archived channel listing page (home, /videos, /streams, /shorts, legacy layouts) links to. */
import { CHANNEL_ID, VIDEO_ID } from '../../youtube/channelQuery.ts';
import { findAssignedObjects } from '../../youtube/embeddedJson.ts';
import { asObject, asString, isObject } from '../../youtube/json.ts';
import { formattedText } from '../../youtube/playerResponse.ts';
import { videoIdOfUrl } from '../../youtube/videoUrl.ts';
import { attributes, cleanTitle, parseClockDuration } from './archivedPage.ts';

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

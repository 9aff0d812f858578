/**
 * A channel from the archive: the newest usable 200 capture of its page (/channel/UC…, /@handle,
 * /user/NAME, /c/NAME; then their /videos and /featured), or, for a video query, the channel its
 * newest watch capture names.
 */
import { decodeURIComponentSafe } from '../../text/decodeUriComponentSafe.ts';
import { CHANNEL_ID, type ChannelQuery } from '../../youtube/channelQuery.ts';
import type { ChannelRecord } from '../types.ts';
import type { WaybackCaptures } from './captures.ts';
import { extractChannelInfo, type ChannelPageInfo } from './channelPage.ts';
import { lookupVideo } from './lookupVideo.ts';
import type { VideoMeta } from './watchPage.ts';
import { channelRecord } from './records.ts';
import { probeTimeline } from './timeline.ts';

/** Captures of one page looked at, newest first, to find its channel. */
const CHANNEL_PAGE_PROBES = 3;

/** The channel an archived page of it names, from the newest usable of its captures. */
async function channelFromPages(
  captures: WaybackCaptures,
  urls: string[],
  signal: AbortSignal | undefined,
  accept: (info: ChannelPageInfo) => boolean,
): Promise<{ info: ChannelPageInfo; terminated?: string } | undefined> {
  let terminated: string | undefined;
  for (const url of urls) {
    const rows = await captures.timeline(url, signal);
    if (rows.length === 0) continue;
    const result = await probeTimeline<ChannelPageInfo>(rows, CHANNEL_PAGE_PROBES, async (row) => {
      const body = await captures.readCapture(row, signal);
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

/** The channel of a video's newest watch capture. */
async function channelOfVideo(
  captures: WaybackCaptures,
  videoId: string,
  capturesPerVideo: number,
  signal: AbortSignal | undefined,
): Promise<ChannelRecord | undefined> {
  const lookup = await lookupVideo(captures, videoId, capturesPerVideo, signal);
  return lookup.kind === 'metadata' ? channelOfWatchPage(captures, lookup.meta, capturesPerVideo, signal) : undefined;
}

/** The channel a watch capture names: by its id, else by the handle or name of its owner's profile URL. */
export async function channelOfWatchPage(
  captures: WaybackCaptures,
  meta: VideoMeta,
  capturesPerVideo: number,
  signal: AbortSignal | undefined,
): Promise<ChannelRecord | undefined> {
  const names: ChannelPageInfo = {};
  const profile = meta.ownerProfileUrl ?? '';
  const handle = /\/(@[^/?#]+)/.exec(profile)?.[1];
  const user = /\/(?:user|c)\/([^/?#]+)/.exec(profile)?.[1];
  const idFromProfile = /\/channel\/(UC[A-Za-z0-9_-]{22})/.exec(profile)?.[1];
  if (handle) names.handle = decodeURIComponentSafe(handle);
  if (user) names.customName = decodeURIComponentSafe(user);
  const channelId = meta.channelId ?? idFromProfile;
  if (channelId && CHANNEL_ID.test(channelId))
    return channelRecord(channelId, { ...names, ...(meta.author ? { title: meta.author } : {}) });
  if (names.handle) return resolveWaybackChannel(captures, capturesPerVideo, { kind: 'handle', handle: names.handle }, signal);
  if (user) return resolveWaybackChannel(captures, capturesPerVideo, { kind: 'user', name: decodeURIComponentSafe(user) }, signal);
  return undefined;
}

export async function resolveWaybackChannel(
  captures: WaybackCaptures,
  capturesPerVideo: number,
  query: ChannelQuery,
  signal?: AbortSignal,
): Promise<ChannelRecord | undefined> {
  const pages = (base: string) => [base, `${base}/videos`, `${base}/featured`];
  const hasId = (info: ChannelPageInfo) => !!info.channelId;
  switch (query.kind) {
    case 'channelId': {
      const found = await channelFromPages(
        captures,
        pages(`youtube.com/channel/${query.channelId}`),
        signal,
        (info) => !!info.title || info.channelId === query.channelId,
      );
      return found ? channelRecord(query.channelId, found.info, {}, found.terminated) : undefined;
    }
    case 'handle': {
      const handle = query.handle.replace(/^@?/, '@');
      const found = await channelFromPages(captures, pages(`youtube.com/${handle}`), signal, hasId);
      return found?.info.channelId
        ? channelRecord(found.info.channelId, found.info, { handle: found.info.handle ?? handle }, found.terminated)
        : undefined;
    }
    case 'user': {
      const found = await channelFromPages(captures, pages(`youtube.com/user/${query.name}`), signal, hasId);
      // The legacy username is what the API's customUrl held for such channels; listVideos walks /user/NAME from it.
      return found?.info.channelId
        ? channelRecord(found.info.channelId, found.info, { customUrl: found.info.legacyUser ?? query.name }, found.terminated)
        : undefined;
    }
    case 'customUrl': {
      const found = await channelFromPages(
        captures,
        [`youtube.com/c/${query.name}`, `youtube.com/c/${query.name}/videos`, `youtube.com/${query.name}`],
        signal,
        hasId,
      );
      return found?.info.channelId
        ? channelRecord(found.info.channelId, found.info, { customUrl: query.name }, found.terminated)
        : undefined;
    }
    case 'video':
      return channelOfVideo(captures, query.videoId, capturesPerVideo, signal);
  }
}

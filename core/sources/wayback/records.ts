/** The records the Wayback source reports, from what archived pages said (ownership decided here). */
import { escapeRegExp } from '../../text/escapeRegExp.ts';
import type { ChannelRecord, VideoRecord, WaybackCapture } from '../types.ts';
import type { WaybackCaptures } from './captures.ts';
import type { ChannelPageInfo } from './channelPage.ts';
import type { PendingVideo } from './cursor.ts';
import type { VideoLookup } from './lookupVideo.ts';

/** Drops the keys whose value is undefined (records leave unknown fields out). */
function compact<T extends object>(value: T): T {
  for (const key of Object.keys(value) as Array<keyof T>) if (value[key] === undefined) delete value[key];
  return value;
}

export function channelRecord(
  channelId: string,
  info: ChannelPageInfo,
  extra: Partial<ChannelRecord> = {},
  terminated?: string,
): ChannelRecord {
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

/** A capture's 14-digit timestamp (UTC) as ISO 8601: when the archive saw the page. */
function captureTime(timestamp: string): string | undefined {
  const parts = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(timestamp);
  const iso = parts && `${parts[1]}-${parts[2]}-${parts[3]}T${parts[4]}:${parts[5]}:${parts[6]}Z`;
  return iso && !Number.isNaN(Date.parse(iso)) ? iso : undefined;
}

/** The capture a lookup read, as evidence keeps it; undefined when its answer was not recorded. */
function captureOf(lookup: VideoLookup & { kind: 'metadata' | 'removed' }, said: string): WaybackCapture | undefined {
  return lookup.answer && { said, answer: lookup.answer, wayback: { timestamp: lookup.row.timestamp, digest: lookup.row.digest ?? null } };
}

/** Whether a profile URL ("…/@name", "…/user/name", "…/channel/UC…") is this channel's. */
function sameName(profileUrl: string | undefined, channel: ChannelRecord): boolean {
  if (!profileUrl) return false;
  const url = profileUrl.toLowerCase();
  const handle = channel.handle?.replace(/^@?/, '@').toLowerCase();
  if (handle && new RegExp(`/${escapeRegExp(handle)}(?:$|[/?#])`).test(url)) return true;
  if (url.includes(`/channel/${channel.channelId.toLowerCase()}`)) return true;
  const custom = channel.customUrl?.replace(/^\/?(?:c\/|user\/)?/i, '').toLowerCase();
  return !!custom && new RegExp(`/(?:user/|c/)?${escapeRegExp(custom)}(?:$|[/?#])`).test(url);
}

/**
 * A listed video as reported: from its watch capture when that names this channel (or nothing
 * names its channel and the listing said it is this channel's), else from the listing alone when
 * the listing said so; undefined when it is another channel's or nothing ties it to this one.
 */
export function videoRecord(
  captures: Pick<WaybackCaptures, 'publicBase' | 'publicUrl'>,
  channel: ChannelRecord,
  entry: PendingVideo,
  lookup: VideoLookup,
  listingCapture: string | undefined,
): VideoRecord | undefined {
  if (lookup.kind === 'metadata') {
    const { meta } = lookup;
    const owned = meta.channelId ? meta.channelId === channel.channelId : entry.o === 1 || sameName(meta.ownerProfileUrl, channel);
    if (!owned) return undefined;
    const url = captures.publicUrl(lookup.row);
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
      capture: captureOf(lookup, `the watch page as archived at ${lookup.row.timestamp}: title, description and the rest of its metadata`),
    });
  }
  if (entry.o !== 1) return undefined;
  if (lookup.kind === 'removed') {
    const url = captures.publicUrl(lookup.row);
    return compact<VideoRecord>({
      videoId: entry.i,
      channelId: channel.channelId,
      title: entry.t,
      durationSeconds: entry.d,
      archiveUrl: url,
      evidenceUrl: url,
      availability: 'deleted',
      observedAt: captureTime(lookup.row.timestamp),
      capture: captureOf(lookup, `the watch page as archived at ${lookup.row.timestamp}: ${lookup.reason}`),
    });
  }
  // Only the listing knows of it.
  const evidence = listingCapture ? `${captures.publicBase}/${listingCapture.replace(' ', '/')}` : undefined;
  return compact<VideoRecord>({
    videoId: entry.i,
    channelId: channel.channelId,
    title: entry.t,
    durationSeconds: entry.d,
    evidenceUrl: evidence,
    availability: 'unknown',
  });
}

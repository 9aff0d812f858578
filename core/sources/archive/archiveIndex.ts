/**
 * The in-memory index the archive source answers from: channels by id and by every name they go
 * by, and each channel's videos, newest first. Built from one scan of the directory.
 */
import type { ChannelQuery } from '../../youtube/channelQuery.ts';
import type { ChannelRecord, VideoPage, VideoRecord } from '../types.ts';
import { archiveSignature, scanArchive, type ArchiveScan, type ArchiveScanStats, type ArchiveWarning, type ScanOptions } from './scan.ts';

export interface ArchiveIndexInfo {
  dir: string;
  /** When the index was built (ms since epoch), and when the directory was last found unchanged. */
  builtAt: number;
  checkedAt: number;
  /** Number of builds so far (1 after the first use). */
  builds: number;
  channels: number;
  videos: number;
  /** False when the directory does not exist (the index is then empty). */
  exists: boolean;
  stats?: ArchiveScanStats;
  warnings: ArchiveWarning[];
}

export interface ArchiveIndex {
  info: ArchiveIndexInfo;
  signature: string;
  channels: Map<string, ChannelRecord>;
  /** lower-cased "@handle" → channel id */
  byHandle: Map<string, string>;
  /** lower-cased /c/ names → channel id */
  byCustomName: Map<string, string>;
  /** lower-cased /user/ names → channel id */
  byUserName: Map<string, string>;
  videoChannel: Map<string, string>;
  /** Newest first. */
  videosByChannel: Map<string, VideoRecord[]>;
}

export const isMissing = (error: unknown) =>
  (error as NodeJS.ErrnoException)?.code === 'ENOENT' || (error as NodeJS.ErrnoException)?.code === 'ENOTDIR';

/** The directory's signature and scan; undefined when the directory is missing (or vanishes during the scan). */
export async function scanDirectory(
  dir: string,
  options: Pick<ScanOptions, 'concurrency' | 'onProgress'>,
): Promise<{ signature: string; scan: ArchiveScan } | undefined> {
  try {
    const { signature } = await archiveSignature(dir);
    return { signature, scan: await scanArchive(dir, { concurrency: options.concurrency, onProgress: options.onProgress }) };
  } catch (error) {
    if (!isMissing(error)) throw error;
    return undefined;
  }
}

/** The index of a missing directory. */
export function emptyIndex(dir: string, at: number, builds: number): ArchiveIndex {
  return {
    info: { dir, builtAt: at, checkedAt: at, builds, channels: 0, videos: 0, exists: false, warnings: [] },
    signature: 'missing',
    channels: new Map(),
    byHandle: new Map(),
    byCustomName: new Map(),
    byUserName: new Map(),
    videoChannel: new Map(),
    videosByChannel: new Map(),
  };
}

function addName(map: Map<string, string>, name: string | undefined, channelId: string) {
  if (!name) return;
  const key = name.toLowerCase();
  if (!map.has(key)) map.set(key, channelId);
}

export function indexOfScan(dir: string, signature: string, scan: ArchiveScan, at: number, builds: number): ArchiveIndex {
  const index: ArchiveIndex = {
    info: {
      dir,
      builtAt: at,
      checkedAt: at,
      builds,
      channels: scan.channels.length,
      videos: scan.videos.length,
      exists: true,
      stats: scan.stats,
      warnings: scan.warnings,
    },
    signature,
    channels: new Map(scan.channels.map((c) => [c.channelId, c])),
    byHandle: new Map(),
    byCustomName: new Map(),
    byUserName: new Map(),
    videoChannel: new Map(),
    videosByChannel: new Map(),
  };
  for (const channel of scan.channels) {
    addName(index.byHandle, channel.handle, channel.channelId);
    const names = scan.channelNames.get(channel.channelId);
    for (const name of names?.customNames ?? []) addName(index.byCustomName, name, channel.channelId);
    for (const name of names?.userNames ?? []) addName(index.byUserName, name, channel.channelId);
  }
  // scan.videos is ordered by channel, newest first.
  for (const video of scan.videos) {
    index.videoChannel.set(video.videoId, video.channelId);
    const list = index.videosByChannel.get(video.channelId);
    if (list) list.push(video);
    else index.videosByChannel.set(video.channelId, [video]);
  }
  return index;
}

export function channelInIndex(index: ArchiveIndex, query: ChannelQuery): ChannelRecord | undefined {
  const channelOf = (channelId: string | undefined) => (channelId ? index.channels.get(channelId) : undefined);
  switch (query.kind) {
    case 'channelId':
      return channelOf(query.channelId);
    case 'handle': {
      const handle = query.handle.startsWith('@') ? query.handle : `@${query.handle}`;
      return channelOf(index.byHandle.get(handle.toLowerCase()));
    }
    case 'customUrl': {
      // youtube.com/<name> is either a custom URL or a legacy user name.
      const name = query.name.toLowerCase();
      return channelOf(index.byCustomName.get(name) ?? index.byUserName.get(name));
    }
    case 'user': {
      const name = query.name.toLowerCase();
      return channelOf(index.byUserName.get(name) ?? index.byCustomName.get(name));
    }
    case 'video':
      return channelOf(index.videoChannel.get(query.videoId));
  }
}

/** The offset a cursor of this source holds (the first page has none). */
export function offsetOfCursor(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  if (!/^\d{1,9}$/.test(cursor)) throw new Error(`archive: not a cursor of this source: ${JSON.stringify(cursor)}`);
  return Number(cursor);
}

/** A page of a channel's videos from `offset`; the cursor of the next page is its offset. */
export function videoPageOfIndex(index: ArchiveIndex, channelId: string, offset: number, pageSize: number): VideoPage {
  const all = index.videosByChannel.get(channelId) ?? [];
  const videos = all.slice(offset, offset + pageSize);
  const end = offset + videos.length;
  const page: VideoPage = { videos, progress: all.length ? Math.min(1, end / all.length) : 1 };
  if (end < all.length) page.next = String(end);
  return page;
}

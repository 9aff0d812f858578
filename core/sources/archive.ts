/**
 * The local yt-dlp archive directory as a video source ('archive').
 *
 * scanArchive / streamArchive read the directory (see ./archive/scan.ts for the layout);
 * createArchiveSource answers resolveChannel / listVideos from an in-memory index of it, built on
 * first use and rebuilt when the directory changed.
 */
import { resolve } from 'node:path';
import type { ChannelQuery } from '../youtube/channelQuery.ts';
import type { ChannelRecord, VideoPage, VideoRecord, VideoSource } from './types.ts';
import { archiveSignature, scanArchive, type ArchiveScanStats, type ArchiveWarning, type ScanOptions } from './archive/scan.ts';

export { scanArchive, streamArchive, archiveSignature, ArchiveCollector, classifyDirectory, MEDIA_EXTENSIONS, SUBTITLE_EXTENSIONS } from './archive/scan.ts';
export type { ArchiveItem, ArchiveProgress, ArchiveScan, ArchiveScanStats, ArchiveWarning, ScanOptions } from './archive/scan.ts';
export { parseYtDlpDocument, looksLikeYtDlp, captionKind, channelUrlFacts } from './archive/parse.ts';
export type { ChannelNames, ParsedItem, ParseOutcome, Siblings } from './archive/parse.ts';
export { mergeVideos, mergeChannels } from './archive/merge.ts';

export interface ArchiveSourceOptions {
  dir: string;
  /** Videos per listVideos page (default 500). */
  pageSize?: number;
  /** An index younger than this is used without looking at the directory (default 30 s). */
  maxAgeMs?: number;
  /** Readers of the scan (default 16). */
  concurrency?: number;
  /** Progress of index (re)builds, e.g. for a progress bar in an import command. */
  onProgress?: ScanOptions['onProgress'];
  /** Clock, for tests. */
  now?: () => number;
}

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

export interface ArchiveSource extends VideoSource {
  name: 'archive';
  /** Rebuilds the index now (normally automatic). */
  refresh(signal?: AbortSignal): Promise<ArchiveIndexInfo>;
  /** The current index's facts; undefined before first use. */
  info(): ArchiveIndexInfo | undefined;
}

interface ArchiveIndex {
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

function throwIfAborted(signal?: AbortSignal) {
  if (signal?.aborted) throw signal.reason ?? new Error('aborted');
}

/** Waits for a shared promise, but lets one caller's signal stop its own wait. */
function withSignal<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return promise;
  throwIfAborted(signal);
  return new Promise<T>((resolvePromise, reject) => {
    const onAbort = () => reject(signal.reason ?? new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolvePromise(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException)?.code === 'ENOENT' || (error as NodeJS.ErrnoException)?.code === 'ENOTDIR';

function addName(map: Map<string, string>, name: string | undefined, channelId: string) {
  if (!name) return;
  const key = name.toLowerCase();
  if (!map.has(key)) map.set(key, channelId);
}

export function createArchiveSource(options: ArchiveSourceOptions): ArchiveSource {
  const dir = resolve(options.dir);
  const pageSize = Math.max(1, options.pageSize ?? 500);
  const maxAgeMs = options.maxAgeMs ?? 30_000;
  const now = options.now ?? Date.now;
  let index: ArchiveIndex | undefined;
  let inFlight: Promise<ArchiveIndex> | undefined;
  let builds = 0;

  async function build(): Promise<ArchiveIndex> {
    const started = now();
    let signature: string;
    try {
      signature = (await archiveSignature(dir)).signature;
    } catch (error) {
      if (!isMissing(error)) throw error;
      builds++;
      return emptyIndex(started);
    }
    let scan;
    try {
      scan = await scanArchive(dir, { concurrency: options.concurrency, onProgress: options.onProgress });
    } catch (error) {
      if (!isMissing(error)) throw error;
      builds++;
      return emptyIndex(started);
    }
    builds++;
    const next: ArchiveIndex = {
      info: { dir, builtAt: started, checkedAt: started, builds, channels: scan.channels.length, videos: scan.videos.length, exists: true, stats: scan.stats, warnings: scan.warnings },
      signature,
      channels: new Map(scan.channels.map((c) => [c.channelId, c])),
      byHandle: new Map(),
      byCustomName: new Map(),
      byUserName: new Map(),
      videoChannel: new Map(),
      videosByChannel: new Map(),
    };
    for (const channel of scan.channels) {
      addName(next.byHandle, channel.handle, channel.channelId);
      const names = scan.channelNames.get(channel.channelId);
      for (const name of names?.customNames ?? []) addName(next.byCustomName, name, channel.channelId);
      for (const name of names?.userNames ?? []) addName(next.byUserName, name, channel.channelId);
    }
    // scan.videos is ordered by channel, newest first.
    for (const video of scan.videos) {
      next.videoChannel.set(video.videoId, video.channelId);
      const list = next.videosByChannel.get(video.channelId);
      if (list) list.push(video);
      else next.videosByChannel.set(video.channelId, [video]);
    }
    return next;
  }

  function emptyIndex(at: number): ArchiveIndex {
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

  /** The index, rebuilt when older than maxAgeMs and the directory's signature changed. */
  async function current(): Promise<ArchiveIndex> {
    if (inFlight) return inFlight;
    if (index && now() - index.info.checkedAt < maxAgeMs) return index;
    inFlight = (async () => {
      try {
        if (index) {
          const signature = await archiveSignature(dir).then(
            (s) => s.signature,
            (error: unknown) => {
              if (isMissing(error)) return 'missing';
              throw error;
            },
          );
          if (signature === index.signature) {
            index.info.checkedAt = now();
            return index;
          }
        }
        index = await build();
        return index;
      } finally {
        inFlight = undefined;
      }
    })();
    return inFlight;
  }

  async function refresh(signal?: AbortSignal): Promise<ArchiveIndexInfo> {
    if (inFlight) await withSignal(inFlight.catch(() => undefined), signal);
    const building = build().then((built) => (index = built));
    inFlight = building.finally(() => {
      inFlight = undefined;
    });
    return (await withSignal(inFlight, signal)).info;
  }

  function channelOf(idx: ArchiveIndex, channelId: string | undefined): ChannelRecord | undefined {
    return channelId ? idx.channels.get(channelId) : undefined;
  }

  return {
    name: 'archive',

    async resolveChannel(query: ChannelQuery, signal?: AbortSignal): Promise<ChannelRecord | undefined> {
      const idx = await withSignal(current(), signal);
      switch (query.kind) {
        case 'channelId':
          return channelOf(idx, query.channelId);
        case 'handle': {
          const handle = query.handle.startsWith('@') ? query.handle : `@${query.handle}`;
          return channelOf(idx, idx.byHandle.get(handle.toLowerCase()));
        }
        case 'customUrl': {
          // youtube.com/<name> is either a custom URL or a legacy user name.
          const name = query.name.toLowerCase();
          return channelOf(idx, idx.byCustomName.get(name) ?? idx.byUserName.get(name));
        }
        case 'user': {
          const name = query.name.toLowerCase();
          return channelOf(idx, idx.byUserName.get(name) ?? idx.byCustomName.get(name));
        }
        case 'video':
          return channelOf(idx, idx.videoChannel.get(query.videoId));
      }
    },

    async listVideos(channel: ChannelRecord, cursor: string | undefined, signal?: AbortSignal): Promise<VideoPage> {
      let offset = 0;
      if (cursor !== undefined) {
        if (!/^\d{1,9}$/.test(cursor)) throw new Error(`archive: not a cursor of this source: ${JSON.stringify(cursor)}`);
        offset = Number(cursor);
      }
      const idx = await withSignal(current(), signal);
      const all = idx.videosByChannel.get(channel.channelId) ?? [];
      const videos = all.slice(offset, offset + pageSize);
      const end = offset + videos.length;
      const page: VideoPage = { videos, progress: all.length ? Math.min(1, end / all.length) : 1 };
      if (end < all.length) page.next = String(end);
      return page;
    },

    async warmUp() {
      const { info } = await current();
      return { dir: info.dir, exists: info.exists, channels: info.channels, videos: info.videos };
    },

    refresh,

    info: () => index?.info,
  };
}

/**
 * The local yt-dlp archive directory as a video source ('archive').
 *
 * scanArchive / streamArchive read the directory (see ./archive/scan.ts for the layout);
 * createArchiveSource answers resolveChannel / listVideos from an in-memory index of it, built on
 * first use and rebuilt when the directory changed.
 */
import { resolve } from 'node:path';
import type { ChannelQuery } from '../youtube/channelQuery.ts';
import type { ChannelRecord, VideoPage, VideoSource } from './types.ts';
import {
  channelInIndex,
  emptyIndex,
  indexOfScan,
  isMissing,
  offsetOfCursor,
  scanDirectory,
  videoPageOfIndex,
  type ArchiveIndex,
  type ArchiveIndexInfo,
} from './archive/archiveIndex.ts';
import { archiveSignature, type ScanOptions } from './archive/scan.ts';

export { scanArchive, streamArchive } from './archive/scan.ts';
export type { ArchiveProgress, ArchiveScan } from './archive/scan.ts';
export { parseYtDlpDocument } from './archive/parse.ts';
export type { ParsedItem } from './archive/parse.ts';
export { mergeVideos } from './archive/merge.ts';

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

export interface ArchiveSource extends VideoSource {
  name: 'archive';
  /** Rebuilds the index now (normally automatic). */
  refresh(signal?: AbortSignal): Promise<ArchiveIndexInfo>;
  /** The current index's facts; undefined before first use. */
  info(): ArchiveIndexInfo | undefined;
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
    const scanned = await scanDirectory(dir, options);
    builds++;
    return scanned ? indexOfScan(dir, scanned.signature, scanned.scan, started, builds) : emptyIndex(dir, started, builds);
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
    if (inFlight)
      await withSignal(
        inFlight.catch(() => undefined),
        signal,
      );
    const building = build().then((built) => (index = built));
    inFlight = building.finally(() => {
      inFlight = undefined;
    });
    return (await withSignal(inFlight, signal)).info;
  }

  return {
    name: 'archive',

    async resolveChannel(query: ChannelQuery, signal?: AbortSignal): Promise<ChannelRecord | undefined> {
      return channelInIndex(await withSignal(current(), signal), query);
    },

    async listVideos(channel: ChannelRecord, cursor: string | undefined, signal?: AbortSignal): Promise<VideoPage> {
      const offset = offsetOfCursor(cursor);
      return videoPageOfIndex(await withSignal(current(), signal), channel.channelId, offset, pageSize);
    },

    async warmUp() {
      const { info } = await current();
      return { dir: info.dir, exists: info.exists, channels: info.channels, videos: info.videos };
    },

    refresh,

    info: () => index?.info,
  };
}

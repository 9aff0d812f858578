/**
 * Walks a yt-dlp archive directory and reads its metadata files in parallel.
 *
 * Layout understood (any depth, any mix):
 *   <name>.info.json                      one video (or a playlist/channel when `_type: playlist`)
 *   <name>.<lang>.vtt|srt|srv3|json3|…     subtitles of <name> (manual vs auto from the info.json)
 *   <name>.mp4|webm|mkv|m4a|…              media of <name> (the largest wins; *.part never counts)
 *   <name>.jpg|webp|png                    thumbnail of <name> (--write-thumbnail; the largest wins)
 *   <anything>.json                        e.g. `yt-dlp -J --flat-playlist … > dump.json`; read only
 *                                          when it looks like yt-dlp output, silently ignored otherwise
 *
 * Memory stays bounded: each document is parsed, turned into small records and dropped; the walk
 * keeps a queue of file paths only (capped), and the consumer of streamArchive applies backpressure.
 */
import { readFile, type Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { archiveFileName } from '../keptAnswer.ts';
import type { ChannelRecord, VideoRecord } from '../types.ts';
import { looksLikeYtDlp, parseYtDlpDocument, type ChannelNames } from './parse.ts';
import { mergeChannels, mergeVideos, type HeldChannel, type HeldVideo } from './merge.ts';
import { InvalidJsonError, ParsePool, parseHere } from './parsePool.ts';

/** Documents at least this big are parsed on a worker thread (when there are any). */
const WORKER_PARSE_BYTES = 128 * 1024;

const MEDIA_EXTENSIONS = new Set([
  'mp4',
  'webm',
  'mkv',
  'm4a',
  'mp3',
  'opus',
  'flv',
  '3gp',
  'mov',
  'm4v',
  'mka',
  'ogg',
  'oga',
  'wav',
  'flac',
  'aac',
  'avi',
  'wmv',
]);
const THUMBNAIL_EXTENSIONS = new Set(['jpg', 'jpeg', 'webp', 'png']);
export const SUBTITLE_EXTENSIONS = new Set(['vtt', 'srt', 'srv1', 'srv2', 'srv3', 'json3', 'ttml', 'ass', 'ssa', 'lrc', 'sbv']);

export interface ArchiveProgress {
  /** Directories listed so far. */
  directories: number;
  /** Files of any kind seen by the walk so far. */
  filesSeen: number;
  /** Metadata files (*.info.json and candidate *.json) found so far; final once walkDone. */
  metadataFiles: number;
  /** Metadata files read and handled (parsed, ignored or failed). filesParsed / metadataFiles = fraction done. */
  filesParsed: number;
  /** Unreadable or malformed metadata files (each has a warning). */
  filesFailed: number;
  /** Bytes of metadata read. */
  bytesRead: number;
  /** The walk has listed every directory: metadataFiles is the final total. */
  walkDone: boolean;
  elapsedMs: number;
}

export interface ArchiveScanStats extends ArchiveProgress {
  /** Metadata files ignored: not yt-dlp output, or another site's (extractor not YouTube). */
  filesSkipped: number;
  /** Partial downloads (*.part, *.ytdl) seen and ignored. */
  partialFiles: number;
  /** Symbolic links not followed because they lead to a directory already walked (loops included). */
  linksSkipped: number;
  /** filesParsed per second of wall time. */
  filesPerSecond: number;
}

export interface ArchiveWarning {
  file: string;
  message: string;
}

export type ArchiveItem =
  | { kind: 'video'; video: VideoRecord; partial: boolean; epoch: number; file: string }
  | { kind: 'channel'; channel: ChannelRecord; names: ChannelNames; rank: 1 | 2; epoch: number; file: string }
  | { kind: 'warning'; file: string; message: string };

export interface ScanOptions {
  /** Called at most every progressIntervalMs while scanning, and once at the end (walkDone, final counts). */
  onProgress?: (progress: ArchiveProgress) => void;
  progressIntervalMs?: number;
  /** Metadata files read at once (default 16). */
  concurrency?: number;
  /**
   * Worker threads parsing large documents (>= 128 KB, e.g. modern full dumps); 0 parses everything
   * in the calling thread. Default: the number of CPUs, at least 1, at most 4. Started only when
   * a large document turns up.
   */
  parseThreads?: number;
  signal?: AbortSignal;
}

export interface ArchiveScan {
  /** Merged: one per channel id, channel-level documents winning over what videos say. */
  channels: ChannelRecord[];
  /** Merged: one per video id (full info.json over flat-playlist entries); ordered by channel, newest first. */
  videos: VideoRecord[];
  /** Custom-URL and legacy user names per channel id (for resolving /c/… and /user/… queries). */
  channelNames: Map<string, ChannelNames>;
  warnings: ArchiveWarning[];
  stats: ArchiveScanStats;
}

interface Job {
  path: string;
  /** 'info' = *.info.json (problems are warned about); 'json' = other *.json (ignored unless yt-dlp's). */
  kind: 'info' | 'json';
  media: string[];
  thumbnails: string[];
  subtitleLanguages: string[];
}

interface ScanState {
  /** The folder scanned: kept evidence names files by their path inside it. */
  root: string;
  progress: ArchiveProgress;
  filesSkipped: number;
  partialFiles: number;
  linksSkipped: number;
  started: number;
  cancelled: boolean;
}

const describe = (error: unknown) => {
  const e = error as NodeJS.ErrnoException;
  return e?.code ? `${e.code}: ${e.message}` : String(e?.message ?? error);
};

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? Object.assign(new Error('The archive scan was aborted'), { name: 'AbortError' });
}

function isPartialDownload(lower: string): boolean {
  return lower.endsWith('.part') || /\.part-frag\d+$/.test(lower) || lower.endsWith('.ytdl');
}

/** Groups one directory's file names into metadata jobs with the media and subtitle files beside them. */
function classifyDirectory(dir: string, names: readonly string[]): { jobs: Job[]; partialFiles: number } {
  const bases = new Map<string, Job>();
  const jsonNames: string[] = [];
  const media = new Map<string, string[]>();
  const thumbnails = new Map<string, string[]>();
  const subtitles = new Map<string, string[]>();
  let partialFiles = 0;
  for (const name of names) {
    const lower = name.toLowerCase();
    if (lower.endsWith('.info.json')) {
      const base = name.slice(0, -'.info.json'.length);
      bases.set(base, { path: join(dir, name), kind: 'info', media: [], thumbnails: [], subtitleLanguages: [] });
      continue;
    }
    if (isPartialDownload(lower)) {
      partialFiles++;
      continue;
    }
    const dot = name.lastIndexOf('.');
    if (dot <= 0) continue;
    const ext = lower.slice(dot + 1);
    const stem = name.slice(0, dot);
    if (ext === 'json') {
      if (!lower.endsWith('.live_chat.json')) jsonNames.push(name);
    } else if (MEDIA_EXTENSIONS.has(ext) || THUMBNAIL_EXTENSIONS.has(ext)) {
      const byStem = MEDIA_EXTENSIONS.has(ext) ? media : thumbnails;
      const list = byStem.get(stem);
      if (list) list.push(name);
      else byStem.set(stem, [name]);
    } else if (SUBTITLE_EXTENSIONS.has(ext)) {
      const langDot = stem.lastIndexOf('.');
      if (langDot <= 0) continue;
      const base = stem.slice(0, langDot);
      const language = stem.slice(langDot + 1);
      const list = subtitles.get(base);
      if (list) list.push(language);
      else subtitles.set(base, [language]);
    }
  }
  for (const name of jsonNames) {
    const base = name.slice(0, -'.json'.length);
    if (!bases.has(base)) bases.set(base, { path: join(dir, name), kind: 'json', media: [], thumbnails: [], subtitleLanguages: [] });
  }
  const jobs: Job[] = [];
  for (const [base, job] of bases) {
    job.media = (media.get(base) ?? []).map((name) => join(dir, name));
    job.thumbnails = (thumbnails.get(base) ?? []).map((name) => join(dir, name));
    job.subtitleLanguages = subtitles.get(base) ?? [];
    jobs.push(job);
  }
  return { jobs, partialFiles };
}

interface WalkHooks {
  onDirectory(dir: string, mtimeMs: number, files: string[]): void | Promise<void>;
  onWarning(file: string, message: string): void;
  onLinkSkipped(): void;
  isCancelled(): boolean;
}

/**
 * Depth-first walk; follows symbolic links (to files and directories) but visits each directory
 * (device + inode) once, so link loops and links into already-walked trees are skipped.
 */
async function walk(root: string, hooks: WalkHooks): Promise<void> {
  const rootStat = await stat(root);
  if (!rootStat.isDirectory()) throw new Error(`${root} is not a directory`);
  const visited = new Set<string>([`${rootStat.dev}:${rootStat.ino}`]);
  const stack: Array<{ path: string; mtimeMs: number }> = [{ path: root, mtimeMs: rootStat.mtimeMs }];
  while (stack.length && !hooks.isCancelled()) {
    const { path: dir, mtimeMs } = stack.pop()!;
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      hooks.onWarning(dir, `unreadable directory (${describe(error)})`);
      continue;
    }
    const files: string[] = [];
    const others = entries.filter((entry) => {
      if (entry.isFile()) {
        files.push(entry.name);
        return false;
      }
      return entry.isDirectory() || entry.isSymbolicLink();
    });
    const subdirs: Array<{ path: string; mtimeMs: number }> = [];
    const stats = await Promise.all(
      others.map((entry) =>
        stat(join(dir, entry.name)).then(
          (s) => ({ entry, s }),
          (error: unknown) => {
            hooks.onWarning(
              join(dir, entry.name),
              entry.isSymbolicLink() ? `broken symbolic link (${describe(error)})` : `unreadable (${describe(error)})`,
            );
            return undefined;
          },
        ),
      ),
    );
    for (const found of stats) {
      if (!found) continue;
      const { entry, s } = found;
      if (s.isDirectory()) {
        const key = `${s.dev}:${s.ino}`;
        if (visited.has(key)) {
          hooks.onLinkSkipped();
          continue;
        }
        visited.add(key);
        subdirs.push({ path: join(dir, entry.name), mtimeMs: s.mtimeMs });
      } else if (s.isFile()) {
        files.push(entry.name);
      }
    }
    await hooks.onDirectory(dir, mtimeMs, files);
    subdirs.sort((a, b) => (a.path < b.path ? 1 : a.path > b.path ? -1 : 0));
    stack.push(...subdirs);
  }
}

/** A FIFO with a high-water mark: push waits while full, shift waits while empty and open. */
class BoundedQueue<T> {
  private items: T[] = [];
  private head = 0;
  private closed = false;
  private readers: Array<() => void> = [];
  private writers: Array<() => void> = [];
  constructor(private readonly highWaterMark: number) {}

  get size() {
    return this.items.length - this.head;
  }

  async push(item: T): Promise<void> {
    while (this.size >= this.highWaterMark && !this.closed) await new Promise<void>((resolve) => this.writers.push(resolve));
    if (this.closed) return;
    this.items.push(item);
    this.readers.shift()?.();
  }

  async shift(): Promise<T | undefined> {
    while (this.size === 0 && !this.closed) await new Promise<void>((resolve) => this.readers.push(resolve));
    if (this.size === 0) return undefined;
    const item = this.items[this.head]!;
    this.items[this.head] = undefined as T;
    this.head++;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    this.writers.shift()?.();
    return item;
  }

  /** No more pushes; readers drain what is left. With `drop`, what is left is discarded too. */
  close(drop = false) {
    this.closed = true;
    if (drop) {
      this.items = [];
      this.head = 0;
    }
    for (const wake of this.readers.splice(0)) wake();
    for (const wake of this.writers.splice(0)) wake();
  }
}

/** The largest of a video's files of one kind (media, thumbnails); ties go to the first path. */
async function pickLargest(paths: string[]): Promise<string | undefined> {
  if (paths.length <= 1) return paths[0];
  const sized = await Promise.all(
    paths.map((path) =>
      stat(path).then(
        (s) => ({ path, size: s.size }),
        () => undefined,
      ),
    ),
  );
  let best: { path: string; size: number } | undefined;
  for (const candidate of sized) {
    if (!candidate) continue;
    if (!best || candidate.size > best.size || (candidate.size === best.size && candidate.path < best.path)) best = candidate;
  }
  return best?.path;
}

/** The callback API: about half the per-file overhead of fs/promises' readFile (hot path). */
function readWhole(path: string): Promise<Buffer> {
  return new Promise((resolvePromise, reject) => readFile(path, (error, data) => (error ? reject(error) : resolvePromise(data))));
}

async function processJob(job: Job, state: ScanState, pool: ParsePool | undefined): Promise<ArchiveItem[]> {
  let buffer: Buffer;
  try {
    buffer = await readWhole(job.path);
    state.progress.bytesRead += buffer.length;
  } catch (error) {
    state.progress.filesFailed++;
    return [{ kind: 'warning', file: job.path, message: `unreadable file (${describe(error)})` }];
  }
  let data: unknown;
  try {
    data = pool && buffer.length >= WORKER_PARSE_BYTES ? await pool.parse(buffer) : parseHere(buffer);
  } catch (error) {
    if (!(error instanceof InvalidJsonError)) throw error;
    if (job.kind === 'json') {
      state.filesSkipped++;
      return [];
    }
    state.progress.filesFailed++;
    return [{ kind: 'warning', file: job.path, message: `not valid JSON (${(error as Error).message})` }];
  }
  if (job.kind === 'json' && !looksLikeYtDlp(data)) {
    state.filesSkipped++;
    return [];
  }
  const [media, thumbnail] = await Promise.all([pickLargest(job.media), pickLargest(job.thumbnails)]);
  const outcome = parseYtDlpDocument(data, {
    evidenceUrl: pathToFileURL(job.path).href,
    evidencePath: archiveFileName(job.path, [state.root]),
    siblings: {
      mediaUrl: media ? pathToFileURL(media).href : undefined,
      thumbnailUrl: thumbnail ? pathToFileURL(thumbnail).href : undefined,
      subtitleLanguages: job.subtitleLanguages,
    },
  });
  if (!outcome.ok) {
    if (outcome.skipped || job.kind === 'json') {
      state.filesSkipped++;
      return [];
    }
    state.progress.filesFailed++;
    return [{ kind: 'warning', file: job.path, message: outcome.reason }];
  }
  return outcome.items.map((item) => ({ ...item, file: job.path }));
}

/**
 * Runs the walk and the readers; hands each file's items to `sink` (awaited: a slow sink slows
 * the readers down). Resolves with the final statistics.
 */
async function runScan(dir: string, options: ScanOptions, sink: (items: ArchiveItem[]) => void | Promise<void>): Promise<ArchiveScanStats> {
  const root = resolve(dir);
  const { signal, onProgress, progressIntervalMs = 100, concurrency = 16 } = options;
  const parseThreads = Math.max(0, Math.floor(options.parseThreads ?? Math.min(4, Math.max(1, availableParallelism()))));
  if (signal?.aborted) throw abortError(signal);
  const pool = parseThreads > 0 ? new ParsePool(parseThreads) : undefined;
  const state: ScanState = {
    root,
    progress: {
      directories: 0,
      filesSeen: 0,
      metadataFiles: 0,
      filesParsed: 0,
      filesFailed: 0,
      bytesRead: 0,
      walkDone: false,
      elapsedMs: 0,
    },
    filesSkipped: 0,
    partialFiles: 0,
    linksSkipped: 0,
    started: performance.now(),
    cancelled: false,
  };
  let lastReport = 0;
  const report = (force = false) => {
    if (!onProgress) return;
    const now = performance.now();
    if (!force && now - lastReport < progressIntervalMs) return;
    lastReport = now;
    state.progress.elapsedMs = Math.round(now - state.started);
    onProgress({ ...state.progress });
  };

  const queue = new BoundedQueue<Job>(50_000);
  const pendingWarnings: ArchiveItem[] = [];
  const onAbort = () => {
    state.cancelled = true;
    queue.close(true);
  };
  signal?.addEventListener('abort', onAbort, { once: true });

  const walker = walk(root, {
    onDirectory: async (path, _mtimeMs, files) => {
      state.progress.directories++;
      state.progress.filesSeen += files.length;
      const { jobs, partialFiles } = classifyDirectory(path, files);
      state.partialFiles += partialFiles;
      for (const job of jobs) {
        state.progress.metadataFiles++;
        await queue.push(job);
      }
      report();
    },
    onWarning: (file, message) => pendingWarnings.push({ kind: 'warning', file, message }),
    onLinkSkipped: () => state.linksSkipped++,
    isCancelled: () => state.cancelled,
  }).finally(() => {
    state.progress.walkDone = true;
    queue.close();
  });

  const worker = async () => {
    try {
      for (;;) {
        const job = await queue.shift();
        if (!job || state.cancelled) return;
        const items = await processJob(job, state, pool);
        state.progress.filesParsed++;
        if (pendingWarnings.length) items.push(...pendingWarnings.splice(0));
        if (items.length) await sink(items);
        report();
      }
    } catch (error) {
      // A failure that is not a file's (a throwing onProgress or sink, a bug): stop everything.
      state.cancelled = true;
      queue.close(true);
      throw error;
    }
  };

  try {
    const results = await Promise.allSettled([walker, ...Array.from({ length: Math.max(1, concurrency) }, worker)]);
    if (signal?.aborted) throw abortError(signal);
    for (const result of results) if (result.status === 'rejected') throw result.reason;
    if (pendingWarnings.length) await sink(pendingWarnings.splice(0));
  } catch (error) {
    state.cancelled = true;
    queue.close(true);
    throw error;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await pool?.close();
  }
  report(true);
  const elapsedMs = Math.round(performance.now() - state.started);
  return {
    ...state.progress,
    elapsedMs,
    filesSkipped: state.filesSkipped,
    partialFiles: state.partialFiles,
    linksSkipped: state.linksSkipped,
    filesPerSecond: Math.round((state.progress.filesParsed / Math.max(elapsedMs, 1)) * 1000),
  };
}

/**
 * Streams the records of every metadata file, as read (unmerged, in no particular order): a video
 * may come several times (from its info.json and from flat-playlist dumps), and video items may
 * carry channelId '' when their file does not name the channel. Warnings come as items too.
 * Returns the statistics when done. Stopping the iteration early stops the scan.
 */
export async function* streamArchive(dir: string, options: ScanOptions = {}): AsyncGenerator<ArchiveItem, ArchiveScanStats, undefined> {
  const internal = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, internal.signal]) : internal.signal;
  const buffer: ArchiveItem[][] = [];
  const HIGH_WATER = 64;
  let readerWake: (() => void) | undefined;
  let writerWakes: Array<() => void> = [];
  const wakeWriters = () => {
    for (const wake of writerWakes.splice(0)) wake();
  };
  signal.addEventListener('abort', wakeWriters, { once: true });

  let finished = false;
  let failure: { error: unknown } | undefined;
  let stats: ArchiveScanStats | undefined;
  const run = runScan(dir, { ...options, signal }, async (items) => {
    buffer.push(items);
    readerWake?.();
    while (buffer.length >= HIGH_WATER && !signal.aborted) await new Promise<void>((resolve) => writerWakes.push(resolve));
  }).then(
    (result) => {
      stats = result;
    },
    (error: unknown) => {
      failure = { error };
    },
  );
  void run.finally(() => {
    finished = true;
    readerWake?.();
  });

  try {
    for (;;) {
      const items = buffer.shift();
      if (items) {
        if (buffer.length < HIGH_WATER) wakeWriters();
        yield* items;
        continue;
      }
      if (finished) break;
      await new Promise<void>((resolve) => (readerWake = resolve));
      readerWake = undefined;
    }
    await run;
    if (failure) throw failure.error;
    return stats!;
  } finally {
    if (!finished) {
      internal.abort();
      await run;
    }
    writerWakes = [];
  }
}

/** Collects scan items into merged records. */
class ArchiveCollector {
  private readonly videos = new Map<string, HeldVideo>();
  private readonly channels = new Map<string, HeldChannel>();
  readonly warnings: ArchiveWarning[] = [];

  add(item: ArchiveItem): void {
    if (item.kind === 'warning') {
      this.warnings.push({ file: item.file, message: item.message });
    } else if (item.kind === 'video') {
      const held: HeldVideo = { video: item.video, partial: item.partial, epoch: item.epoch };
      const existing = this.videos.get(item.video.videoId);
      this.videos.set(item.video.videoId, existing ? mergeVideos(existing, held) : held);
    } else {
      const held: HeldChannel = { channel: item.channel, names: item.names, rank: item.rank, epoch: item.epoch, evidence: item.file };
      const existing = this.channels.get(item.channel.channelId);
      this.channels.set(item.channel.channelId, existing ? mergeChannels(existing, held) : held);
    }
  }

  finish(stats: ArchiveScanStats): ArchiveScan {
    const videos: VideoRecord[] = [];
    for (const { video } of this.videos.values()) {
      if (!video.channelId) {
        this.warnings.push({ file: video.evidenceUrl ?? '', message: `video ${video.videoId}: no channel id in any file, left out` });
        continue;
      }
      if (!this.channels.has(video.channelId)) {
        this.channels.set(video.channelId, {
          channel: { channelId: video.channelId },
          names: { customNames: [], userNames: [] },
          rank: 0,
          epoch: 0,
          evidence: '',
        });
      }
      videos.push(video);
    }
    videos.sort(compareVideos);
    const channelNames = new Map<string, ChannelNames>();
    const channels: ChannelRecord[] = [];
    for (const [id, held] of [...this.channels.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      channels.push(held.channel);
      channelNames.set(id, held.names);
    }
    return { channels, videos, channelNames, warnings: this.warnings, stats };
  }
}

/** By channel, then newest upload first (undated last), then video id. */
function compareVideos(a: VideoRecord, b: VideoRecord): number {
  if (a.channelId !== b.channelId) return a.channelId < b.channelId ? -1 : 1;
  const da = a.uploadDate ?? '';
  const db = b.uploadDate ?? '';
  if (da !== db) return da > db ? -1 : 1;
  return a.videoId < b.videoId ? -1 : a.videoId > b.videoId ? 1 : 0;
}

/**
 * Scans the archive under `dir` and returns merged channel and video records, the warnings
 * (unreadable or malformed files: never fatal) and statistics. Throws only when `dir` itself is
 * missing or not a directory, or when aborted.
 */
export async function scanArchive(dir: string, options: ScanOptions = {}): Promise<ArchiveScan> {
  const collector = new ArchiveCollector();
  const stats = await runScan(dir, options, (items) => {
    for (const item of items) collector.add(item);
  });
  return collector.finish(stats);
}

/**
 * A cheap fingerprint of the tree: every directory's path, mtime and number of files. Adding,
 * removing or renaming a file changes its directory's mtime (yt-dlp writes files by renaming a
 * temporary file into place), so this changes whenever the archive's contents do; in-place edits
 * of a file's bytes go unnoticed. Lists directories only: reads no file.
 */
export async function archiveSignature(
  dir: string,
  signal?: AbortSignal,
): Promise<{ signature: string; directories: number; files: number }> {
  const hash = createHash('sha1');
  let directories = 0;
  let files = 0;
  await walk(resolve(dir), {
    onDirectory: (path, mtimeMs, names) => {
      directories++;
      files += names.length;
      hash.update(`${path}\0${mtimeMs}\0${names.length}\n`);
    },
    onWarning: (path, message) => hash.update(`!${path}\0${message}\n`),
    onLinkSkipped: () => {},
    isCancelled: () => signal?.aborted ?? false,
  });
  if (signal?.aborted) throw abortError(signal);
  return { signature: hash.digest('hex'), directories, files };
}

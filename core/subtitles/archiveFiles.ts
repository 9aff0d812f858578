/**
 * The subtitle files yt-dlp wrote beside a video's info.json: `<base>.<name>.<ext>` next to
 * `<base>.info.json` (and `<base>.mp4`). What each is (kind, language, track id) is read from its
 * name with the info.json (core/youtube/infoJsonTracks.ts): `<base>.en-uYU-mmqFLq8.vtt` is the
 * named manual track uYU-mmqFLq8 in en.
 *
 * Directory listings are cached per directory and reused while the directory's mtime stays the
 * same (adding, removing or renaming a file changes it), so fetching the subtitles of every video
 * of a 20,000-video folder lists it once, not 20,000 times.
 */
import { readFile, readdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { SUBTITLE_EXTENSIONS } from '../sources/archive/scan.ts';
import { type CaptionKind, readTrackNames } from '../youtube/infoJsonTracks.ts';
import { decodeBytes } from './decodeBytes.ts';

/** The formats the codecs read, best first: word timings (json3, srv3), then WebVTT, older XML, SRT. */
const READABLE = ['json3', 'srv3', 'vtt', 'srv2', 'srv1', 'srt'] as const;
type ArchiveSubtitleFormat = (typeof READABLE)[number];

export interface ArchiveSubtitleFile {
  path: string;
  /** A BCP 47 tag. */
  language: string;
  /** YouTube's id of a named track, else null. */
  trackId: string | null;
  format: ArchiveSubtitleFormat;
  kind: CaptionKind;
}

interface DirectoryIndex {
  mtimeMs: number;
  /** base name → its subtitle files (file name, yt-dlp's name of the track, lower-cased extension) */
  byBase: Map<string, Array<{ name: string; trackName: string; extension: string }>>;
}

const CACHED_DIRECTORIES = 8;

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const listings = new Map<string, DirectoryIndex>();
const pending = new Map<string, Promise<DirectoryIndex>>();

function indexNames(names: readonly string[], mtimeMs: number): DirectoryIndex {
  const byBase: DirectoryIndex['byBase'] = new Map();
  for (const name of names) {
    const dot = name.lastIndexOf('.');
    if (dot <= 0) continue;
    const extension = name.slice(dot + 1).toLowerCase();
    if (!SUBTITLE_EXTENSIONS.has(extension)) continue;
    const stem = name.slice(0, dot);
    const languageDot = stem.lastIndexOf('.');
    if (languageDot <= 0) continue;
    const base = stem.slice(0, languageDot);
    const entry = { name, trackName: stem.slice(languageDot + 1), extension };
    const list = byBase.get(base);
    if (list) list.push(entry);
    else byBase.set(base, [entry]);
  }
  return { mtimeMs, byBase };
}

async function directoryIndex(dir: string): Promise<DirectoryIndex> {
  const { mtimeMs } = await stat(dir);
  const cached = listings.get(dir);
  if (cached && cached.mtimeMs === mtimeMs) {
    listings.delete(dir);
    listings.set(dir, cached);
    return cached;
  }
  const key = `${dir}\0${mtimeMs}`;
  let building = pending.get(key);
  if (!building) {
    building = readdir(dir)
      .then((names) => indexNames(names, mtimeMs))
      .finally(() => pending.delete(key));
    pending.set(key, building);
  }
  const built = await building;
  listings.delete(dir);
  listings.set(dir, built);
  while (listings.size > CACHED_DIRECTORIES) listings.delete(listings.keys().next().value!);
  return built;
}

/** The info.json's document, or undefined when it cannot be read (the names are then read alone). */
async function readInfoJson(infoJsonPath: string): Promise<unknown> {
  try {
    return JSON.parse(decodeBytes(await readFile(infoJsonPath)));
  } catch {
    return undefined;
  }
}

/**
 * The readable subtitle files beside an info.json (or beside a media file: pass its path, the
 * base is what precedes the extension), one per track. Empty when the folder or the files are gone.
 */
export async function findArchiveSubtitleFiles(metadataPath: string): Promise<ArchiveSubtitleFile[]> {
  const dir = dirname(metadataPath);
  const name = basename(metadataPath);
  const base = name.toLowerCase().endsWith('.info.json')
    ? name.slice(0, -'.info.json'.length)
    : name.slice(0, Math.max(0, name.lastIndexOf('.')));
  if (!base) return [];
  let index: DirectoryIndex;
  try {
    index = await directoryIndex(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw error;
  }
  const entries = index.byBase.get(base) ?? [];
  const readable = entries.filter((entry) => READABLE.some((format) => format === entry.extension));
  if (readable.length === 0) return [];
  const infoJson = name.toLowerCase().endsWith('.info.json') ? metadataPath : join(dir, `${base}.info.json`);
  const tracks = new Map(
    readTrackNames(await readInfoJson(infoJson), new Set(readable.map((entry) => entry.trackName))).map((track) => [track.name, track]),
  );
  // One file per track (the best format when yt-dlp wrote several, or named it twice: en and en-orig).
  const best = new Map<string, ArchiveSubtitleFile>();
  for (const entry of readable) {
    const track = tracks.get(entry.trackName);
    if (!track) continue;
    const format = READABLE.find((candidate) => candidate === entry.extension)!;
    const key = `${track.language}\0${track.trackId}\0${track.kind}`;
    const current = best.get(key);
    if (
      !current ||
      READABLE.indexOf(format) < READABLE.indexOf(current.format) ||
      (format === current.format && entry.name < basename(current.path))
    )
      best.set(key, { path: join(dir, entry.name), language: track.language, trackId: track.trackId, format, kind: track.kind });
  }
  return [...best.values()].sort(
    (a, b) => compareText(a.language, b.language) || compareText(a.kind, b.kind) || compareText(a.trackId ?? '', b.trackId ?? ''),
  );
}

/** A subtitle file's text (UTF-8, UTF-16 with a BOM, or Windows-1252) and its size in bytes. */
export async function readArchiveSubtitleFile(path: string): Promise<{ text: string; bytes: number }> {
  const bytes = await readFile(path);
  return { text: decodeBytes(bytes), bytes: bytes.length };
}

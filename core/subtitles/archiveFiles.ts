/**
 * The subtitle files yt-dlp wrote beside a video's info.json: `<base>.<lang>.<ext>` next to
 * `<base>.info.json` (and `<base>.mp4`). The kind of each comes from the info.json: a language under
 * `subtitles` is manual; one under `automatic_captions` is auto, or translated when its URLs ask for
 * a translation (`tlang=`); a language in neither is auto (no human-made track without evidence).
 *
 * Directory listings are cached per directory and reused while the directory's mtime stays the
 * same (adding, removing or renaming a file changes it), so fetching the subtitles of every video
 * of a 20,000-video folder lists it once, not 20,000 times.
 */
import { readFile, readdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { SUBTITLE_EXTENSIONS } from '../sources/archive/scan.ts';
import { isObject } from '../youtube/json.ts';
import { decodeBytes } from './decodeBytes.ts';

/** The formats the codecs read, best first: word timings (json3, srv3), then WebVTT, older XML, SRT. */
const READABLE = ['json3', 'srv3', 'vtt', 'srv2', 'srv1', 'srt'] as const;
type ArchiveSubtitleFormat = (typeof READABLE)[number];

/** Subtitle "languages" that are not captions. */
const NOT_CAPTIONS = new Set(['live_chat', 'rechat', 'danmaku', 'comments']);

export interface ArchiveSubtitleFile {
  path: string;
  language: string;
  format: ArchiveSubtitleFormat;
  kind: 'manual' | 'auto' | 'translated';
}

interface DirectoryIndex {
  mtimeMs: number;
  /** base name → its subtitle files (name, language, lower-cased extension) */
  byBase: Map<string, Array<{ name: string; language: string; extension: string }>>;
}

const CACHED_DIRECTORIES = 8;
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
    const entry = { name, language: stem.slice(languageDot + 1), extension };
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

/** Kinds of the languages an info.json lists, or an empty map when it cannot be read. */
async function captionKinds(infoJsonPath: string): Promise<Map<string, ArchiveSubtitleFile['kind']>> {
  const kinds = new Map<string, ArchiveSubtitleFile['kind']>();
  let data: unknown;
  try {
    data = JSON.parse(decodeBytes(await readFile(infoJsonPath)));
  } catch {
    return kinds;
  }
  if (!isObject(data)) return kinds;
  if (isObject(data.automatic_captions)) {
    for (const [language, entries] of Object.entries(data.automatic_captions)) {
      const translated =
        Array.isArray(entries) && entries.some((entry) => isObject(entry) && typeof entry.url === 'string' && /[?&]tlang=/.test(entry.url));
      kinds.set(language, translated ? 'translated' : 'auto');
    }
  }
  // yt-dlp writes the manual track when a language has both.
  if (isObject(data.subtitles)) for (const language of Object.keys(data.subtitles)) kinds.set(language, 'manual');
  return kinds;
}

/**
 * The readable subtitle files beside an info.json (or beside a media file: pass its path, the
 * base is what precedes the extension), one per language (the best format when yt-dlp wrote
 * several). Empty when the folder or the files are gone.
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
  const best = new Map<string, { name: string; format: ArchiveSubtitleFormat }>();
  for (const entry of entries) {
    if (NOT_CAPTIONS.has(entry.language)) continue;
    const format = READABLE.find((candidate) => candidate === entry.extension);
    if (!format) continue;
    const current = best.get(entry.language);
    if (!current || READABLE.indexOf(format) < READABLE.indexOf(current.format)) best.set(entry.language, { name: entry.name, format });
  }
  if (best.size === 0) return [];
  const infoJson = name.toLowerCase().endsWith('.info.json') ? metadataPath : join(dir, `${base}.info.json`);
  const kinds = await captionKinds(infoJson);
  return [...best.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([language, file]) => ({ path: join(dir, file.name), language, format: file.format, kind: kinds.get(language) ?? 'auto' }));
}

/** A subtitle file's text (UTF-8, UTF-16 with a BOM, or Windows-1252) and its size in bytes. */
export async function readArchiveSubtitleFile(path: string): Promise<{ text: string; bytes: number }> {
  const bytes = await readFile(path);
  return { text: decodeBytes(bytes), bytes: bytes.length };
}

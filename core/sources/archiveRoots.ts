/**
 * The archive source over several folders: ARCHIVE_DIR and the archive roots stored in the database
 * (core/archives/). Each folder keeps its own index (createArchiveSource), so adding a root scans only
 * that root; the stored roots are read again at every use, so a root an import added while the
 * service runs is read by the next crawl, and a removed one no longer is.
 */
import { resolve } from 'node:path';
import type { ChannelQuery } from '../youtube/channelQuery.ts';
import { createArchiveSource, type ArchiveSource, type ArchiveSourceOptions } from './archive.ts';
import type { ChannelRecord, VideoPage, VideoSource } from './types.ts';

export interface ArchiveRootsOptions extends Omit<ArchiveSourceOptions, 'dir'> {
  /** ARCHIVE_DIR: always read, first. */
  dir: string;
  /** The stored roots in use now. */
  storedRoots: () => Promise<string[]>;
}

/**
 * A cursor names the folder and the offset in it: `<offset>` is ARCHIVE_DIR's (the single-folder
 * source's own cursors), `<offset>:<root>` a stored root's.
 */
function parseCursor(cursor: string | undefined): { offset: string | undefined; root: string | undefined } {
  if (cursor === undefined) return { offset: undefined, root: undefined };
  const colon = cursor.indexOf(':');
  return colon < 0 ? { offset: cursor, root: undefined } : { offset: cursor.slice(0, colon), root: cursor.slice(colon + 1) };
}

export function createArchiveRootsSource(options: ArchiveRootsOptions): VideoSource {
  const { storedRoots, ...sourceOptions } = options;
  const configured = resolve(options.dir);
  const sources = new Map<string, ArchiveSource>();
  const sourceOf = (dir: string) => {
    let source = sources.get(dir);
    if (!source) {
      source = createArchiveSource({ ...sourceOptions, dir });
      sources.set(dir, source);
    }
    return source;
  };

  /** ARCHIVE_DIR, then the stored roots in use; a removed root's index is dropped. */
  async function folders(): Promise<string[]> {
    const roots = (await storedRoots()).filter((root) => root !== configured);
    for (const dir of sources.keys()) if (dir !== configured && !roots.includes(dir)) sources.delete(dir);
    return [configured, ...roots];
  }

  return {
    name: 'archive',

    async resolveChannel(query: ChannelQuery, signal?: AbortSignal): Promise<ChannelRecord | undefined> {
      let found: ChannelRecord | undefined;
      // The first folder's record leads; the others fill in what it does not know.
      for (const dir of await folders()) {
        const channel = await sourceOf(dir).resolveChannel(query, signal);
        if (channel && (!found || channel.channelId === found.channelId)) found = { ...channel, ...definedFields(found) };
      }
      return found;
    },

    async listVideos(channel: ChannelRecord, cursor: string | undefined, signal?: AbortSignal): Promise<VideoPage> {
      const dirs = await folders();
      const at = parseCursor(cursor);
      // A root removed between two pages: the archive's part of the crawl ends there.
      let position = at.root === undefined ? 0 : dirs.indexOf(at.root);
      if (position < 0) return { videos: [], progress: 1 };
      let offset = at.offset;
      for (; position < dirs.length; position++, offset = undefined) {
        const page = await sourceOf(dirs[position]!).listVideos(channel, offset, signal);
        if (page.videos.length === 0 && page.next === undefined) continue;
        const progress = (position + (page.progress ?? 1)) / dirs.length;
        // Within this folder, else at the start of the next one (which may hold none of the channel's videos).
        const next =
          page.next !== undefined
            ? cursorOf(dirs, position, page.next)
            : position + 1 < dirs.length
              ? cursorOf(dirs, position + 1, '0')
              : undefined;
        return { videos: page.videos, progress, ...(next === undefined ? {} : { next }) };
      }
      return { videos: [], progress: 1 };
    },

    async warmUp() {
      const facts = await Promise.all((await folders()).map(async (dir) => (await sourceOf(dir).warmUp!()) as Record<string, unknown>));
      return { folders: facts };
    },
  };
}

const cursorOf = (dirs: string[], position: number, offset: string) => (position === 0 ? offset : `${offset}:${dirs[position]}`);

const definedFields = (record: ChannelRecord | undefined) =>
  Object.fromEntries(Object.entries(record ?? {}).filter(([, value]) => value !== undefined)) as Partial<ChannelRecord>;

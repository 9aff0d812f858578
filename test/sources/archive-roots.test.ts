import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createArchiveRootsSource } from '../../core/sources/archiveRoots.ts';
import type { ChannelRecord, VideoSource } from '../../core/sources/types.ts';
import { createArchiveFixture, type ArchiveFixture } from '../kit/archive-fixture.ts';

// The archive source over ARCHIVE_DIR and the stored roots: one channel's videos paged through
// every folder that holds some, the roots read again at every use.

let configured: ArchiveFixture;
let other: ArchiveFixture;
let copy: string;
let empty: string;
let roots: string[];

/** Every video id of a channel, paged to the end, and the cursors on the way. */
async function pageThrough(source: VideoSource, channel: ChannelRecord) {
  const ids: string[] = [];
  const cursors: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await source.listVideos(channel, cursor);
    ids.push(...page.videos.map((video) => video.videoId));
    cursor = page.next;
    if (cursor !== undefined) cursors.push(cursor);
  } while (cursor !== undefined);
  return { ids, cursors };
}

describe('the archive source over several folders', () => {
  beforeAll(async () => {
    [configured, other] = await Promise.all([
      createArchiveFixture({ videos: 3, seed: 'roots-configured', legacyChannel: false, flatOnly: 0 }),
      createArchiveFixture({ videos: 5, seed: 'roots-other', legacyChannel: false, flatOnly: 0 }),
    ]);
    // A second copy of ARCHIVE_DIR's channel (the same videos, and the same channel) under another root.
    copy = await mkdtemp(join(tmpdir(), 'afterimage-roots-copy-'));
    await cp(configured.dir, copy, { recursive: true });
    empty = await mkdtemp(join(tmpdir(), 'afterimage-roots-empty-'));
    roots = [];
  });
  afterAll(async () => {
    await Promise.all([
      configured?.cleanup(),
      other?.cleanup(),
      rm(copy, { recursive: true, force: true }),
      rm(empty, { recursive: true, force: true }),
    ]);
  });

  const source = () => createArchiveRootsSource({ dir: configured.dir, storedRoots: async () => roots, pageSize: 2 });

  it('finds a channel only a stored root holds, once the root is stored, and pages through it with cursors naming the root', async () => {
    const archive = source();
    const query = { kind: 'handle', handle: other.handle } as const;
    expect(await archive.resolveChannel(query)).toBeUndefined();
    roots = [empty, other.dir];
    const channel = await archive.resolveChannel(query);
    expect(channel).toMatchObject({ channelId: other.channelId });
    const { ids, cursors } = await pageThrough(archive, channel!);
    expect(ids.sort()).toEqual([...other.videoIds].sort());
    expect(cursors.every((cursor) => cursor.endsWith(`:${other.dir}`))).toBe(true);
  });

  it("lists ARCHIVE_DIR's videos first, then those of every root holding the channel", async () => {
    roots = [copy, other.dir];
    const archive = source();
    const channel = await archive.resolveChannel({ kind: 'channelId', channelId: configured.channelId });
    const { ids, cursors } = await pageThrough(archive, channel!);
    expect(ids).toHaveLength(configured.videoIds.length * 2);
    expect(new Set(ids.slice(0, configured.videoIds.length))).toEqual(new Set(configured.videoIds));
    expect(cursors[0]).toBe('2');
  });

  it('a root removed between two pages ends the listing there, and is no longer read', async () => {
    roots = [other.dir];
    const archive = source();
    const channel = (await archive.resolveChannel({ kind: 'channelId', channelId: other.channelId }))!;
    const first = await archive.listVideos(channel, undefined);
    expect(first.next).toBe(`2:${other.dir}`);
    roots = [];
    expect(await archive.listVideos(channel, first.next)).toEqual({ videos: [], progress: 1 });
    expect(await archive.resolveChannel({ kind: 'channelId', channelId: other.channelId })).toBeUndefined();
  });
});

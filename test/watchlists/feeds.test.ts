import { parseAtomFeed } from 'feedsmith';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { watchlistFeedPath } from '../../core/watchlists/ownWatchlist.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import {
  deleteVideos,
  fanOut,
  insertChannel,
  insertVideos,
  insertWatchlist,
  restoreVideo,
  retitleVideo,
  watchChannel,
} from './logFixtures.ts';

let db: TestDatabase;
let api: TestApi;
let channel: string;
let quiet: string;
/** Deletions and re-uploads, newest first. */
let deletionIds: string[];

const HOSTILE = 'Tom & Jerry <script>alert(1)</script> ]]> "quoted" \u0001bell\u001f';
const HOSTILE_AS_READ = 'Tom & Jerry <script>alert(1)</script> ]]> "quoted" \uFFFDbell\uFFFD';

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(db.sql);
  channel = await insertChannel(db.sql, 'Busy <channel>');
  quiet = await insertChannel(db.sql, 'Quiet');
  const many = await insertVideos(
    db.sql,
    channel,
    Array.from({ length: 110 }, (_, index) => `Video ${index}`),
  );
  const [hostile, reuploaded, renamed, restored] = await insertVideos(db.sql, channel, [HOSTILE, 'Copied', 'Renamed', 'Back']);
  const [elsewhere] = await insertVideos(db.sql, quiet, ['Quiet one']);
  await deleteVideos(db.sql, many);
  await deleteVideos(db.sql, [hostile!], 'copyright', 'Example Records <legal@example.org>');
  await deleteVideos(db.sql, [restored!]);
  await restoreVideo(db.sql, restored!);
  await retitleVideo(db.sql, renamed!, 'Renamed, again');
  // A deleted video found re-uploaded elsewhere, as link_reuploads records it.
  await db.sql`update videos set status = 're-uploaded', status_reason = 'terms_of_service', reuploaded_as = ${elsewhere!},
    status_source = 'reupload_search', status_evidence = 'same title and duration' where video_id = ${reuploaded!}`;
  await deleteVideos(db.sql, [elsewhere!], 'removed_by_uploader');
  const rows = await db.sql<{ id: string }[]>`
    select id::text from changes where kind in ('video.deleted', 'video.reuploaded') order by changes.id desc`;
  deletionIds = rows.map((row) => row.id);
});
afterAll(async () => {
  await api?.close();
  await db?.drop();
});

async function readFeed(path: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${api.url}${path}`, { headers });
  const body = await response.text();
  return { response, body, feed: response.status === 200 ? parseAtomFeed(body) : undefined };
}

const linkOf = (links: { rel?: string; href?: string }[] | undefined, rel: string) => links?.find((link) => link.rel === rel)?.href;

/** Every entry of a feed, following its next links from the first page. */
async function readAllPages(path: string) {
  const pages = [];
  for (let url: string | undefined = `${api.url}${path}`; url; ) {
    const { feed, response } = await readFeed(url.slice(api.url.length));
    expect(response.status).toBe(200);
    pages.push(feed!);
    url = linkOf(feed!.links, 'next');
  }
  return pages;
}

describe('the deletions feeds', () => {
  it('lists every confirmed deletion and re-upload, newest first, 50 a page through next links, with stable entry ids', async () => {
    expect(deletionIds).toHaveLength(114);
    const pages = await readAllPages('/feeds/deletions.atom');
    expect(pages.map((page) => page.entries?.length)).toEqual([50, 50, 14]);
    const entries = pages.flatMap((page) => page.entries ?? []);
    expect(entries.map((entry) => entry.id)).toEqual(deletionIds.map((id) => `tag:127.0.0.1,2026:change:${id}`));
    expect(new Set(pages.map((page) => page.id))).toEqual(new Set(['tag:127.0.0.1,2026:deletions']));
    expect(linkOf(pages[1]!.links, 'self')).toBe(`${api.url}/feeds/deletions.atom?before=${deletionIds[49]}`);

    const again = await readFeed('/feeds/deletions.atom');
    expect(again.feed!.entries!.map((entry) => entry.id)).toEqual(entries.slice(0, 50).map((entry) => entry.id));
    expect(again.response.headers.get('content-type')).toBe('application/atom+xml; charset=utf-8');
    expect(again.response.headers.get('cache-control')).toBe('public, max-age=300');

    const titles = entries.map((entry) => entry.title?.value);
    expect(titles).toContain('Deleted: Video 7 — removed for breaking the terms of service');
    expect(titles).toContain('Re-uploaded: Copied — removed for breaking the terms of service');
    expect(titles).toContain('Deleted: Quiet one — removed by the uploader');
    expect(titles.filter((title) => title?.startsWith('Restored') || title?.startsWith('Title changed'))).toEqual([]);
    const video = await db.sql<{ videoId: string }[]>`select video_id as "videoId" from videos where title = 'Video 7'`;
    const entry = entries.find((candidate) => candidate.title?.value === 'Deleted: Video 7 — removed for breaking the terms of service')!;
    expect(linkOf(entry.links, 'alternate')).toBe(`${api.url}/videos/${video[0]!.videoId}`);
    expect(entry.content?.value).toContain('previously live');
    expect(entry.content?.value).toContain('This video has been removed for violating the Terms of Service');
  });

  it('writes hostile titles as well-formed XML that reads back as they were', async () => {
    const { body, feed } = await readFeed('/feeds/deletions.atom');
    // XML 1.0 holds no C0 control character but tab, newline and carriage return.
    expect(body).not.toMatch(/[\u0000-\u0008\u000B\u000C\u000E-\u001F]/);
    // Every & starts a reference: nothing of the text is read as markup.
    expect(body).not.toMatch(/&(?!(#\d+|amp|lt|gt|quot|apos);)/);
    const entry = feed!.entries!.find((candidate) => candidate.title?.value?.includes('Tom & Jerry'))!;
    expect(entry.title?.value).toBe(`Deleted: ${HOSTILE_AS_READ} — removed after a copyright claim`);
    expect(entry.content?.value).toContain('<dd>Example Records &#60;legal@example.org&#62;</dd>');
    expect(body).not.toContain('<script>');
  });

  it('answers 304 to If-None-Match and If-Modified-Since, and changes with a new deletion', async () => {
    const first = await readFeed('/feeds/deletions.atom');
    const etag = first.response.headers.get('etag')!;
    const modified = first.response.headers.get('last-modified')!;
    expect(etag).toMatch(/^"/);
    expect((await readFeed('/feeds/deletions.atom', { 'If-None-Match': etag })).response.status).toBe(304);
    expect((await readFeed('/feeds/deletions.atom', { 'If-Modified-Since': modified })).response.status).toBe(304);

    const [late] = await insertVideos(db.sql, quiet, ['Late']);
    await deleteVideos(db.sql, [late!]);
    const fresh = await readFeed('/feeds/deletions.atom', { 'If-None-Match': etag });
    expect(fresh.response.status).toBe(200);
    expect(fresh.feed!.entries![0]!.title?.value).toBe('Deleted: Late — removed for breaking the terms of service');
    expect(fresh.response.headers.get('etag')).not.toBe(etag);
  });

  it("lists a channel's deletions alone, and 404 for a channel never stored", async () => {
    const pages = await readAllPages(`/channels/${quiet}/deletions.atom`);
    expect(pages[0]!.title?.value).toBe('Afterimage: confirmed deletions of Quiet');
    expect(pages.flatMap((page) => page.entries ?? []).map((entry) => entry.title?.value)).toEqual([
      'Deleted: Late — removed for breaking the terms of service',
      'Deleted: Quiet one — removed by the uploader',
    ]);
    const busy = await readAllPages(`/channels/${channel}/deletions.atom`);
    expect(busy.map((page) => page.entries?.length)).toEqual([50, 50, 13]);
    expect(busy[0]!.title?.value).toBe('Afterimage: confirmed deletions of Busy <channel>');
    expect((await readFeed(`/channels/UC${'z'.repeat(22)}/deletions.atom`)).response.status).toBe(404);
  });
});

describe("a watchlist's private feed", () => {
  it('lists what the watchlist watches; a rotated or wrong token is 404 at once', async () => {
    const { user } = await createKeyedUser(db.sql);
    const watchlist = await insertWatchlist(db.sql, user.id, 'Mine & <theirs>');
    const watched = await insertChannel(db.sql, 'Watched');
    const [gone, renamed, matched] = await insertVideos(db.sql, watched, ['Gone', 'Old name', 'Matched']);
    await watchChannel(db.sql, watchlist, watched);
    const [query] = await db.sql<{ id: string }[]>`insert into saved_queries (query) values ('{"q": "cats & dogs"}') returning id::text`;
    await db.sql`insert into watchlist_items (watchlist_id, kind, saved_query_id) values (${watchlist}, 'query', ${query!.id})`;
    await deleteVideos(db.sql, [gone!]);
    await retitleVideo(db.sql, renamed!, 'New name');
    await db.sql`insert into changes (kind, video_id, channel_id, saved_query_id, happened_at, details)
      values ('query.new_match', ${matched!}, ${watched}, ${query!.id}, now(), '{"title": "Matched"}')`;
    await fanOut(db.sql);

    const path = watchlistFeedPath(api.services.serverKey, { id: watchlist, feedVersion: 1 });
    const { response, feed } = await readFeed(path);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('private, no-cache');
    expect(feed!.title?.value).toBe('Afterimage watchlist: Mine & <theirs>');
    expect(linkOf(feed!.links, 'self')).toBe(`${api.url}${path}`);
    expect(feed!.entries!.map((entry) => entry.title?.value)).toEqual([
      'New match for “cats & dogs”: Matched',
      'Title changed: “Old name” → “New name”',
      'Deleted: Gone — removed for breaking the terms of service',
    ]);
    const etag = response.headers.get('etag')!;
    expect((await readFeed(path, { 'If-None-Match': etag })).response.status).toBe(304);

    await db.sql`update watchlists set feed_version = feed_version + 1 where id = ${watchlist}`;
    expect((await readFeed(path)).response.status).toBe(404);
    expect((await readFeed(path, { 'If-None-Match': etag })).response.status).toBe(404);
    const rotated = watchlistFeedPath(api.services.serverKey, { id: watchlist, feedVersion: 2 });
    expect((await readFeed(rotated)).feed!.entries).toHaveLength(3);
    expect((await readFeed(rotated.replace(/[^/]{4}\.atom$/, 'AAAA.atom'))).response.status).toBe(404);
    expect((await readFeed(`/feeds/watchlists/${watchlist}/short.atom`)).response.status).toBe(404);
  });
});

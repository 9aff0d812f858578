/**
 * listVideos of the Wayback source: walks the captures of the channel's listing pages, one
 * listing-URL form after another, with the CDX resume key (showResumeKey/resumeKey, as the
 * Wayback's own clients page), collects the video ids those captures link to, and looks every new
 * id up (./lookupVideo.ts). Each call does a bounded amount of work (captures read, videos looked
 * up, a time budget) and returns an opaque cursor holding where it stopped.
 */
import { TransientError } from '../httpErrors.ts';
import type { ChannelRecord, VideoPage, VideoRecord } from '../types.ts';
import type { WaybackCaptures } from './captures.ts';
import { rowPosition, type CdxPage, type CdxRow } from './cdx.ts';
import type { CdxQuery } from './cdxQuery.ts';
import { extractListedVideos } from './listingPage.ts';
import { decodeCursor, encodeCursor, listingForms, tabOf, type CursorState, type Form, type PendingVideo } from './cursor.ts';
import { lookupVideo, type VideoLookup } from './lookupVideo.ts';
import { mapLimit, settle, type Settled } from './parallel.ts';
import { videoRecord } from './records.ts';

export interface WaybackLimits {
  /** Listing captures read per listVideos call. */
  listingCapturesPerCall: number;
  /** Videos looked up (CDX + captures) per listVideos call. */
  videoLookupsPerCall: number;
  /** CDX listing pages requested per listVideos call (filters can leave pages empty). */
  cdxPagesPerCall: number;
  /** Watch captures read per video before giving up on older ones. */
  capturesPerVideo: number;
  /** Requests in flight at once. */
  concurrency: number;
  /** No new request is started after this many ms of a call. */
  timeBudgetMs: number;
  /** Video ids remembered in the cursor so later pages skip them (the oldest are forgotten). */
  seenIds: number;
  /** Calls a video's lookup may fail transiently before it is reported from its listing alone. */
  lookupAttempts: number;
}

export const DEFAULT_LIMITS: WaybackLimits = {
  listingCapturesPerCall: 25,
  videoLookupsPerCall: 30,
  cdxPagesPerCall: 4,
  capturesPerVideo: 4,
  concurrency: 4,
  timeBudgetMs: 45_000,
  seenIds: 1_000,
  lookupAttempts: 3,
};

const LISTING_FL = ['urlkey', 'timestamp', 'original', 'mimetype', 'statuscode', 'digest'] as const;
/** Tabs whose captures are read: the home page and the tabs listing the channel's own videos. */
const LISTING_TABS = new Set(['', 'featured', 'videos', 'streams', 'shorts', 'live', 'home', 'feed', 'uploads']);
const UPLOADS_TABS = new Set(['videos', 'streams', 'shorts', 'uploads']);

export interface ListingContext {
  captures: WaybackCaptures;
  limits: WaybackLimits;
  /** CDX rows per listing page (the `limit` of each resumed query). */
  pageSize: number;
}

/** One listVideos call: the cursor's state as it advances, and what the call has done so far. */
interface Walk extends ListingContext {
  channel: ChannelRecord;
  signal: AbortSignal | undefined;
  state: CursorState;
  deadline: number;
  videos: VideoRecord[];
  seen: Set<string>;
  seenOrder: string[];
  digests: Set<string>;
  lookups: number;
  listingReads: number;
  cdxPages: number;
  advanced: boolean;
  failure: unknown;
  /** A CDX page stays the same within a call: read it once even when the call comes back to it. */
  cached?: { key: string; page: CdxPage };
}

export async function listWaybackVideos(
  context: ListingContext,
  channel: ChannelRecord,
  cursor: string | undefined,
  signal?: AbortSignal,
): Promise<VideoPage> {
  const { limits } = context;
  const state: CursorState = cursor ? decodeCursor(cursor) : { v: 1, f: listingForms(channel), i: 0, p: [], s: '', c: [], g: [] };
  // Only lookups that already failed in earlier calls are left: their failures count, no throwing.
  const onlyRetriesLeft = state.i >= state.f.length && state.p.length > 0 && state.p.every((entry) => (entry.r ?? 0) >= 1);
  const seen = new Set<string>();
  for (let i = 0; i + 11 <= state.s.length; i += 11) seen.add(state.s.slice(i, i + 11));
  const walk: Walk = {
    ...context,
    channel,
    signal,
    state,
    deadline: Date.now() + limits.timeBudgetMs,
    videos: [],
    seen,
    seenOrder: [...seen],
    digests: new Set(state.g),
    lookups: 0,
    listingReads: 0,
    cdxPages: 0,
    advanced: false,
    failure: undefined,
  };

  while (!walk.failure && Date.now() <= walk.deadline) {
    signal?.throwIfAborted();
    if (state.p.length > 0) {
      if (walk.lookups >= limits.videoLookupsPerCall) break;
      await lookupBatch(walk);
      continue;
    }
    if (state.i >= state.f.length) break;
    if (walk.listingReads >= limits.listingCapturesPerCall || walk.cdxPages >= limits.cdxPagesPerCall) break;
    try {
      await readListingPage(walk);
    } catch (error) {
      if (!(error instanceof TransientError)) throw error;
      walk.failure = error;
    }
  }
  // Nothing got through: the archive is down or refusing; the caller backs off and retries the same cursor.
  if (walk.failure && !walk.advanced && walk.videos.length === 0 && !onlyRetriesLeft) throw walk.failure;

  state.s = walk.seenOrder.slice(-limits.seenIds).join('');
  state.g = [...walk.digests].slice(-50);
  const done = state.i >= state.f.length && state.p.length === 0;
  const progress = done ? 1 : Math.min(0.99, state.i / Math.max(1, state.f.length));
  return done ? { videos: walk.videos, progress } : { videos: walk.videos, next: encodeCursor(state), progress };
}

/** Looks up the queued videos this call still may, reporting those it settles. */
async function lookupBatch(walk: Walk): Promise<void> {
  const { state, limits, channel } = walk;
  const batch = state.p.splice(0, Math.max(0, limits.videoLookupsPerCall - walk.lookups));
  walk.lookups += batch.length;
  const outcomes = await mapLimit(batch, limits.concurrency, async (entry): Promise<Settled<VideoLookup> | undefined> => {
    if (walk.failure || Date.now() > walk.deadline) return undefined;
    const outcome = await settle(lookupVideo(walk.captures, entry.i, limits.capturesPerVideo, walk.signal));
    // One transient failure stops new lookups of this call: the archive may be struggling.
    if (!outcome.ok && outcome.error instanceof TransientError) walk.failure ??= outcome.error;
    return outcome;
  });
  const notStarted: PendingVideo[] = [];
  const failed: PendingVideo[] = [];
  const report = (entry: PendingVideo, lookup: VideoLookup) => {
    const record = videoRecord(walk.captures, channel, entry, lookup, entry.c === undefined ? undefined : state.c[entry.c]);
    if (record) walk.videos.push(record);
    walk.advanced = true;
  };
  batch.forEach((entry, index) => {
    const outcome = outcomes[index];
    if (!outcome) {
      notStarted.push(entry); // the budget ran out or an earlier lookup failed
      return;
    }
    if (outcome.ok) return report(entry, outcome.value);
    if (!(outcome.error instanceof TransientError)) throw outcome.error;
    const attempts = (entry.r ?? 0) + 1;
    if (attempts < limits.lookupAttempts) failed.push({ ...entry, r: attempts });
    // The archive keeps failing on this one: report what the listing said.
    else report(entry, { kind: 'none' });
  });
  // Failed lookups go to the back, so the rest of the walk goes on before they are tried again.
  state.p.unshift(...notStarted);
  state.p.push(...failed);
}

function listingQuery(form: Form, resumeKey: string | undefined, pageSize: number): CdxQuery {
  return {
    url: form.slice(2),
    matchType: form.startsWith('p:') ? 'prefix' : 'exact',
    fl: LISTING_FL,
    // SPF captures (?spf=navigate, application/json) hold the same page inside JSON strings.
    filter: ['statuscode:200', 'mimetype:(?:text/html|application/json).*'],
    collapse: ['digest'],
    limit: pageSize,
    showResumeKey: true,
    ...(resumeKey ? { resumeKey } : {}),
  };
}

/** The current CDX page of the current form (from the call's cache when it was read already). */
async function currentListingPage(walk: Walk): Promise<CdxPage> {
  const { state } = walk;
  const cacheKey = `${state.i} ${state.k ?? ''}`;
  if (walk.cached?.key === cacheKey) return walk.cached.page;
  const page = await walk.captures.cdx(listingQuery(state.f[state.i]!, state.k, walk.pageSize), walk.signal);
  walk.cdxPages++;
  walk.cached = { key: cacheKey, page };
  return page;
}

/** Reads the current CDX page's listing captures from where the cursor stopped, then moves on to the next page or form. */
async function readListingPage(walk: Walk): Promise<void> {
  const { state, limits } = walk;
  const page = await currentListingPage(walk);
  const after = state.a ?? '';
  const rows = page.rows.filter((row) => rowPosition(row) > after);
  let index = 0;
  while (index < rows.length) {
    if (walk.listingReads >= limits.listingCapturesPerCall || state.p.length >= limits.videoLookupsPerCall || Date.now() > walk.deadline)
      return;
    const { group, end } = nextGroup(walk, rows, index);
    if (!(await readGroup(walk, rows, group))) return;
    index = end;
    state.a = rowPosition(rows[end - 1]!);
  }
  // The whole page is read: on to the next page of this form, or to the next form.
  walk.advanced = true;
  if (page.resumeKey && page.resumeKey !== state.k) {
    state.k = page.resumeKey;
  } else {
    state.i++;
    delete state.k;
  }
  delete state.a;
}

type ListingCapture = { row: CdxRow; tab: string };

/** A group of rows from `index` to read together; rows outside the listing tabs or already read are stepped over. */
function nextGroup(walk: Walk, rows: CdxRow[], index: number): { group: ListingCapture[]; end: number } {
  const { limits, digests } = walk;
  const form = walk.state.f[walk.state.i]!;
  const group: ListingCapture[] = [];
  let end = index;
  while (end < rows.length && group.length < limits.concurrency && walk.listingReads + group.length < limits.listingCapturesPerCall) {
    const row = rows[end]!;
    end++;
    const tab = tabOf(form, row.original, walk.channel.channelId);
    if (tab === undefined || !LISTING_TABS.has(tab)) continue;
    if (row.digest && digests.has(row.digest)) continue;
    if (row.digest) digests.add(row.digest);
    group.push({ row, tab });
  }
  return { group, end };
}

/** Reads a group of listing captures and queues the videos they list; false when a read failed (the walk stops there). */
async function readGroup(walk: Walk, rows: CdxRow[], group: ListingCapture[]): Promise<boolean> {
  const { state } = walk;
  const bodies = await mapLimit(group, walk.limits.concurrency, ({ row }) => settle(walk.captures.readCapture(row, walk.signal)));
  for (let g = 0; g < group.length; g++) {
    const outcome = bodies[g]!;
    const { row, tab } = group[g]!;
    if (!outcome.ok) {
      if (!(outcome.error instanceof TransientError)) throw outcome.error;
      walk.failure ??= outcome.error;
      // Resume at this capture next time; the captures after it in the group are read again too.
      const previous = rows.indexOf(row) - 1;
      if (previous >= 0) state.a = rowPosition(rows[previous]!);
      for (const unread of group.slice(g)) if (unread.row.digest) walk.digests.delete(unread.row.digest);
      return false;
    }
    walk.listingReads++;
    walk.advanced = true;
    if (outcome.value !== undefined)
      queueListed(walk, row, extractListedVideos(outcome.value, walk.channel.channelId, UPLOADS_TABS.has(tab)));
    state.a = rowPosition(row);
  }
  return true;
}

/** Queues the videos a listing capture lists that this walk has not seen, noting the capture as their evidence. */
function queueListed(walk: Walk, row: CdxRow, listed: ReturnType<typeof extractListedVideos>): void {
  const { state } = walk;
  let ref: number | undefined;
  for (const [id, info] of listed) {
    if (info.owned === false) continue;
    if (walk.seen.has(id)) {
      // Listed as the channel's own after being seen elsewhere: upgrade it if still queued.
      if (info.owned) {
        const queued = state.p.find((entry) => entry.i === id);
        if (queued) queued.o = 1;
      }
      continue;
    }
    walk.seen.add(id);
    walk.seenOrder.push(id);
    if (ref === undefined) {
      state.c.push(`${row.timestamp} ${row.original}`);
      ref = state.c.length - 1;
    }
    const entry: PendingVideo = { i: id, c: ref };
    if (info.owned) entry.o = 1;
    if (info.title) entry.t = info.title.slice(0, 200);
    if (info.durationSeconds) entry.d = info.durationSeconds;
    state.p.push(entry);
  }
}

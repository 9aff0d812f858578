import { z } from 'zod';
import { AppError, notFound } from '../../core/errors.ts';
import { crawlStream, formatPosition, parsePosition, type Position, type StoredEvent } from '../../core/events/events.ts';
import { resolveChannel } from '../../core/search/resolveChannel.ts';
import { startSearch } from '../../core/search/startSearch.ts';
import { ACCEPTED_FORMS, CHANNEL_ID, parseChannelQuery } from '../../core/youtube/channelQuery.ts';
import { CHANNEL_JSON, VIDEO_JSON, type VideoObject } from '../../core/videos/videoObject.ts';
import { chargeQuota } from '../http/quota.ts';
import { defineRoute, handled, type RouteContext } from '../http/route.ts';
import { eventFrame, openEventStream } from '../sse/writer.ts';
import type { Caller } from '../http/auth.ts';

const sessionResponse = z.object({
  searchSessionId: z.string().uuid(),
  sseEndpointUrl: z.string(),
  channelId: z.string(),
  channelTitle: z.string(),
});

const sessionParams = z.strictObject({ sessionId: z.uuid({ message: 'expected a search session id (UUID)' }) });

const ownerId = (caller: Caller) => (caller.kind === 'key' ? caller.userId : null);
const sessionReply = (sessionId: string, channelId: string, channelTitle: string) => ({
  searchSessionId: sessionId,
  sseEndpointUrl: `/api/search/${sessionId}/stream`,
  channelId,
  channelTitle,
});

export const startSearchRoute = defineRoute({
  method: 'POST',
  path: '/api/search',
  tag: 'Channel search',
  summary: 'Start a channel search: resolve the channel now, find its videos in the background',
  description: `query may be: ${ACCEPTED_FORMS.join('; ')}. A video resolves to its channel. Counts against channelSearchesPerHour. A second search of a channel being crawled joins that crawl.`,
  auth: 'key',
  scope: 'L1',
  feature: 'channelSearch',
  body: z.strictObject({ query: z.string().min(1).max(2048) }),
  response: sessionResponse,
  errors: ['NOT_FOUND', 'SERVICE_UNAVAILABLE'],
  async handler({ body, caller, deps, res, log }) {
    const parsed = parseChannelQuery(body.query);
    if (!parsed) throw new AppError('INVALID_INPUT', `query: not a channel or video reference; accepted forms: ${ACCEPTED_FORMS.join('; ')}`);
    await chargeQuota(deps.counterSql ?? deps.sql, caller, 'channelSearchesPerHour', res);
    const channel = await resolveChannel(deps.sql, deps.sources, parsed, log);
    if (!channel) throw notFound(`no source knows the channel of "${body.query}"`);
    const started = await startSearch(deps.sql, { userId: ownerId(caller), channel, query: body.query, kind: 'full' });
    const [row] = await deps.sql<{ title: string }[]>`select title from channels where channel_id = ${channel.channelId}`;
    return sessionReply(started.sessionId, channel.channelId, row?.title ?? channel.title ?? '');
  },
});

interface SessionRow { id: string; channelId: string; crawlId: string; crawlFinished: boolean; joinXid: string; createdAt: Date; channel: unknown }

async function findSession(ctx: RouteContext<{ sessionId: string }, unknown, unknown>): Promise<SessionRow> {
  const [session] = await ctx.deps.sql<SessionRow[]>`
    select s.id, s.channel_id as "channelId", s.crawl_id::text as "crawlId", s.join_xid::text as "joinXid", s.created_at as "createdAt",
      cr.status <> 'running' as "crawlFinished", ${ctx.deps.sql.unsafe(CHANNEL_JSON)} as channel
    from search_sessions s join channels c on c.channel_id = s.channel_id join crawls cr on cr.id = s.crawl_id
    where s.id = ${ctx.params.sessionId} and s.user_id is not distinct from ${ownerId(ctx.caller)}`;
  // Another account's session is as unknown as a missing one.
  if (!session) throw notFound(`no search session ${ctx.params.sessionId}`);
  return session;
}

/** Every search:video also reaches clients that read only batches: a batch (without id) precedes its videos. */
function videoFrames(videos: Array<{ video: VideoObject; id: string }>): string {
  if (videos.length === 0) return '';
  return eventFrame('search:video_batch', { videos: videos.map((entry) => entry.video) }) + videos.map((entry) => eventFrame('search:video', entry.video, entry.id)).join('');
}

const isFinal = (type: string) => type === 'search:complete' || type === 'search:error';

/**
 * The frames of one delivery of crawl events, up to the final one if it is there. Made once per
 * delivery: the hub hands the same array to every caught-up stream of the crawl, and all of them
 * write this one Buffer.
 */
const deliveryFrames = new WeakMap<readonly StoredEvent[], { frames: Buffer; final: boolean }>();
function framesOf(events: readonly StoredEvent[]): { frames: Buffer; final: boolean } {
  const known = deliveryFrames.get(events);
  if (known) return known;
  let text = '';
  let videos: Array<{ video: VideoObject; id: string }> = [];
  let final = false;
  for (const event of events) {
    const id = `c:${formatPosition(event)}`;
    if (event.type === 'search:video') {
      videos.push({ video: event.payload as VideoObject, id });
      continue;
    }
    text += videoFrames(videos) + eventFrame(event.type, event.payload, id);
    videos = [];
    if (isFinal(event.type)) {
      final = true;
      break;
    }
  }
  text += videoFrames(videos);
  const made = { frames: Buffer.from(text), final };
  deliveryFrames.set(events, made);
  return made;
}

const SNAPSHOT_PAGE = 500;
const SNAPSHOT_DONE = 's:~';

/** Resume point: `s:<videoId>` inside the snapshot of stored videos, `c:<xid>.<id>` in the crawl's events. */
function parseResume(value: string | undefined): { phase: 'snapshot'; after: string } | { phase: 'live'; after: Position } | undefined {
  if (!value) return undefined;
  if (value === SNAPSHOT_DONE) return { phase: 'live', after: { xid: '0', id: '0' } };
  if (value.startsWith('s:')) return /^s:[A-Za-z0-9_-]{0,11}$/.test(value) ? { phase: 'snapshot', after: value.slice(2) } : undefined;
  const position = value.startsWith('c:') ? parsePosition(value.slice(2)) : undefined;
  return position ? { phase: 'live', after: position } : undefined;
}

export const streamSearchRoute = defineRoute({
  method: 'GET',
  path: '/api/search/:sessionId/stream',
  tag: 'Channel search',
  summary: 'Server-Sent Events of a search: what is stored at once, then what the crawl finds, then search:complete or search:error',
  description:
    'Events: search:channel_resolved, search:channel_update, search:progress {stage, percent}, search:video, search:video_batch, search:caption_info, search:complete {totals}, search:error {code, message}. Reconnect with Last-Event-ID (or ?lastEventId=) to get exactly the events missed.',
  auth: 'key',
  scope: 'L1',
  feature: 'channelSearch',
  params: sessionParams,
  query: z.strictObject({ lastEventId: z.string().max(64).optional() }),
  response: z.string().describe('text/event-stream'),
  errors: ['NOT_FOUND'],
  async handler(ctx) {
    const { req, res, deps, query } = ctx;
    const session = await findSession(ctx);
    const header = req.headers['last-event-id'];
    const resumeFrom = (typeof header === 'string' && header) || query.lastEventId;
    const resume = parseResume(resumeFrom);
    if (resumeFrom && !resume) throw new AppError('INVALID_INPUT', `Last-Event-ID: "${resumeFrom}" is not an event id of this stream`);

    let unsubscribe = () => {};
    const stream = openEventStream(res, deps.config.SSE_HEARTBEAT_SECONDS, deps.openStreams, () => unsubscribe());
    const live: Position = resume?.phase === 'live' && resume.after.xid !== '0' ? resume.after : { xid: session.joinXid, id: '0' };

    if (!resume || resume.phase === 'snapshot') {
      if (!resume) stream.write(eventFrame('search:channel_resolved', session.channel, 's:'));
      let after = resume?.after ?? '';
      let total = 0;
      for (;;) {
        const page = await deps.sql<{ video: VideoObject }[]>`
          select ${deps.sql.unsafe(VIDEO_JSON)} as video from videos v join channels c on c.channel_id = v.channel_id
          where v.channel_id = ${session.channelId} and v.first_seen_at <= ${session.createdAt} and v.video_id > ${after} collate "C"
          order by v.video_id collate "C" limit ${SNAPSHOT_PAGE}`;
        if (!stream.open) return handled;
        const withCaptions = page.filter(({ video }) => video.captions.length > 0 || video.hasSubtitles);
        stream.write(
          videoFrames(page.map(({ video }) => ({ video, id: `s:${video.videoId}` }))) +
            (withCaptions.length ? eventFrame('search:caption_info', { videos: withCaptions.map(({ video }) => ({ videoId: video.videoId, hasSubtitles: video.hasSubtitles, captions: video.captions })) }) : ''),
        );
        // The stored part is read at the client's pace, so it never counts as falling behind.
        await stream.drained();
        total += page.length;
        if (page.length < SNAPSHOT_PAGE) break;
        after = page[page.length - 1]!.video.videoId;
      }
      stream.write(eventFrame('search:progress', { stage: 'database', percent: 100, videos: total }, SNAPSHOT_DONE));
    }

    // Resumed after the final event of a finished crawl: nothing more will come.
    if (session.crawlFinished) {
      const [more] = await deps.sql`select 1 from events where stream = ${crawlStream(session.crawlId)} and (xid, id) > (${live.xid}::xid8, ${live.id}::bigint) limit 1`;
      if (!more) {
        stream.end();
        return handled;
      }
    }
    unsubscribe = deps.hub.subscribe(crawlStream(session.crawlId), live, (events) => {
      const { frames, final } = framesOf(events);
      stream.write(frames);
      if (final) stream.end();
    }, stream.drained);
    if (!stream.open) unsubscribe();
    return handled;
  },
});

export const continueSearchRoute = defineRoute({
  method: 'POST',
  path: '/api/search/:sessionId/continue',
  tag: 'Channel search',
  summary: 'Load the next page of archive (Wayback Machine) results: answers a new search session and its stream URL',
  description: 'Counts against channelSearchesPerHour. 400 INVALID_INPUT when the channel has no further archive page (or archive look-ups are not configured).',
  auth: 'key',
  scope: 'L1',
  feature: 'channelSearch',
  params: sessionParams,
  response: sessionResponse,
  errors: ['NOT_FOUND'],
  async handler(ctx) {
    const { deps, caller, res } = ctx;
    const session = await findSession(ctx);
    if (!deps.sources.some((source) => source.name === 'wayback')) {
      throw new AppError('INVALID_INPUT', 'archive look-ups are not configured on this server (WAYBACK_ENABLED=false), so there is no next page');
    }
    const [latest] = await deps.sql<{ status: string; next: string | null; kind: string }[]>`
      select status, next_archive_cursor as next, kind from crawls where channel_id = ${session.channelId}
      order by (kind = 'archive_page' and status = 'running') desc, coalesce(finished_at, started_at) desc limit 1`;
    const running = latest?.kind === 'archive_page' && latest.status === 'running';
    if (!running && !latest?.next) throw new AppError('INVALID_INPUT', 'this channel has no further archive page (or the first pass has not reached the archives yet)');
    await chargeQuota(deps.counterSql ?? deps.sql, caller, 'channelSearchesPerHour', res);
    const [channel] = await deps.sql<{ title: string }[]>`select title from channels where channel_id = ${session.channelId}`;
    const started = await startSearch(deps.sql, {
      userId: ownerId(caller),
      channel: { channelId: session.channelId },
      query: `continue ${session.id}`,
      kind: 'archive_page',
      archiveCursor: latest?.next ?? null,
    });
    return sessionReply(started.sessionId, session.channelId, channel?.title ?? '');
  },
});

export const backgroundStatusRoute = defineRoute({
  method: 'GET',
  path: '/api/search/background-status/:channelId',
  tag: 'Channel search',
  summary: 'Whether a crawl of the channel is running, and the caller\'s session following it (null if none)',
  auth: 'key',
  scope: 'L1',
  feature: 'channelSearch',
  params: z.strictObject({ channelId: z.string().regex(CHANNEL_ID, { message: 'expected a channel id (UC followed by 22 characters)' }) }),
  response: z.object({ running: z.boolean(), searchSessionId: z.string().nullable() }),
  async handler({ params, caller, deps }) {
    const [row] = await deps.sql<{ running: boolean; sessionId: string | null }[]>`
      select exists (select 1 from crawls where channel_id = ${params.channelId} and status = 'running') as running,
        (select s.id from search_sessions s join crawls cr on cr.id = s.crawl_id
          where s.channel_id = ${params.channelId} and cr.status = 'running' and s.user_id is not distinct from ${ownerId(caller)}
          order by s.created_at desc limit 1) as "sessionId"`;
    return { running: row!.running, searchSessionId: row!.sessionId };
  },
});

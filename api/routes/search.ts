import { z } from 'zod';
import { backgroundStatus } from '../../core/crawl/backgroundStatus.ts';
import { findSession, type SearchSession } from '../../core/crawl/findSession.ts';
import { continueSearch } from '../../core/crawl/continueSearch.ts';
import { searchChannel } from '../../core/crawl/searchChannel.ts';
import { snapshotCountThrough, snapshotHolds, snapshotPages } from '../../core/crawl/snapshotPages.ts';
import type { Sql } from '../../core/db/database.ts';
import { notFound } from '../../core/errors.ts';
import type { Logger } from '../../core/log.ts';
import { crawlStream, positionOf, streamHead, type Position } from '../../core/events/events.ts';
import { searchEventVocabulary } from '../../core/events/searchEvents.ts';
import { ACCEPTED_FORMS, CHANNEL_ID } from '../../core/youtube/channelQuery.ts';
import type { ChargeUnits } from '../http/guard.ts';
import { issueStreamToken, streamTokenObject, streamTokenParam } from '../http/streamToken.ts';
import { defineRoute, handled, type ApiDeps } from '../http/route.ts';
import { channelResolvedFrame, crawlFrames, parseResume, snapshotDoneFrame, snapshotFrames } from '../sse/searchFrames.ts';
import { openEventStream } from '../sse/writer.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { callerUserId, type Caller } from '../http/auth.ts';
import { answerNothingMore, lastEventId, notOfThisStream } from '../sse/followStream.ts';

const sessionResponse = z.object({
  searchSessionId: z.string().uuid(),
  sseEndpointUrl: z.string(),
  channelId: z.string(),
  channelTitle: z.string(),
  sseToken: streamTokenObject.describe(
    "an addition to the spec: opens sseEndpointUrl without the API key (sseToken.url), for a browser's EventSource",
  ),
});

const sessionParams = z.strictObject({ sessionId: z.uuid({ message: 'expected a search session id (UUID)' }) });

async function sessionReply(deps: ApiDeps, caller: Caller, started: { sessionId: string; channelTitle: string }, channelId: string) {
  const sseEndpointUrl = `/api/search/${started.sessionId}/stream`;
  return {
    searchSessionId: started.sessionId,
    sseEndpointUrl,
    channelId,
    channelTitle: started.channelTitle,
    sseToken: await issueStreamToken(deps, caller, sseEndpointUrl),
  };
}

/**
 * POST /api/search's work, for the route and the search page: parse, charge channelSearchesPerHour,
 * resolve, start or join the crawl. A channel no source knows ends 404, and the guard gives the unit back.
 */
export function startChannelSearch(deps: ApiDeps, caller: Caller, query: string, charge: ChargeUnits, log: Logger) {
  return searchChannel(
    { sql: deps.sql, sources: deps.sources, log, sourceWaitBudgetMs: deps.config.SOURCE_WAIT_BUDGET_MS },
    { query, userId: callerUserId(caller) },
    async () => void (await charge('channelSearchesPerHour')),
  );
}

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
  charges: ['channelSearchesPerHour'],
  async handler({ body, caller, deps, charge, log }) {
    const started = await startChannelSearch(deps, caller, body.query, charge, log);
    return sessionReply(deps, caller, started, started.channelId);
  },
});

/** The caller's session; another account's is as unknown as a missing one. */
export async function callersSession(sql: Sql, caller: Caller, sessionId: string): Promise<SearchSession> {
  const session = await findSession(sql, sessionId, callerUserId(caller));
  if (!session) throw notFound(`no search session ${sessionId}`);
  return session;
}

/**
 * Where a reconnecting client resumes: after a video of the session's snapshot (`snapshot`), or
 * after a position in its crawl's events (`live`; the snapshot-done point is where the session
 * joined); undefined: from the start. A point of another session, or of the crawl from before the
 * session joined it, would skip (or repeat) this one's events, so it is refused like a malformed one.
 */
async function resumePoint(
  sql: Sql,
  session: SearchSession,
  given: string | undefined,
): Promise<{ phase: 'snapshot'; after: string } | { phase: 'live'; after: Position } | undefined> {
  if (!given) return undefined;
  const resume = parseResume(given);
  if (resume?.phase === 'snapshot' && (resume.after === '' || (await snapshotHolds(sql, session, resume.after)))) return resume;
  if (resume?.phase === 'snapshotDone') return { phase: 'live', after: session.joinSeq };
  const position = resume?.phase === 'live' ? await positionOf(sql, crawlStream(session.crawlId), resume.eventId) : undefined;
  if (position !== undefined && position > session.joinSeq) return { phase: 'live', after: position };
  throw notOfThisStream(given);
}

export const streamSearchRoute = defineRoute({
  method: 'GET',
  path: '/api/search/:sessionId/stream',
  tag: 'Channel search',
  summary: 'Server-Sent Events of a search: what is stored at once, then what the crawl finds, then search:complete or search:error',
  description:
    'Events: search:channel_resolved, search:channel_update, search:progress {stage, percent, retry?}, search:video, search:video_batch, search:caption_info, search:status_change, search:complete {totals, failedSources, morePages}, search:error {code, message} (each described by components.schemas.SearchEvent). Comments (: keep-alive) every SSE_HEARTBEAT_SECONDS. Reconnect with Last-Event-ID (or ?lastEventId=) to get exactly the events missed.',
  auth: 'key',
  scope: 'L1',
  feature: 'channelSearch',
  params: sessionParams,
  query: z.strictObject({ lastEventId: z.string().max(64).optional(), token: streamTokenParam }),
  events: searchEventVocabulary,
  alsoAnswers: { 204: null },
  errors: ['NOT_FOUND'],
  async handler({ req, res, deps, caller, params, query }) {
    return streamSearchSession(
      deps,
      req,
      res,
      await callersSession(deps.sql, caller, params.sessionId),
      lastEventId(req, query.lastEventId),
    );
  },
});

/**
 * A search session's stream (GET /api/search/:sessionId/stream, and the channel page's live part):
 * what is stored at once, then what the crawl finds, resumed after `resumeFrom` when given.
 */
export async function streamSearchSession(
  deps: ApiDeps,
  req: IncomingMessage,
  res: ServerResponse,
  session: SearchSession,
  resumeFrom: string | undefined,
): Promise<typeof handled> {
  const resume = await resumePoint(deps.sql, session, resumeFrom);
  const live: Position = resume?.phase === 'live' ? resume.after : session.joinSeq;
  const finished = async () => session.crawlFinished && (await streamHead(deps.sql, crawlStream(session.crawlId))) <= live;
  // Resumed after the final event of a finished crawl (or after the stored part of a session that joined it finished): nothing more will come.
  if (resume?.phase === 'live' && (await finished())) {
    answerNothingMore(res);
    return handled;
  }

  let unsubscribe = () => {};
  const stream = openEventStream(res, deps.config.SSE_HEARTBEAT_SECONDS, deps.openStreams, () => unsubscribe());

  if (!resume || resume.phase === 'snapshot') {
    if (!resume) stream.write(channelResolvedFrame(session.channel));
    // The progress counts every stored video of the session, those sent before a reconnect too.
    let total = resume?.after ? await snapshotCountThrough(deps.sql, session, resume.after) : 0;
    for await (const page of snapshotPages(deps.sql, session, resume?.after ?? '')) {
      if (!stream.open) return handled;
      stream.write(snapshotFrames(page));
      // The stored part is read at the client's pace, so it never counts as falling behind.
      await stream.drained();
      total += page.length;
    }
    stream.write(snapshotDoneFrame(total));
  }

  // The stored part of a session that joined a finished crawl: its reconnect (after s:~) gets 204.
  if (await finished()) {
    stream.end();
    return handled;
  }
  unsubscribe = deps.hub.subscribe(
    crawlStream(session.crawlId),
    live,
    (events) => {
      const { frames, final } = crawlFrames(events);
      stream.write(frames);
      if (final) stream.end();
    },
    stream.drained,
  );
  if (!stream.open) unsubscribe();
  return handled;
}

export const continueSearchRoute = defineRoute({
  method: 'POST',
  path: '/api/search/:sessionId/continue',
  tag: 'Channel search',
  summary: 'Load the next page of archive (Wayback Machine) results: answers a new search session and its stream URL',
  description:
    'Counts against channelSearchesPerHour. With no further archive page (or archive look-ups not configured) the answer is the same, uncharged, and the new stream ends with search:complete {morePages: false, reason}.',
  auth: 'key',
  scope: 'L1',
  feature: 'channelSearch',
  params: sessionParams,
  response: sessionResponse,
  errors: ['NOT_FOUND'],
  charges: ['channelSearchesPerHour'],
  async handler({ deps, caller, charge, params }) {
    const session = await callersSession(deps.sql, caller, params.sessionId);
    return sessionReply(deps, caller, await continueCallersSearch(deps, caller, charge, session), session.channelId);
  },
});

/** "Continue" of the caller's session (the route, and the channel page's "load more from the archives"): charged as channelSearchesPerHour. */
export function continueCallersSearch(deps: ApiDeps, caller: Caller, charge: ChargeUnits, session: SearchSession) {
  return continueSearch(
    deps,
    { sessionId: session.id, channelId: session.channelId, userId: callerUserId(caller) },
    async () => void (await charge('channelSearchesPerHour')),
  );
}

export const backgroundStatusRoute = defineRoute({
  method: 'GET',
  path: '/api/search/background-status/:channelId',
  tag: 'Channel search',
  summary: "Whether a crawl of the channel is running, and the caller's session following it (absent if none)",
  auth: 'key',
  scope: 'L1',
  feature: 'channelSearch',
  params: z.strictObject({ channelId: z.string().regex(CHANNEL_ID, { message: 'expected a channel id (UC followed by 22 characters)' }) }),
  // The spec types searchSessionId as a string (UUID): when the caller has no session following a
  // running crawl (nothing runs, or POST /api/search was never called for it) the field is left out.
  response: z.object({
    running: z.boolean(),
    searchSessionId: z
      .string()
      .uuid()
      .optional()
      .describe("the caller's own session following the running crawl; absent when there is none (POST /api/search joins the crawl)"),
  }),
  async handler({ params, caller, deps }) {
    const status = await backgroundStatus(deps.sql, params.channelId, callerUserId(caller));
    return { running: status.running, ...(status.sessionId && { searchSessionId: status.sessionId }) };
  },
});

import { z } from 'zod';
import { backgroundStatus } from '../../core/crawl/searchSession.ts';
import { channelIdSchema } from '../../core/schemas.ts';
import { searchEventVocabulary } from '../../core/events/searchEvents.ts';
import { ACCEPTED_FORMS } from '../../core/youtube/channelQuery.ts';
import { perform, issueStreamToken, streamTokenObject, streamTokenParam, defineRoute, type ApiDeps } from '../http/route.ts';
import { callersSession, continueSearch, followSearch, startSearch } from '../actions/search.ts';
import { callerUserId, type Caller } from '../http/guard.ts';
import { lastEventId } from '../sse/writer.ts';

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

export const startSearchRoute = defineRoute({
  method: 'POST',
  path: '/api/search',
  tag: 'Channel search',
  summary: 'Start a channel search: resolve the channel now, find its videos in the background',
  description: `query may be: ${ACCEPTED_FORMS.join('; ')}. A video resolves to its channel. Counts against channelSearchesPerHour. A second search of a channel being crawled joins that crawl.`,
  auth: 'key',
  ...startSearch.access,
  body: z.strictObject({ query: z.string().min(1).max(2048) }),
  response: sessionResponse,
  errors: ['NOT_FOUND', 'SERVICE_UNAVAILABLE'],
  async handler(ctx) {
    const started = await perform(startSearch, ctx, ctx.body.query);
    return sessionReply(ctx.deps, ctx.caller, started, started.channelId);
  },
});

export const streamSearchRoute = defineRoute({
  method: 'GET',
  path: '/api/search/:sessionId/stream',
  tag: 'Channel search',
  summary: 'Server-Sent Events of a search: what is stored at once, then what the crawl finds, then search:complete or search:error',
  description:
    'Events: search:channel_resolved, search:channel_update, search:progress {stage, percent, retry?}, search:video, search:video_batch, search:caption_info, search:status_change, search:complete {totals, failedSources, morePages}, search:error {code, message} (each described by components.schemas.SearchEvent). Comments (: keep-alive) every SSE_HEARTBEAT_SECONDS. Reconnect with Last-Event-ID (or ?lastEventId=) to get exactly the events missed.',
  auth: 'key',
  ...followSearch.access,
  params: sessionParams,
  query: z.strictObject({ lastEventId: z.string().max(64).optional(), token: streamTokenParam }),
  events: searchEventVocabulary,
  alsoAnswers: { 204: null },
  errors: ['NOT_FOUND'],
  async handler(ctx) {
    const { req, res, deps, caller, params, query } = ctx;
    const session = await callersSession(deps.sql, caller, params.sessionId);
    return perform(followSearch, ctx, { res, session, resumeFrom: lastEventId(req, query.lastEventId) });
  },
});

export const continueSearchRoute = defineRoute({
  method: 'POST',
  path: '/api/search/:sessionId/continue',
  tag: 'Channel search',
  summary: 'Load the next page of archive (Wayback Machine) results: answers a new search session and its stream URL',
  description:
    'Counts against channelSearchesPerHour. With no further archive page (or archive look-ups not configured) the answer is the same, uncharged, and the new stream ends with search:complete {morePages: false, reason}.',
  auth: 'key',
  ...continueSearch.access,
  params: sessionParams,
  response: sessionResponse,
  errors: ['NOT_FOUND'],
  async handler(ctx) {
    const { deps, caller, params } = ctx;
    const session = await callersSession(deps.sql, caller, params.sessionId);
    return sessionReply(deps, caller, await perform(continueSearch, ctx, session), session.channelId);
  },
});

export const backgroundStatusRoute = defineRoute({
  method: 'GET',
  path: '/api/search/background-status/:channelId',
  tag: 'Channel search',
  summary: "Whether a crawl of the channel is running, and the caller's session following it (absent if none)",
  auth: 'key',
  scope: 'L1',
  feature: 'channelSearch',
  params: z.strictObject({ channelId: channelIdSchema }),
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

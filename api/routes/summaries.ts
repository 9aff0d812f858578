import { z } from 'zod';
import { MAX_RESULT_WINDOW } from '../../core/fts/backend.ts';
import { summaryEventVocabulary } from '../../core/summaries/summaryEvents.ts';
import { videoIdSchema, videoParams } from '../../core/schemas.ts';
import { summaryChannels, summaryLanguages, summaryTags } from '../../core/summaries/summaryFacets.ts';
import { summaryListItem, summaryObject } from '../../core/summaries/summaryObject.ts';
import { defineRoute, issueStreamToken, perform, privateCache, reply, streamTokenObject } from '../http/route.ts';
import {
  browseQuery,
  browseSummaries,
  countsPage,
  deleteSummary,
  generateSummary,
  listOf,
  pageOf,
  readSummary,
  summaryFilters,
  summaryList,
  summaryStreamParts,
  summaryToFollow,
} from '../actions/summaries.ts';
import { wholeNumber } from '../http/input.ts';
import { generationStreamRoute } from './generationStream.ts';

const TAG = 'AI summaries';
const limit = (fallback: number, max: number) => wholeNumber('limit', 1, max, fallback);

// ---------------------------------------------------------------------------------------------
// Lists of public ready summaries: fixed words under /api/summary/, registered before /:videoId
// ---------------------------------------------------------------------------------------------

const browseRoute = defineRoute({
  method: 'GET',
  path: '/api/summary/browse',
  tag: TAG,
  summary: 'Public summaries, newest first, filtered by tag, channel and language',
  description: `Private summaries never appear. page × limit ≤ ${MAX_RESULT_WINDOW}. Reading is free (no quota but requestsPerMinute).`,
  auth: 'optional',
  ...browseSummaries.access,
  cache: privateCache,
  query: browseQuery,
  response: summaryList,
  async handler(ctx) {
    return perform(browseSummaries, ctx, ctx.query);
  },
});

const latestRoute = defineRoute({
  method: 'GET',
  path: '/api/summary/latest',
  tag: TAG,
  summary: 'The most recently generated public summaries',
  auth: 'optional',
  ...browseSummaries.access,
  cache: privateCache,
  query: z.strictObject({ limit: limit(20, 100) }),
  response: z.object({ items: z.array(summaryListItem) }),
  async handler(ctx) {
    return { items: (await perform(browseSummaries, ctx, { page: 1, limit: ctx.query.limit })).items };
  },
});

const tagCount = z.object({ tag: z.string(), count: z.number().int().describe('public summaries with this tag') });

const tagsRoute = defineRoute({
  method: 'GET',
  path: '/api/summary/tags',
  tag: TAG,
  summary: 'Popular tags of public summaries: across all languages, and per language',
  auth: 'optional',
  feature: 'summaries',
  cache: privateCache,
  query: z.strictObject({ language: summaryFilters.language, limit: limit(50, 200).describe('tags per list') }),
  response: z.object({
    tags: z.array(tagCount).describe('most used first (of the language, when given)'),
    languages: z
      .array(z.object({ language: z.string(), count: z.number().int(), tags: z.array(tagCount) }))
      .describe('each language, most summaries first, with its own most used tags'),
  }),
  async handler({ query, deps }) {
    return summaryTags(deps.sql, { limit: query.limit, ...(query.language ? { language: query.language } : {}) });
  },
});

const languagesRoute = defineRoute({
  method: 'GET',
  path: '/api/summary/languages',
  tag: TAG,
  summary: 'Languages of public summaries with their counts',
  auth: 'optional',
  feature: 'summaries',
  cache: privateCache,
  response: z.object({ languages: z.array(z.object({ language: z.string(), count: z.number().int() })) }),
  async handler({ deps }) {
    return { languages: await summaryLanguages(deps.sql) };
  },
});

const channelsRoute = defineRoute({
  method: 'GET',
  path: '/api/summary/channels',
  tag: TAG,
  summary: 'Channels that have public summaries, most summaries first',
  auth: 'optional',
  feature: 'summaries',
  cache: privateCache,
  query: z.strictObject({ page: wholeNumber('page', 1, MAX_RESULT_WINDOW, 1), limit: limit(50, 100) }),
  response: listOf(
    z.object({ channelId: z.string(), channelTitle: z.string().nullable(), handle: z.string().nullable(), summaries: z.number().int() }),
  ),
  async handler({ query, deps }) {
    const { rows, total } = await summaryChannels(deps.sql, pageOf(query.page, query.limit));
    return { items: rows, ...countsPage(query.page, query.limit, total) };
  },
});

// ---------------------------------------------------------------------------------------------
// POST /api/summary/generate
// ---------------------------------------------------------------------------------------------

const generateRoute = defineRoute({
  method: 'POST',
  path: '/api/summary/generate',
  tag: TAG,
  summary: "Generate a video's summary: 202 and one background job, or 200 with the summary when it is ready",
  description:
    'Body {videoId, private?}. A generated summary answers 200 (not charged); a generation already running answers 202 and is joined (not charged); a failed one is generated again. A new generation counts one summaryGenerationsPerDay (given back if the generation fails) and answers 202 {status: "generating", videoId, …, streamUrl}: follow streamUrl (SSE) or poll GET /api/summary/{videoId}. Without a transcript the answer is 409 TRANSCRIPT_REQUIRED and a subtitle fetch is queued; generate again once GET /api/subtitles/{videoId}/status says available. private: true makes a summary only its owner sees, never listed.',
  auth: 'key',
  ...generateSummary.access,
  body: z.strictObject({ videoId: videoIdSchema, private: z.boolean({ message: 'expected true or false' }).default(false) }),
  response: summaryObject,
  alsoAnswers: {
    202: summaryObject.extend({
      streamToken: streamTokenObject.describe(
        "an addition to the spec: opens streamUrl without the API key (streamToken.url), for a browser's EventSource",
      ),
    }),
  },
  location: { status: 202, description: "the summary's URL: GET it, or follow its /stream, until it is generated" },
  errors: ['NOT_FOUND', 'TRANSCRIPT_REQUIRED'],
  async handler(ctx) {
    const { body, caller, deps } = ctx;
    const { outcome, summary } = await perform(generateSummary, ctx, body);
    if (outcome === 'generated') return summary;
    return reply(
      { ...summary, streamToken: await issueStreamToken(deps, caller, summary.streamUrl) },
      { status: 202, headers: { Location: `/api/summary/${body.videoId}` } },
    );
  },
});

const getRoute = defineRoute({
  method: 'GET',
  path: '/api/summary/:videoId',
  tag: TAG,
  summary: "A video's summary: the caller's own private one, else the public one",
  description:
    "While generating: status and requestedAt; failed: error. Another user's private summary is 404, as if it did not exist. Free (no quota but requestsPerMinute).",
  auth: 'optional',
  ...readSummary.access,
  cache: privateCache,
  params: videoParams,
  response: summaryObject,
  errors: ['NOT_FOUND'],
  async handler(ctx) {
    return perform(readSummary, ctx, ctx.params.videoId);
  },
});

const deleteRoute = defineRoute({
  method: 'DELETE',
  path: '/api/summary/:videoId',
  tag: TAG,
  summary: "Delete a video's public summary (administrators)",
  description: "hasSummary of the video turns false in the same transaction. Private summaries are their owners' and are not touched.",
  auth: 'key',
  ...deleteSummary.access,
  params: videoParams,
  response: z.object({ videoId: z.string(), deleted: z.literal(true) }),
  errors: ['NOT_FOUND'],
  async handler(ctx) {
    return perform(deleteSummary, ctx, ctx.params.videoId);
  },
});

const streamRoute = generationStreamRoute({
  path: '/api/summary/:videoId/stream',
  tag: TAG,
  summary: "Server-Sent Events of a summary's generation, ending with summary:complete or summary:error",
  description:
    'An addition to the spec. Events: summary:progress {stage, percent, chunk?, of?} (each stage once, and the latest percent), then summary:complete {summary} or summary:error {code, message, refunded} (described by components.schemas.SummaryEvent). A summary already generated or failed answers its final event once.',
  access: { auth: 'optional', ...summaryToFollow.access },
  params: videoParams,
  events: summaryEventVocabulary,
  errors: ['NOT_FOUND'],
  find: (ctx) => perform(summaryToFollow, ctx, ctx.params.videoId),
  parts: () => summaryStreamParts,
});

/** In matching order: the fixed words before /:videoId, so no video id can shadow them. */
export const summaryRoutes = [
  browseRoute,
  latestRoute,
  tagsRoute,
  languagesRoute,
  channelsRoute,
  generateRoute,
  getRoute,
  deleteRoute,
  streamRoute,
];

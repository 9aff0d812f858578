import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import type { Queryable } from '../../core/db/database.ts';
import { AppError, notFound } from '../../core/errors.ts';
import { summaryEvents, summaryEventVocabulary } from '../../core/summaries/summaryEvents.ts';
import { summaryGeneration } from '../../core/summaries/summaryGeneration.ts';
import { MAX_RESULT_WINDOW } from '../../core/fts/backend.ts';
import { videoIdSchema, videoParams } from '../../core/schemas.ts';
import { browseSummaries } from '../../core/summaries/browseSummaries.ts';
import { deletePublicSummary } from '../../core/summaries/deleteSummary.ts';
import { findSummary } from '../../core/summaries/findSummary.ts';
import { requestSummary } from '../../core/summaries/summaryGeneration.ts';
import { summaryChannels, summaryLanguages, summaryTags } from '../../core/summaries/summaryFacets.ts';
import { summaryListItem, summaryObject, toSummaryListItem, toSummaryObject, type SummaryRow } from '../../core/summaries/summaryObject.ts';
import { transcriptRequired } from '../../core/subtitles/transcriptRequired.ts';
import { callerUserId, type Caller } from '../http/auth.ts';
import { wholeNumber } from '../http/queryParams.ts';
import type { ChargeUnits } from '../http/guard.ts';
import { issueStreamToken, streamTokenObject } from '../http/streamToken.ts';
import { defineRoute, handled, privateCache, reply, type ApiDeps } from '../http/route.ts';
import { answerGenerationStream, type GenerationStreamParts } from '../sse/followStream.ts';
import { generationStreamRoute } from './generationStream.ts';

const TAG = 'AI summaries';
const viewerOf = (caller: Caller) => ({ userId: callerUserId(caller) });

const language = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z]{2,3}$/, { message: 'expected an ISO 639-1 language code such as en (or ISO 639-3)' });
const limit = (fallback: number, max: number) => wholeNumber('limit', 1, max, fallback);
export const pageOf = (page: number, size: number, name = 'page') => {
  if (page * size > MAX_RESULT_WINDOW)
    throw new AppError('INVALID_INPUT', `${name}: results past position ${MAX_RESULT_WINDOW} are not served; narrow the filters`);
  return { offset: (page - 1) * size, limit: size };
};
const listed = <T extends z.ZodType>(items: T) =>
  z
    .object({ page: z.number().int(), limit: z.number().int(), total: z.number().int(), totalPages: z.number().int() })
    .extend({ items: z.array(items) });

export const countsPage = (page: number, size: number, total: number) => ({
  page,
  limit: size,
  total,
  totalPages: Math.ceil(total / size),
});

// ---------------------------------------------------------------------------------------------
// Lists of public ready summaries: fixed words under /api/summary/, registered before /:videoId
// ---------------------------------------------------------------------------------------------

const summaryList = listed(summaryListItem);

/** GET /api/summary/browse's query; the summaries page reads the same fields. */
export const browseQuery = z.strictObject({
  tag: z
    .string()
    .trim()
    .toLowerCase()
    .min(1, { message: 'an empty tag matches nothing; leave it out' })
    .max(40, { message: 'at most 40 characters' })
    .optional(),
  channelId: z
    .string()
    .regex(/^UC[A-Za-z0-9_-]{22}$/, { message: 'expected a channel id (UC and 22 more characters)' })
    .optional(),
  language: language.optional(),
  page: wholeNumber('page', 1, MAX_RESULT_WINDOW, 1),
  limit: limit(20, 100),
});

/** A page of public summaries as GET /api/summary/browse answers it (the summaries page shows the same). */
export async function browseSummaryList(sql: Queryable, query: z.output<typeof browseQuery>) {
  const { tag, channelId, language: lang } = query;
  const { rows, total } = await browseSummaries(
    sql,
    { ...(tag ? { tag } : {}), ...(channelId ? { channelId } : {}), ...(lang ? { language: lang } : {}) },
    pageOf(query.page, query.limit),
  );
  return { items: rows.map(toSummaryListItem), ...countsPage(query.page, query.limit, total) };
}

const browseRoute = defineRoute({
  method: 'GET',
  path: '/api/summary/browse',
  tag: TAG,
  summary: 'Public summaries, newest first, filtered by tag, channel and language',
  description: `Private summaries never appear. page × limit ≤ ${MAX_RESULT_WINDOW}. Reading is free (no quota but requestsPerMinute).`,
  auth: 'optional',
  feature: 'summaries',
  cache: privateCache,
  query: browseQuery,
  response: summaryList,
  async handler({ query, deps }) {
    return browseSummaryList(deps.sql, query);
  },
});

const latestRoute = defineRoute({
  method: 'GET',
  path: '/api/summary/latest',
  tag: TAG,
  summary: 'The most recently generated public summaries',
  auth: 'optional',
  feature: 'summaries',
  cache: privateCache,
  query: z.strictObject({ limit: limit(20, 100) }),
  response: z.object({ items: z.array(summaryListItem) }),
  async handler({ query, deps }) {
    const { rows } = await browseSummaries(deps.sql, {}, { offset: 0, limit: query.limit });
    return { items: rows.map(toSummaryListItem) };
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
  query: z.strictObject({ language: language.optional(), limit: limit(50, 200).describe('tags per list') }),
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
  response: listed(
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
  scope: 'L2',
  feature: 'summaryGeneration',
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
  charges: ['summaryGenerationsPerDay'],
  async handler({ body, caller, deps, charge }) {
    const request = await requestCallersSummary(deps, caller, charge, body);
    const summary = toSummaryObject(request.summary);
    if (request.outcome === 'generated') return summary;
    return reply(
      { ...summary, streamToken: await issueStreamToken(deps, caller, summary.streamUrl) },
      { status: 202, headers: { Location: `/api/summary/${body.videoId}` } },
    );
  },
});

/**
 * A summary for the caller (the route, and the video page's Generate button): ready, or generating
 * (charged one summaryGenerationsPerDay when this request started it); 409 TRANSCRIPT_REQUIRED without a transcript.
 */
export async function requestCallersSummary(
  deps: ApiDeps,
  caller: Caller,
  charge: ChargeUnits,
  input: { videoId: string; private: boolean },
) {
  if (caller.kind === 'anonymous')
    throw new AppError('API_KEY_REQUIRED', 'generating a summary needs an API key, or a signed-in account on the website');
  const request = await requestSummary(deps.sql, {
    videoId: input.videoId,
    ownerId: caller.userId,
    private: input.private,
    charge: () => charge('summaryGenerationsPerDay'),
  });
  if (request.outcome === 'transcript_required') throw transcriptRequired(input.videoId, request.transcript, 'summary');
  return request;
}

// ---------------------------------------------------------------------------------------------
// GET and DELETE /api/summary/:videoId, GET /api/summary/:videoId/stream
// ---------------------------------------------------------------------------------------------

async function visibleSummary(deps: { sql: Parameters<typeof findSummary>[0] }, videoId: string, caller: Caller): Promise<SummaryRow> {
  const summary = await findSummary(deps.sql, videoId, viewerOf(caller));
  if (!summary) throw notFound(`video ${videoId} has no summary; POST /api/summary/generate makes one`);
  return summary;
}

const getRoute = defineRoute({
  method: 'GET',
  path: '/api/summary/:videoId',
  tag: TAG,
  summary: "A video's summary: the caller's own private one, else the public one",
  description:
    "While generating: status and requestedAt; failed: error. Another user's private summary is 404, as if it did not exist. Free (no quota but requestsPerMinute).",
  auth: 'optional',
  feature: 'summaries',
  cache: privateCache,
  params: videoParams,
  response: summaryObject,
  errors: ['NOT_FOUND'],
  async handler({ params, caller, deps }) {
    return toSummaryObject(await visibleSummary(deps, params.videoId, caller));
  },
});

const deleteRoute = defineRoute({
  method: 'DELETE',
  path: '/api/summary/:videoId',
  tag: TAG,
  summary: "Delete a video's public summary (administrators)",
  description: "hasSummary of the video turns false in the same transaction. Private summaries are their owners' and are not touched.",
  auth: 'key',
  admin: true,
  params: videoParams,
  response: z.object({ videoId: z.string(), deleted: z.literal(true) }),
  errors: ['NOT_FOUND'],
  async handler({ params, deps }) {
    if (!(await deletePublicSummary(deps.sql, params.videoId))) throw notFound(`video ${params.videoId} has no public summary`);
    return { videoId: params.videoId, deleted: true as const };
  },
});

const streamRoute = generationStreamRoute({
  path: '/api/summary/:videoId/stream',
  tag: TAG,
  summary: "Server-Sent Events of a summary's generation, ending with summary:complete or summary:error",
  description:
    'An addition to the spec. Events: summary:progress {stage, percent, chunk?, of?} (each stage once, and the latest percent), then summary:complete {summary} or summary:error {code, message, refunded} (described by components.schemas.SummaryEvent). A summary already generated or failed answers its final event once.',
  access: { auth: 'optional', feature: 'summaries' },
  params: videoParams,
  events: summaryEventVocabulary,
  errors: ['NOT_FOUND'],
  find: ({ deps, params, caller }) => visibleSummary(deps, params.videoId, caller),
  parts: () => summaryStreamParts,
});

/** A summary's events: its final one from the stored row once it is finished. */
const summaryStreamParts: GenerationStreamParts<SummaryRow> = {
  kind: summaryGeneration,
  outcome: async (summary) =>
    summary.status === 'generated'
      ? summaryEvents.complete({ summary: toSummaryObject(summary) })
      : summaryEvents.error({
          code: 'INTERNAL_ERROR',
          message: summary.error ?? 'the generation failed',
          refunded: summary.charged_window_start === null,
        }),
};

/** The events of the summary the caller sees (the route, and the video page's live progress); a finished one answers its final event once. */
export async function streamSummary(
  deps: ApiDeps,
  res: ServerResponse,
  caller: Caller,
  videoId: string,
  resumeFrom: string | undefined,
): Promise<typeof handled> {
  await answerGenerationStream(deps, res, summaryStreamParts, await visibleSummary(deps, videoId, caller), resumeFrom);
  return handled;
}

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

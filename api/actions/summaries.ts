/**
 * AI summaries as callers use them: read the one they may see, generate, browse the public ones, follow a
 * generation, remove a public one. GET/POST/DELETE /api/summary…, the video and summaries pages, and the
 * get_summary, generate_summary and browse_summaries tools all perform these.
 */
import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { AppError, notFound } from '../../core/errors.ts';
import { MAX_RESULT_WINDOW } from '../../core/fts/backend.ts';
import { channelIdSchema, languageCode } from '../../core/schemas.ts';
import { transcriptRequired } from '../../core/subtitles/transcriptRequired.ts';
import { browseSummaries as browsePublicSummaries } from '../../core/summaries/browseSummaries.ts';
import { deletePublicSummary } from '../../core/summaries/deleteSummary.ts';
import { findSummary } from '../../core/summaries/findSummary.ts';
import { summaryEvents } from '../../core/summaries/summaryEvents.ts';
import { requestSummary, summaryGeneration } from '../../core/summaries/summaryGeneration.ts';
import {
  summaryListItem,
  toSummaryListItem,
  toSummaryObject,
  type SummaryObject,
  type SummaryRow,
} from '../../core/summaries/summaryObject.ts';
import { callerUserId } from '../http/guard.ts';
import { wholeNumber } from '../http/input.ts';
import { handled } from '../http/route.ts';
import { answerGenerationStream, type GenerationStreamParts } from '../sse/followStream.ts';
import { defineAction, type ActionContext } from '../http/route.ts';

/** A page of a list by its number and size; past MAX_RESULT_WINDOW nothing is served. */
export const pageOf = (page: number, size: number, name = 'page') => {
  if (page * size > MAX_RESULT_WINDOW)
    throw new AppError('INVALID_INPUT', `${name}: results past position ${MAX_RESULT_WINDOW} are not served; narrow the filters`);
  return { offset: (page - 1) * size, limit: size };
};

/** The counts beside a page of a list. */
export const countsPage = (page: number, size: number, total: number) => ({
  page,
  limit: size,
  total,
  totalPages: Math.ceil(total / size),
});

/** The filters of a list of public summaries, one rule each for every surface (numbers are the surface's: query text or JSON). */
export const summaryFilters = {
  tag: z
    .string()
    .trim()
    .toLowerCase()
    .min(1, { message: 'an empty tag matches nothing; leave it out' })
    .max(40, { message: 'at most 40 characters' })
    .optional(),
  channelId: channelIdSchema.optional(),
  language: languageCode.optional(),
};

/** A page of a list with its counts. */
export const listOf = <T extends z.ZodType>(items: T) =>
  z.object({
    items: z.array(items),
    page: z.number().int(),
    limit: z.number().int(),
    total: z.number().int(),
    totalPages: z.number().int(),
  });

export const summaryList = listOf(summaryListItem);

/** The browse input as a query string gives it: GET /api/summary/browse and the summaries page. */
export const browseQuery = z.strictObject({
  ...summaryFilters,
  page: wholeNumber('page', 1, MAX_RESULT_WINDOW, 1),
  limit: wholeNumber('limit', 1, 100, 20),
});

type BrowseInput = { tag?: string | undefined; channelId?: string | undefined; language?: string | undefined; page: number; limit: number };

export const browseSummaries = defineAction({
  what: 'browsing summaries',
  access: { feature: 'summaries' },
  async run({ deps }, input: BrowseInput): Promise<z.output<typeof summaryList>> {
    const { tag, channelId, language } = input;
    const { rows, total } = await browsePublicSummaries(
      deps.sql,
      { ...(tag ? { tag } : {}), ...(channelId ? { channelId } : {}), ...(language ? { language } : {}) },
      pageOf(input.page, input.limit),
    );
    return { items: rows.map(toSummaryListItem), ...countsPage(input.page, input.limit, total) };
  },
});

const noSummary = (videoId: string) =>
  notFound(`video ${videoId} has no summary; generate one (POST /api/summary/generate, or generate_summary)`);

/** The row of the video's summary the caller may see: their own private one, else the public one; another user's private one is as absent as none. */
const visibleSummary = ({ deps, caller }: ActionContext, videoId: string) =>
  findSummary(deps.sql, videoId, { userId: callerUserId(caller) });

/** That summary's row, which following its generation reads (GET …/stream, the video page's live part). */
export const summaryToFollow = defineAction({
  what: 'reading a summary',
  access: { feature: 'summaries' },
  async run(ctx, videoId: string): Promise<SummaryRow> {
    const summary = await visibleSummary(ctx, videoId);
    if (!summary) throw noSummary(videoId);
    return summary;
  },
});

/** The same summary as every surface shows it (the row becomes a SummaryObject here, once). */
export const readSummary = defineAction({
  what: 'reading a summary',
  access: summaryToFollow.access,
  run: async (ctx, videoId: string): Promise<SummaryObject> => toSummaryObject(await summaryToFollow.run(ctx, videoId)),
});

/** The same summary, or null when there is none (the video page offers to generate one). */
export const summaryIfAny = defineAction({
  what: 'reading a summary',
  access: summaryToFollow.access,
  async run(ctx, videoId: string): Promise<SummaryObject | null> {
    const summary = await visibleSummary(ctx, videoId);
    return summary ? toSummaryObject(summary) : null;
  },
});

/** The video's public generated summary, whoever asks (its public page, the same for everybody). */
export const readPublicSummary = defineAction({
  what: 'reading a public summary',
  access: {},
  async run({ deps }, videoId: string): Promise<SummaryObject> {
    const summary = await findSummary(deps.sql, videoId, { userId: null });
    if (summary?.status !== 'generated') throw notFound(`video ${videoId} has no public summary`);
    return toSummaryObject(summary);
  },
});

/**
 * A summary for the caller: ready, or generating (charged one summaryGenerationsPerDay when this request
 * started it); 409 TRANSCRIPT_REQUIRED, with a subtitle fetch queued, without a transcript.
 */
export const generateSummary = defineAction({
  what: 'generating a summary',
  access: { scope: 'L2', feature: 'summaryGeneration', charges: ['summaryGenerationsPerDay'] },
  async run({ deps, caller, charge }, input: { videoId: string; private: boolean }) {
    if (caller.kind === 'anonymous')
      throw new AppError('API_KEY_REQUIRED', 'generating a summary needs an API key, or a signed-in account on the website');
    const request = await requestSummary(deps.sql, {
      videoId: input.videoId,
      ownerId: caller.userId,
      private: input.private,
      charge: () => charge('summaryGenerationsPerDay'),
    });
    if (request.outcome === 'transcript_required') throw transcriptRequired(input.videoId, request.transcript, 'summary');
    return { outcome: request.outcome, id: request.summary.id, summary: toSummaryObject(request.summary) };
  },
});

export const deleteSummary = defineAction({
  what: 'deleting a summary',
  access: { admin: true },
  async run({ deps }, videoId: string) {
    if (!(await deletePublicSummary(deps.sql, videoId))) throw notFound(`video ${videoId} has no public summary`);
    return { videoId, deleted: true as const };
  },
});

/** A summary's events: its final one from the stored row once it is finished. */
export const summaryStreamParts: GenerationStreamParts<SummaryRow> = {
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

/** The events of the summary the caller sees, as Server-Sent Events; a finished one answers its final event once. */
export const followSummary = defineAction({
  what: "following a summary's generation",
  access: summaryToFollow.access,
  async run(ctx, input: { videoId: string; res: ServerResponse; resumeFrom: string | undefined }): Promise<typeof handled> {
    const summary = await summaryToFollow.run(ctx, input.videoId);
    await answerGenerationStream(ctx.deps, input.res, summaryStreamParts, summary, input.resumeFrom);
    return handled;
  },
});

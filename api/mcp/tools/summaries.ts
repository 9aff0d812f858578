import { z } from 'zod';
import { AppError } from '../../../core/errors.ts';
import { MAX_RESULT_WINDOW } from '../../../core/fts/backend.ts';
import { videoIdSchema } from '../../../core/schemas.ts';
import { summaryEvents } from '../../../core/summaries/summaryEvents.ts';
import { summaryGeneration } from '../../../core/summaries/summaryGeneration.ts';
import { summaryObject, type SummaryObject } from '../../../core/summaries/summaryObject.ts';
import { perform } from '../../http/route.ts';
import { browseSummaries, generateSummary, readSummary, summaryFilters, summaryList } from '../../actions/summaries.ts';
import { followGeneration, MAX_WAIT_SECONDS } from '../followGeneration.ts';
import { defineTool } from '../tool.ts';

/** A summary as a model reads it. */
function summaryText(summary: SummaryObject): string {
  if (summary.status !== 'generated')
    return `The summary of ${summary.videoId} is ${summary.status}${summary.error ? `: ${summary.error}` : ''}.`;
  const points = summary.keyPoints.map((point) => `- ${point.text} (${point.url})`).join('\n');
  return `# ${summary.title ?? summary.videoTitle ?? summary.videoId}\n${summary.tldr ?? ''}\n\n## Key points\n${points}\n\n## Summary\n${summary.detailedSummary ?? ''}\n\nTags: ${summary.tags.join(', ')}`;
}

export const getSummaryTool = defineTool({
  name: 'get_summary',
  title: 'Get a summary',
  description:
    'The AI summary of a video (your private one, else the public one): TL;DR, key points linked to their second in the video, a detailed summary, tags. Free (no quota but requestsPerMinute).',
  input: z.object({ videoId: videoIdSchema }),
  output: summaryObject,
  access: readSummary.access,
  readOnly: true,
  async run(args, ctx) {
    const data = await perform(readSummary, ctx, args.videoId);
    return { data, text: summaryText(data) };
  },
});

export const generateSummaryTool = defineTool({
  name: 'generate_summary',
  title: 'Generate a summary',
  description: `Queues the AI summary of a video (the same job as POST /api/summary/generate). A generated summary is answered at once and not charged; a running generation is joined (not charged); a new one counts one summaryGenerationsPerDay (given back if the generation fails). With a progress token the call reports the job's progress (notifications/progress) and waits for the summary, at most waitSeconds (≤ ${MAX_WAIT_SECONDS}); otherwise it answers status "generating" at once: call get_summary later. Without subtitles the answer is a TRANSCRIPT_REQUIRED error and a subtitle fetch is queued.`,
  input: z.object({
    videoId: videoIdSchema,
    private: z.boolean().default(false).describe('a summary only you see, never listed'),
    waitSeconds: z
      .number()
      .int()
      .min(0)
      .max(MAX_WAIT_SECONDS)
      .default(MAX_WAIT_SECONDS)
      .describe('with a progress token: how long to wait for the summary'),
  }),
  output: summaryObject,
  access: generateSummary.access,
  readOnly: false,
  async run(args, ctx, extra) {
    const request = await perform(generateSummary, ctx, args);
    let data = request.summary;
    if (request.outcome === 'generating' && extra._meta?.progressToken !== undefined && args.waitSeconds > 0) {
      const final = await followGeneration(ctx.deps.hub, summaryGeneration, request.id, extra, args.waitSeconds);
      if (final?.type === summaryEvents.error.type)
        throw new AppError(
          'INTERNAL_ERROR',
          `the summary of ${args.videoId} could not be generated: ${(final.payload as { message: string }).message}; generate_summary tries again`,
        );
      if (final) data = (final.payload as { summary: SummaryObject }).summary;
    }
    return {
      data,
      text:
        data.status === 'generating'
          ? `The summary of ${args.videoId} is being generated; call get_summary in a little while.`
          : summaryText(data),
    };
  },
});

export const browseSummariesTool = defineTool({
  name: 'browse_summaries',
  title: 'Browse summaries',
  description: `Public AI summaries, newest first, filtered by tag, channel and language (ISO 639-1). page × limit ≤ ${MAX_RESULT_WINDOW}. Free.`,
  input: z.object({
    ...summaryFilters,
    page: z.number().int().min(1).max(MAX_RESULT_WINDOW).default(1),
    limit: z.number().int().min(1).max(100).default(20),
  }),
  output: summaryList,
  access: browseSummaries.access,
  readOnly: true,
  async run(args, ctx) {
    const data = await perform(browseSummaries, ctx, args);
    const items = data.items;
    const lines = items.map(
      (item) => `- ${item.videoId} ${item.title ?? item.videoTitle ?? ''} — ${item.tldr ?? ''} [${item.tags.join(', ')}]`,
    );
    return {
      data,
      text: `${data.total} summaries (page ${args.page})\n${lines.join('\n')}`,
    };
  },
});

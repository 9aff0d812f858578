import { z } from 'zod';
import { AppError } from '../../../core/errors.ts';
import { videoIdSchema } from '../../../core/schemas.ts';
import { stenogramMetadata, toMetadata } from '../../../core/stenograms/metadata.ts';
import { stenogramEvents, type CompletionLogged } from '../../../core/stenograms/stenogramEvents.ts';
import { stenogramGeneration } from '../../../core/stenograms/stenogramGeneration.ts';
import { generateStenogram, stenogramMarkdown } from '../../actions/stenograms.ts';
import { perform } from '../../http/route.ts';
import { followGeneration, MAX_WAIT_SECONDS } from '../followGeneration.ts';
import { defineTool } from '../tool.ts';

export const generateStenogramTool = defineTool({
  name: 'generate_stenogram',
  title: 'Generate a stenogram',
  description: `Your private stenogram of a video: a word-for-word dialogue transcript with speaker tags, as Markdown (the same job as POST /api/stenograms/{videoId}/generate). Counts one apiStenogramsPerDay on your key, shared with the REST endpoint (resets at 00:00 UTC; given back if the generation fails). With a progress token the call reports progress and waits for the Markdown, at most waitSeconds (≤ ${MAX_WAIT_SECONDS}); otherwise it answers at once with status "generating" and markdownUrl. Errors: STENOGRAM_CONFLICT (you have one of this video, or one is being generated), TRANSCRIPT_REQUIRED (a subtitle fetch is queued).`,
  input: z.object({
    videoId: videoIdSchema,
    language: z
      .string()
      .trim()
      .toLowerCase()
      .regex(/^[a-z]{2,3}$/)
      .optional()
      .describe('ISO 639-1/639-2 hint; omitted: detected'),
    waitSeconds: z
      .number()
      .int()
      .min(0)
      .max(MAX_WAIT_SECONDS)
      .default(MAX_WAIT_SECONDS)
      .describe('with a progress token: how long to wait for the stenogram'),
  }),
  output: z.object({
    metadata: stenogramMetadata,
    markdown: z.string().nullable().describe('the stenogram, when it was ready within the wait'),
  }),
  access: generateStenogram.access,
  readOnly: false,
  async run(args, ctx, extra) {
    const stenogram = await perform(generateStenogram, ctx, { videoId: args.videoId, language: args.language ?? null });
    let data = { metadata: toMetadata(stenogram), markdown: null as string | null };
    if (extra._meta?.progressToken !== undefined && args.waitSeconds > 0) {
      const final = await followGeneration(ctx.deps.hub, stenogramGeneration, stenogram.id, extra, args.waitSeconds);
      if (final?.type === stenogramEvents.error.type) {
        const failure = final.payload as { message: string; refunded: boolean };
        throw new AppError(
          'INTERNAL_ERROR',
          `the stenogram of ${args.videoId} could not be generated: ${failure.message}${failure.refunded ? ' (the apiStenogramsPerDay unit was given back)' : ''}`,
        );
      }
      if (final) {
        // The logged event names the stenogram; its text is read from the store, as the REST stream does.
        const done = final.payload as CompletionLogged;
        data = { metadata: done.metadata, markdown: await stenogramMarkdown(ctx.deps, stenogram) };
      }
    }
    return {
      data,
      text:
        data.markdown ??
        `The stenogram of ${args.videoId} is being generated; read it at ${data.metadata.markdownUrl} (REST, your key) when it is done.`,
    };
  },
});

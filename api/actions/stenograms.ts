/**
 * Private stenograms as their owners use them: generate one, follow its generation, read one's own.
 * POST /api/stenograms/:videoId/generate and …/stream, the video page's stenogram section and the
 * generate_stenogram tool all perform these.
 */
import type { ServerResponse } from 'node:http';
import { AppError, notFound } from '../../core/errors.ts';
import { findStenogram, stenogramUrl, toMetadata, type StenogramRow } from '../../core/stenograms/metadata.ts';
import { readStenogramMarkdown } from '../../core/stenograms/readMarkdown.ts';
import { stenogramEvents, type CompletionLogged } from '../../core/stenograms/stenogramEvents.ts';
import { requestStenogram, stenogramGeneration } from '../../core/stenograms/stenogramGeneration.ts';
import { transcriptRequired } from '../../core/subtitles/transcriptRequired.ts';
import type { Caller } from '../http/guard.ts';
import { defineAction, handled, type ApiDeps } from '../http/route.ts';
import { answerGenerationStream, type GenerationStreamParts } from '../sse/followStream.ts';

/** Every stenogram action: a tier with the stenograms feature, and an L3+ key when called with one (api-spec §4.5). */
export const stenogramAccess = { scope: 'L3', feature: 'stenograms' } as const;

/** The owner of the caller's stenograms: a key's user or a signed-in person. */
export const stenogramOwner = (caller: Caller): string => {
  if (caller.kind === 'anonymous')
    throw new AppError('API_KEY_REQUIRED', 'stenograms need an API key, or a signed-in account on the website');
  return caller.userId;
};

/** The caller's own stenogram (`owner` omitted: the caller); anybody else's, administrators' too, is as unknown as a missing one. */
export const readStenogram = defineAction({
  what: 'reading a stenogram',
  access: stenogramAccess,
  async run({ deps, caller }, input: { videoId: string; owner?: string | undefined }): Promise<StenogramRow> {
    const userId = stenogramOwner(caller);
    const owner = input.owner ?? userId;
    const row = owner === userId ? await findStenogram(deps.sql, userId, input.videoId) : undefined;
    if (!row) throw notFound(`no stenogram ${stenogramUrl(owner, input.videoId)}`);
    return row;
  },
});

/**
 * The caller's stenogram of a video, generating (charged one apiStenogramsPerDay: per key with a key, per
 * user when signed in); 409 STENOGRAM_CONFLICT when they have one, TRANSCRIPT_REQUIRED (a subtitle fetch queued) without a transcript.
 */
export const generateStenogram = defineAction({
  what: 'generating a stenogram',
  access: { ...stenogramAccess, charges: ['apiStenogramsPerDay'] },
  async run({ deps, caller, charge }, input: { videoId: string; language: string | null }): Promise<StenogramRow> {
    const request = await requestStenogram(deps.sql, {
      videoId: input.videoId,
      ownerId: stenogramOwner(caller),
      language: input.language,
      charge: () => charge('apiStenogramsPerDay', 1, deps.clock?.()),
    });
    if (request.outcome === 'transcript_required') throw transcriptRequired(input.videoId, request.transcript, 'stenogram');
    return request.stenogram;
  },
});

/** The stenogram's Markdown, read from the store (the owner's alone). */
export const stenogramMarkdown = (deps: ApiDeps, row: StenogramRow) =>
  readStenogramMarkdown(deps.stenogramStore, deps.log, row.owner_id, row.video_id);

/** stenogram:complete as its owner receives it: the logged event names the stenogram, the Markdown is read from the store as it is sent. */
export const stenogramStreamParts = (deps: ApiDeps): GenerationStreamParts<StenogramRow> => ({
  kind: stenogramGeneration,
  async outcome(row) {
    return row.status === 'generated'
      ? stenogramEvents.complete({
          stenogram: { markdown: await stenogramMarkdown(deps, row), url: stenogramUrl(row.owner_id, row.video_id) },
          metadata: toMetadata(row),
        })
      : stenogramEvents.error({
          code: 'INTERNAL_ERROR',
          message: row.error ?? 'the generation failed',
          refunded: row.charged_window_start === null,
        });
  },
  presentFinal: (row) => async (event) => {
    if (event.type !== stenogramEvents.complete.type) return event.payload;
    const logged = event.payload as CompletionLogged;
    return { ...logged, stenogram: { ...logged.stenogram, markdown: await stenogramMarkdown(deps, row) } };
  },
});

/** The events of the caller's stenogram as Server-Sent Events; a finished one answers its final event once. */
export const followStenogram = defineAction({
  what: "following a stenogram's generation",
  access: stenogramAccess,
  async run(
    ctx,
    input: { videoId: string; owner?: string | undefined; res: ServerResponse; resumeFrom: string | undefined },
  ): Promise<typeof handled> {
    const row = await readStenogram.run(ctx, input);
    await answerGenerationStream(ctx.deps, input.res, stenogramStreamParts(ctx.deps), row, input.resumeFrom);
    return handled;
  },
});

import { z } from 'zod';
import { notFound } from '../../core/errors.ts';
import { videoParams, videoIdSchema } from '../../core/schemas.ts';
import { deleteStenogram } from '../../core/stenograms/deleteStenogram.ts';
import { listStenograms, STENOGRAMS_PER_PAGE, STENOGRAM_VIDEO_IDS_CAP, stenogramVideoIds } from '../../core/stenograms/listStenograms.ts';
import { stenogramMetadata, stenogramUrl, toMetadata } from '../../core/stenograms/metadata.ts';
import { stenogramEventVocabulary } from '../../core/stenograms/stenogramEvents.ts';
import { streamStart } from '../../core/events/events.ts';
import {
  generateStenogram,
  readStenogram,
  stenogramAccess,
  stenogramMarkdown,
  stenogramOwner,
  stenogramStreamParts,
} from '../actions/stenograms.ts';
import { wholeNumber } from '../http/input.ts';
import { prepareAnswer } from '../http/representation.ts';
import { defineRoute, handled, perform, privateCache } from '../http/route.ts';
import { followGeneration } from '../sse/followStream.ts';
import { generationStreamRoute } from './generationStream.ts';

const TAG = 'AI stenograms';
/** Every stenogram route: an L3+ key of a tier with the stenograms feature (api-spec §4.5). */
const access = { auth: 'key', ...stenogramAccess } as const;

/** The spec's `@:userId` segment: `@` and the owner's user id. */
const ownerParams = z.strictObject({
  owner: z
    .string()
    .regex(/^@[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, { message: 'expected @ followed by your user id' })
    .transform((value) => value.slice(1).toLowerCase()),
  videoId: videoIdSchema,
});

const languageHint = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[a-z]{2,3}$/, { message: 'expected an ISO 639-1 or 639-2 language code such as en or deu' });

const generateRoute = defineRoute({
  method: 'POST',
  path: '/api/stenograms/:videoId/generate',
  tag: TAG,
  summary: 'Generate your private stenogram of a video: a stream of progress events ending with stenogram:complete',
  description:
    'Optional body {language}: an ISO 639-1/639-2 hint (else detected). Errors come as the JSON envelope before any stream: 400, 404, 409 TRANSCRIPT_REQUIRED (a subtitle fetch is queued), 409 STENOGRAM_CONFLICT (you have one, or one is being generated), 429 RATE_LIMITED (apiStenogramsPerDay, per key, reset at midnight UTC; charged when accepted, given back if the generation fails). Then text/event-stream: stenogram:started, stenogram:progress…, stenogram:complete {stenogram, metadata} or stenogram:error. The generation runs as a job: a client that disconnects loses nothing; GET …/stream resumes with Last-Event-ID.',
  auth: 'key',
  ...generateStenogram.access,
  params: videoParams,
  body: z.strictObject({ language: languageHint.optional() }),
  optionalBody: true,
  events: stenogramEventVocabulary,
  errors: ['NOT_FOUND', 'TRANSCRIPT_REQUIRED', 'STENOGRAM_CONFLICT'],
  async handler(ctx) {
    const stenogram = await perform(generateStenogram, ctx, { videoId: ctx.params.videoId, language: ctx.body.language ?? null });
    await followGeneration(ctx.deps, ctx.res, stenogramStreamParts(ctx.deps), stenogram, streamStart);
    return handled;
  },
});

const streamRoute = generationStreamRoute({
  path: '/api/stenograms/:owner/:videoId/stream',
  tag: TAG,
  summary: "The events of your stenogram's generation again: resume with Last-Event-ID after a disconnect",
  description: 'A finished stenogram answers stenogram:complete (or stenogram:error) once.',
  access,
  params: ownerParams,
  events: stenogramEventVocabulary,
  errors: ['NOT_FOUND', 'SERVICE_UNAVAILABLE'],
  find: (ctx) => perform(readStenogram, ctx, ctx.params),
  parts: stenogramStreamParts,
});

const readRoute = defineRoute({
  method: 'GET',
  path: '/api/stenograms/:owner/:videoId',
  tag: TAG,
  summary: 'Your stenogram as raw Markdown (404 for anyone who is not its owner)',
  ...access,
  params: ownerParams,
  media: { 'text/markdown': z.string() },
  cache: privateCache,
  errors: ['NOT_FOUND', 'SERVICE_UNAVAILABLE'],
  async handler(ctx) {
    const { params, deps } = ctx;
    const row = await perform(readStenogram, ctx, params);
    if (row.status !== 'generated')
      throw notFound(
        `your stenogram of ${row.video_id} is ${row.status === 'generating' ? `still being generated: follow ${stenogramUrl(row.owner_id, row.video_id)}/stream` : `not there: the generation failed (${row.error})`}`,
      );
    // The stored hash validates before the store is read: a 304 reads no file.
    const answer = prepareAnswer(ctx, {
      contentType: 'text/markdown; charset=utf-8',
      cache: privateCache,
      etag: `"${row.content_sha256}"`,
    });
    if (answer) await answer.send(await stenogramMarkdown(deps, row));
    return handled;
  },
});

const metaRoute = defineRoute({
  method: 'GET',
  path: '/api/stenograms/:owner/:videoId/meta',
  tag: TAG,
  summary: "Your stenogram's metadata",
  ...access,
  cache: privateCache,
  params: ownerParams,
  response: stenogramMetadata,
  errors: ['NOT_FOUND'],
  async handler(ctx) {
    return toMetadata(await perform(readStenogram, ctx, ctx.params));
  },
});

const deleteRoute = defineRoute({
  method: 'DELETE',
  path: '/api/stenograms/:owner/:videoId',
  tag: TAG,
  summary: 'Delete your stenogram for good: its row, its events and its file (no soft delete)',
  ...access,
  params: ownerParams,
  response: z.object({ videoId: z.string(), deleted: z.literal(true) }),
  errors: ['NOT_FOUND'],
  async handler(ctx) {
    const { params, deps } = ctx;
    const row = await perform(readStenogram, ctx, params);
    if (!(await deleteStenogram(deps.sql, deps.stenogramStore, row.owner_id, row.video_id)))
      throw notFound(`no stenogram ${stenogramUrl(params.owner, params.videoId)}`);
    return { videoId: row.video_id, deleted: true as const };
  },
});

const listRoute = defineRoute({
  method: 'GET',
  path: '/api/user/stenograms',
  tag: TAG,
  summary: `Your stenograms, newest first, ${STENOGRAMS_PER_PAGE} a page`,
  ...access,
  cache: privateCache,
  query: z.strictObject({ page: wholeNumber('page', 1, 100_000, 1) }),
  response: z.object({
    items: z.array(stenogramMetadata),
    page: z.number().int(),
    pageSize: z.number().int(),
    total: z.number().int(),
    totalPages: z.number().int(),
  }),
  async handler({ query, caller, deps }) {
    const { rows, total } = await listStenograms(deps.sql, stenogramOwner(caller), query.page);
    return {
      items: rows.map(toMetadata),
      page: query.page,
      pageSize: STENOGRAMS_PER_PAGE,
      total,
      totalPages: Math.ceil(total / STENOGRAMS_PER_PAGE),
    };
  },
});

const videoIdsRoute = defineRoute({
  method: 'GET',
  path: '/api/user/stenograms/video-ids',
  tag: TAG,
  summary: `The video ids of all your stenograms (at most ${STENOGRAM_VIDEO_IDS_CAP}), to show view or generate per video in one call`,
  ...access,
  cache: privateCache,
  response: z.object({
    videoIds: z.array(z.string()).describe('newest first, any state'),
    generating: z.array(z.string()).describe('of those, still being generated'),
    failed: z.array(z.string()).describe('of those, failed (generate again)'),
    capped: z.boolean().describe(`true: you have more than ${STENOGRAM_VIDEO_IDS_CAP}; the newest are listed`),
    cap: z.number().int(),
  }),
  async handler({ caller, deps }) {
    return { ...(await stenogramVideoIds(deps.sql, stenogramOwner(caller))), cap: STENOGRAM_VIDEO_IDS_CAP };
  },
});

/** In matching order: the fixed /api/user/stenograms/video-ids before anything with a parameter. */
export const stenogramRoutes = [videoIdsRoute, listRoute, generateRoute, streamRoute, metaRoute, readRoute, deleteRoute];

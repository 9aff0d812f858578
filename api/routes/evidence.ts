import { z } from 'zod';
import { observationRecord } from '../../core/evidence/observations.ts';
import { metadataVersionsSchema, subtitleVersionsSchema } from '../../core/evidence/versions.ts';
import { videoIdSchema, videoParams } from '../../core/schemas.ts';
import { readRawAnswer, readVersions, sendBundle, videoEvidence, watchlistEvidence } from '../actions/evidence.ts';
import { binaryBody, defineRoute, perform, privateCache } from '../http/route.ts';

const BUNDLE =
  "A ZIP (format afterimage-evidence/1, see the reference): video.json, status-history.json (as GET /api/videos/{videoId}/status-history answers), metadata-versions.json, subtitles/ (every version as WebVTT), subtitle-versions.json (each metadata and subtitle version naming the kept answer behind it), summary.json when a public summary is ready, observations/<id>.json and <id>.body.gz (every kept answer of a source and its raw body), manifest.json (every file's size, SHA-256 and how it was obtained) and README.txt (its first line the manifest's SHA-256). The same state always exports the same bytes. Check it with `afterimage evidence verify` or at /evidence/verify.";

const videoEvidenceRoute = defineRoute({
  method: 'GET',
  path: '/api/videos/:videoId/evidence',
  tag: 'Video status',
  summary: "A video's evidence bundle: what each source answered, its history, metadata and subtitle versions, hashed",
  description: `${BUNDLE} Counts one subtitleDownloadsPerDay.`,
  auth: 'key',
  ...videoEvidence.access,
  params: videoParams,
  media: { 'application/zip': binaryBody },
  errors: ['NOT_FOUND', 'RATE_LIMITED'],
  async handler(ctx) {
    return sendBundle(ctx, ctx, await perform(videoEvidence, ctx, ctx.params.videoId));
  },
});

const watchlistEvidenceRoute = defineRoute({
  method: 'GET',
  path: '/api/watchlists/:id/evidence',
  tag: 'Watchlists',
  summary: "A watchlist's evidence bundle: each of its videos' files under videos/<videoId>/",
  description: `${BUNDLE} It holds the videos the watchlist watches by id and the watched channels' videos whose status changed or that have kept answers. Counts one subtitleDownloadsPerDay per video in it. Another caller's watchlist is 404, as if it did not exist.`,
  auth: 'key',
  ...watchlistEvidence.access,
  params: z.strictObject({ id: z.string().min(1).max(100).describe("the watchlist's id") }),
  media: { 'application/zip': binaryBody },
  errors: ['NOT_FOUND', 'RATE_LIMITED'],
  async handler(ctx) {
    return sendBundle(ctx, ctx, await perform(watchlistEvidence, ctx, ctx.params.id));
  },
});

const rawAnswerRoute = defineRoute({
  method: 'GET',
  path: '/api/videos/:videoId/evidence/:observationId',
  tag: 'Video status',
  summary: 'The raw answer a source gave for one kept observation, as plain text',
  description: `Always text/plain (an HTML page is shown as its source, never rendered); the source's own content type is in X-Original-Content-Type. The observation's record (${Object.keys(observationRecord.shape).join(', ')}) is in the evidence bundle. Counts only as a request.`,
  cache: privateCache,
  auth: 'key',
  ...readRawAnswer.access,
  params: z.strictObject({
    videoId: videoIdSchema,
    observationId: z.string().regex(/^\d{1,18}$/, { message: 'expected the number of a kept observation' }),
  }),
  media: { 'text/plain': z.string() },
  errors: ['NOT_FOUND'],
  async handler(ctx) {
    return perform(readRawAnswer, ctx, { exchange: ctx, videoId: ctx.params.videoId, observationId: ctx.params.observationId });
  },
});

const versionsRoute = defineRoute({
  method: 'GET',
  path: '/api/videos/:videoId/versions',
  tag: 'Video status',
  summary: "A video's metadata and subtitle versions, each naming the kept answer behind it",
  description:
    "What the evidence bundle's metadata-versions.json (metadata) and subtitle-versions.json (subtitles) hold, built by the same functions: the current metadata and every earlier version, every subtitle version, each with `observation`, the kept answer behind it (observations/<id>.json in the bundle; its raw answer is GET /api/videos/{videoId}/evidence/<id>), or null. Counts only as a request.",
  cache: privateCache,
  auth: 'key',
  ...readVersions.access,
  params: videoParams,
  response: z.object({ videoId: z.string(), metadata: metadataVersionsSchema, subtitles: subtitleVersionsSchema }),
  errors: ['NOT_FOUND'],
  async handler(ctx) {
    return perform(readVersions, ctx, ctx.params.videoId);
  },
});

/** Every evidence route, in matching order. */
export const evidenceRoutes = [videoEvidenceRoute, watchlistEvidenceRoute, rawAnswerRoute, versionsRoute];

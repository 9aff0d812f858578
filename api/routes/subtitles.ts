import type { Writable } from 'node:stream';
import { z } from 'zod';
import { notFound } from '../../core/errors.ts';
import { INT4_MAX, videoIdSchema, videoParams } from '../../core/schemas.ts';
import { planBulkDownload } from '../../core/subtitles/bulk.ts';
import { bulkJson } from '../../core/subtitles/bulkJson.ts';
import { bulkZip } from '../../core/subtitles/bulkZip.ts';
import { enqueueSubtitleFetch, enqueueVideoLookup } from '../../core/subtitles/enqueue.ts';
import { readTranscript, transcriptStates, type TranscriptInfo } from '../../core/subtitles/transcript.ts';
import { describeTrack, languageParam, latestTracks, trackIdParam, trackKinds, trackSources } from '../../core/subtitles/tracks.ts';
import { readVideoLookup, type VideoLookup } from '../../core/subtitles/videoLookups.ts';
import { findVideos } from '../../core/subtitles/videos.ts';
import { perform } from '../http/route.ts';
import { downloadSubtitles, SUBTITLE_TYPES } from '../actions/subtitles.ts';
import { wholeNumber } from '../http/input.ts';
import { codingFor, drained, streamSink, addVary, JSON_TYPE } from '../http/representation.ts';
import { binaryBody, defineRoute, handled, privateCache, reply } from '../http/route.ts';

/** At most this many video ids per bulk download. */
const BULK_MAX_VIDEOS = 100;

const kind = z.enum(trackKinds, { message: 'expected manual, auto or translated' });

const trackSchema = z.object({
  language: z.string().describe('a BCP 47 tag: en, en-GB, zh-Hans'),
  trackId: z.string().nullable().describe("YouTube's id of a named track (one of several in its language), else null"),
  kind: z.enum(trackKinds),
  source: z.enum(trackSources),
  format: z.string().describe('the format the track was fetched in'),
  version: z.number().int().describe('newest version of this track (versions count from 1)'),
  cueCount: z.number().int(),
  durationMs: z.number().int(),
  textBytes: z.number().int().describe('UTF-8 bytes of the plain text'),
  fetchedAt: z.string(),
  url: z.string().describe('GET it here'),
});

const transcriptSchema = z.object({
  state: z.enum(transcriptStates),
  language: z.string().nullable(),
  kind: z.enum(trackKinds).nullable(),
  version: z.number().int().nullable(),
  error: z.string().nullable(),
  requestedAt: z.string().nullable(),
  checkedAt: z.string().nullable(),
});

const describeTranscript = (transcript: TranscriptInfo): z.infer<typeof transcriptSchema> => ({
  state: transcript.state,
  language: transcript.language,
  kind: transcript.kind,
  version: transcript.version,
  error: transcript.error,
  requestedAt: transcript.requestedAt?.toISOString() ?? null,
  checkedAt: transcript.checkedAt?.toISOString() ?? null,
});

// ---------------------------------------------------------------------------------------------
// GET /api/subtitles/:videoId
// ---------------------------------------------------------------------------------------------

const getSubtitlesRoute = defineRoute({
  method: 'GET',
  path: '/api/subtitles/:videoId',
  tag: 'Subtitles',
  summary: "A video's subtitles as SRT (default), WebVTT or plain text, as a file download",
  description:
    "Without lang and kind the best track is chosen: manual, else auto, else translated; the video's language, else English, else the first. lang=en also takes en-GB and the like when there is no plain en. version= reads an older version of the chosen track. Counts one subtitleDownloadsPerDay (only when a track is sent: a 304 to If-None-Match counts nothing).",
  auth: 'key',
  ...downloadSubtitles.access,
  cache: privateCache,
  params: videoParams,
  query: z.strictObject({
    format: z.enum(['srt', 'vtt', 'txt'], { message: 'expected srt or vtt (or txt for plain text)' }).default('srt'),
    lang: languageParam.optional(),
    kind: kind.optional(),
    trackId: trackIdParam.optional().describe("only the named track with this id (a track's trackId)"),
    version: wholeNumber('version', 1, INT4_MAX).optional().describe('versions count from 1'),
  }),
  media: Object.fromEntries(Object.values(SUBTITLE_TYPES).map((type) => [type.split(';')[0]!, z.string()])),
  errors: ['NOT_FOUND'],
  async handler(ctx) {
    return perform(downloadSubtitles, ctx, { exchange: ctx, videoId: ctx.params.videoId, choice: ctx.query });
  },
});

// ---------------------------------------------------------------------------------------------
// POST /api/subtitles/:videoId/fetch and GET /api/subtitles/:videoId/status
// ---------------------------------------------------------------------------------------------

const statusUrl = (id: string) => `/api/subtitles/${id}/status`;

const fetchSubtitlesRoute = defineRoute({
  method: 'POST',
  path: '/api/subtitles/:videoId/fetch',
  tag: 'Subtitles',
  summary: "Fetch a video's subtitles: 200 with the tracks when stored, else 202 and one background job to poll",
  description:
    'No body. 200 {status: "available", videoId, tracks, transcript} when tracks are stored; otherwise a fetch job is queued (the local archive, Wayback captures and the platform\'s caption tracks, as configured) and the answer is 202 {status: "pending", videoId, pollUrl}. A video that is not stored is first looked up in the configured video sources (archive, Data API, Wayback) and stored with its channel when one knows it; such a lookup counts one subtitleDownloadsPerDay (429 when none is left), a call that joins a pending lookup counts nothing. Repeated calls join the same job. Counts no download otherwise.',
  auth: 'key',
  scope: 'L2',
  feature: 'subtitleDownload',
  params: videoParams,
  response: z.object({ status: z.literal('available'), videoId: z.string(), tracks: z.array(trackSchema), transcript: transcriptSchema }),
  alsoAnswers: {
    202: z.object({
      status: z.literal('pending'),
      videoId: z.string(),
      pollUrl: z.string().describe('GET it until status is no longer pending'),
    }),
  },
  location: { status: 202, description: 'pollUrl: GET it until status is no longer pending' },
  errors: ['RATE_LIMITED'],
  charges: ['subtitleDownloadsPerDay'],
  async handler({ params, deps, charge }) {
    const video = (await findVideos(deps.sql, [params.videoId])).get(params.videoId);
    if (!video) {
      await deps.sql.begin(async (tx) => {
        // Charged only for a lookup that starts, before its transaction commits: a refusal queues nothing.
        if (await enqueueVideoLookup(tx, params.videoId)) await charge('subtitleDownloadsPerDay');
      });
      return pendingReply(params.videoId);
    }
    const tracks = await latestTracks(deps.sql, [video.videoId]);
    if (tracks.length > 0) {
      return {
        status: 'available' as const,
        videoId: video.videoId,
        tracks: tracks.map(describeTrack),
        transcript: describeTranscript(await readTranscript(deps.sql, video.videoId)),
      };
    }
    await deps.sql.begin((tx) => enqueueSubtitleFetch(tx, [video.videoId]));
    return pendingReply(video.videoId);
  },
});

function pendingReply(videoId: string) {
  const pollUrl = statusUrl(videoId);
  return reply({ status: 'pending' as const, videoId, pollUrl }, { status: 202, headers: { Location: pollUrl } });
}

const subtitleStatusRoute = defineRoute({
  method: 'GET',
  path: '/api/subtitles/:videoId/status',
  tag: 'Subtitles',
  summary: "Whether a video's subtitles are available, being fetched, not found or failed; its tracks and transcript",
  description:
    'status: available (tracks are stored), pending (a fetch is queued or running), failed (the last fetch failed and nothing is stored; transcript.error says why), none (nothing stored; transcript.checkedAt tells whether a fetch looked). A video that is not stored but was asked for with POST …/fetch is pending while the sources are asked, then failed when none knew it (transcript.error names the sources asked); 404 when it was never asked for.',
  auth: 'key',
  scope: 'L1',
  feature: 'subtitleDownload',
  cache: privateCache,
  params: videoParams,
  response: z.object({
    videoId: z.string(),
    status: z.enum(['available', 'pending', 'failed', 'none']),
    tracks: z.array(trackSchema),
    transcript: transcriptSchema,
  }),
  errors: ['NOT_FOUND'],
  async handler({ params, deps }) {
    const video = (await findVideos(deps.sql, [params.videoId])).get(params.videoId);
    if (!video) return describeLookup(params.videoId, await readVideoLookup(deps.sql, params.videoId));
    const [tracks, transcript] = await Promise.all([latestTracks(deps.sql, [video.videoId]), readTranscript(deps.sql, video.videoId)]);
    const status: 'available' | 'pending' | 'failed' | 'none' =
      tracks.length > 0 ? 'available' : transcript.state === 'pending' ? 'pending' : transcript.state === 'failed' ? 'failed' : 'none';
    return { videoId: video.videoId, status, tracks: tracks.map(describeTrack), transcript: describeTranscript(transcript) };
  },
});

/** The status of a video that is not stored: its lookup's, told as a transcript that has no track (404 when never asked for). */
function describeLookup(videoId: string, lookup: VideoLookup | undefined) {
  if (!lookup) throw notFound(`no video ${videoId} is stored; POST /api/subtitles/${videoId}/fetch looks it up in the configured sources`);
  const transcript: TranscriptInfo = {
    state: lookup.state,
    language: null,
    kind: null,
    version: null,
    trackId: null,
    error: lookup.error,
    requestedAt: lookup.requestedAt,
    checkedAt: lookup.checkedAt,
    updatedAt: lookup.checkedAt ?? lookup.requestedAt,
  };
  return { videoId, status: lookup.state, tracks: [], transcript: describeTranscript(transcript) };
}

// ---------------------------------------------------------------------------------------------
// POST /api/subtitles/bulk-download
// ---------------------------------------------------------------------------------------------

const bulkFields = {
  videoIds: z
    .array(videoIdSchema)
    .min(1, { message: 'give at least one video id' })
    .max(BULK_MAX_VIDEOS, { message: `at most ${BULK_MAX_VIDEOS} video ids per request` }),
  query: z
    .string()
    .trim()
    .regex(/\S/, { message: 'an empty query marks nothing; leave it out' })
    .max(200, { message: 'at most 200 characters' })
    .optional(),
  lang: languageParam.optional(),
  kind: kind.optional(),
};

// Two shapes told apart by format, so the OpenAPI document refuses fileFormat without zip as the server does.
const bulkBody = z.discriminatedUnion(
  'format',
  [
    z.strictObject({
      ...bulkFields,
      format: z.literal('zip'),
      fileFormat: z
        .enum(['srt', 'vtt', 'txt'], { message: 'expected srt, vtt or txt' })
        .optional()
        .describe('the files of the zip (default srt)'),
    }),
    z.strictObject({
      ...bulkFields,
      format: z.enum(['json', 'srt', 'vtt', 'txt']).default('json'),
      fileFormat: z.never({ message: 'only a zip has files: fileFormat goes with format "zip"' }).optional(),
    }),
  ],
  { error: 'expected json, srt, vtt, txt or zip' },
);

const bulkDownloadRoute = defineRoute({
  method: 'POST',
  path: '/api/subtitles/bulk-download',
  tag: 'Subtitles',
  summary: 'Subtitles of up to 100 videos in one call: JSON per video (cues or rendered text) or a zip of files',
  description: `Body: videoIds (1-${BULK_MAX_VIDEOS}), query (optional; cues that contain it, case and accents ignored, are marked match: true), format json (cues, default) | srt | vtt | txt (JSON with each video's text in that format) | zip (files <videoId>.<lang>.<fileFormat> plus manifest.json), lang, kind. The text of the tracks sent may total at most SUBTITLE_BULK_MAX_BYTES (default 20 MiB); more is 400 INVALID_INPUT. Counts one subtitleDownloadsPerDay per video sent, all or nothing: 429 when the quota cannot cover them.`,
  auth: 'key',
  scope: 'L1',
  feature: 'subtitleDownload',
  body: bulkBody,
  response: z.object({
    format: z.string(),
    query: z.string().nullable(),
    videos: z.array(
      z.object({
        videoId: z.string(),
        title: z.string().nullable(),
        channelId: z.string(),
        channelTitle: z.string().nullable(),
        track: trackSchema,
        cues: z
          .array(
            z.object({
              startMs: z.number(),
              endMs: z.number(),
              start: z.string(),
              end: z.string(),
              text: z.string(),
              speakerChange: z.boolean().optional(),
              match: z.boolean().optional(),
            }),
          )
          .optional(),
        text: z.string().optional(),
        matchCount: z.number().int().optional(),
        matches: z
          .array(z.object({ startMs: z.number(), endMs: z.number(), start: z.string(), end: z.string(), text: z.string() }))
          .optional(),
      }),
    ),
    missing: z.array(
      z.object({ videoId: z.string(), reason: z.enum(['unknown_video', 'no_subtitles', 'no_matching_track']), message: z.string() }),
    ),
    totals: z.object({
      requested: z.number().int(),
      returned: z.number().int(),
      missing: z.number().int(),
      cues: z.number().int(),
      matches: z.number().int(),
      textBytes: z.number().int(),
    }),
  }),
  media: { 'application/zip': binaryBody },
  errors: ['RATE_LIMITED'],
  charges: ['subtitleDownloadsPerDay'],
  async handler({ req, body, deps, res, charge }) {
    const plan = await planBulkDownload(deps.sql, body, deps.config.SUBTITLE_BULK_MAX_BYTES);
    // Nothing planned counts only the request (0 units).
    await charge('subtitleDownloadsPerDay', plan.planned.length);
    if (body.format === 'zip') {
      res.writeHead(200, {
        'Content-Type': 'application/zip',
        'Content-Disposition': `attachment; filename="subtitles-${plan.planned.length}-videos.zip"`,
      });
      await pipe(res, bulkZip(deps.sql, plan, { fileFormat: body.fileFormat ?? 'srt', query: body.query }));
    } else {
      // Streamed, so its length is unknown: coded whatever its size when the client accepts a coding.
      const coding = codingFor(req, JSON_TYPE);
      addVary(res, ['Accept-Encoding']);
      res.writeHead(200, {
        'Content-Type': JSON_TYPE,
        ...(coding === 'identity' ? {} : { 'Content-Encoding': coding }),
      });
      await pipe(streamSink(res, coding), inDataEnvelope(bulkJson(deps.sql, plan, { format: body.format, query: body.query })));
    }
    return handled;
  },
});

/** Wraps a streamed JSON document as every answer is wrapped: {"data": …}. */
async function* inDataEnvelope(document: AsyncIterable<string>): AsyncGenerator<string> {
  yield '{"data":';
  yield* document;
  yield '}';
}

/** Writes the pieces as they come, each once the sink has taken the last; stops reading when the client is gone. */
async function pipe(sink: Writable, pieces: AsyncIterable<string | Uint8Array>): Promise<void> {
  for await (const piece of pieces) {
    if (sink.destroyed) return;
    sink.write(piece);
    await drained(sink);
  }
  sink.end();
}

/** Every subtitle route, in matching order. */
export const subtitleRoutes = [bulkDownloadRoute, fetchSubtitlesRoute, subtitleStatusRoute, getSubtitlesRoute];

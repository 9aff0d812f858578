import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { videoIdSchema, videoParams } from '../../core/schemas.ts';
import { planBulkDownload } from '../../core/subtitles/bulk.ts';
import { bulkJson } from '../../core/subtitles/bulkJson.ts';
import { bulkZip } from '../../core/subtitles/bulkZip.ts';
import type { OutputFormat } from '../../core/subtitles/cue.ts';
import { enqueueSubtitleFetch } from '../../core/subtitles/enqueue.ts';
import { findVideo, readSubtitles } from '../../core/subtitles/readSubtitles.ts';
import { render } from '../../core/subtitles/render.ts';
import { readTranscript, transcriptStates, type TranscriptInfo } from '../../core/subtitles/transcript.ts';
import { LANGUAGE, describeTrack, latestTracks, trackKinds, trackSources } from '../../core/subtitles/tracks.ts';
import { chargeQuota } from '../http/quota.ts';
import { defineRoute, handled, reply } from '../http/route.ts';

/** At most this many video ids per bulk download. */
const BULK_MAX_VIDEOS = 100;

const language = z.string().regex(LANGUAGE, { message: 'expected a language code such as en, en-GB or pt-BR' });
const kind = z.enum(trackKinds, { message: 'expected manual, auto or translated' });

const CONTENT_TYPES: Record<OutputFormat, string> = {
  srt: 'application/x-subrip; charset=utf-8',
  vtt: 'text/vtt; charset=utf-8',
  txt: 'text/plain; charset=utf-8',
};

const trackSchema = z.object({
  language: z.string(),
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
  summary: 'A video\'s subtitles as SRT (default), WebVTT or plain text, as a file download',
  description:
    'Without lang and kind the best track is chosen: manual, else auto, else translated; the video\'s language, else English, else the first. lang=en also takes en-GB and the like when there is no plain en. version= reads an older version of the chosen track. Counts one subtitleDownloadsPerDay (only when a track is sent).',
  auth: 'key',
  scope: 'L1',
  feature: 'subtitleDownload',
  params: videoParams,
  query: z.strictObject({
    format: z.enum(['srt', 'vtt', 'txt'], { message: 'expected srt or vtt (or txt for plain text)' }).default('srt'),
    lang: language.optional(),
    kind: kind.optional(),
    version: z.coerce.number({ message: 'expected a version number' }).int({ message: 'expected a whole version number' }).min(1, { message: 'versions count from 1' }).optional(),
  }),
  response: z.string().describe('the subtitle file: application/x-subrip, text/vtt or text/plain'),
  errors: ['NOT_FOUND'],
  async handler({ params, query, caller, deps, res }) {
    const { video, track, cues } = await readSubtitles(deps.sql, params.videoId, query, async () => void (await chargeQuota(deps.counterSql ?? deps.sql, caller, 'subtitleDownloadsPerDay', res)));
    const body = render(cues, query.format);
    res.writeHead(200, {
      'Content-Type': CONTENT_TYPES[query.format],
      'Content-Length': Buffer.byteLength(body),
      'Content-Disposition': `attachment; filename="${video.videoId}.${track.language}.${query.format}"`,
      ETag: `"${track.contentHash}"`,
      'X-Subtitle-Language': track.language,
      'X-Subtitle-Kind': track.kind,
      'X-Subtitle-Version': String(track.version),
      'X-Subtitle-Source': track.source,
    });
    res.end(body);
    return handled;
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
  summary: 'Fetch a video\'s subtitles: 200 with the tracks when stored, else 202 and one background job to poll',
  description:
    'No body. 200 {status: "available", videoId, tracks, transcript} when tracks are stored; otherwise a fetch job is queued (the local archive, Wayback captures and the platform\'s caption tracks, as configured) and the answer is 202 {status: "pending", videoId, pollUrl}. Repeated calls join the same job. Counts no download.',
  auth: 'key',
  scope: 'L2',
  feature: 'subtitleDownload',
  params: videoParams,
  response: z.object({
    status: z.enum(['available', 'pending']),
    videoId: z.string(),
    tracks: z.array(trackSchema).optional(),
    transcript: transcriptSchema.optional(),
    pollUrl: z.string().optional().describe('GET it until status is no longer pending'),
  }),
  errors: ['NOT_FOUND'],
  async handler({ params, deps }) {
    const video = await findVideo(deps.sql, params.videoId);
    const tracks = await latestTracks(deps.sql, [video.videoId]);
    if (tracks.length > 0) {
      return { status: 'available' as const, videoId: video.videoId, tracks: tracks.map(describeTrack), transcript: describeTranscript(await readTranscript(deps.sql, video.videoId)) };
    }
    await deps.sql.begin((tx) => enqueueSubtitleFetch(tx, [video.videoId]));
    const pollUrl = statusUrl(video.videoId);
    return reply({ status: 'pending' as const, videoId: video.videoId, pollUrl }, { status: 202, headers: { Location: pollUrl } });
  },
});

const subtitleStatusRoute = defineRoute({
  method: 'GET',
  path: '/api/subtitles/:videoId/status',
  tag: 'Subtitles',
  summary: 'Whether a video\'s subtitles are available, being fetched, not found or failed; its tracks and transcript',
  description:
    'status: available (tracks are stored), pending (a fetch is queued or running), failed (the last fetch failed and nothing is stored; transcript.error says why), none (nothing stored; transcript.checkedAt tells whether a fetch looked).',
  auth: 'key',
  scope: 'L1',
  feature: 'subtitleDownload',
  params: videoParams,
  response: z.object({
    videoId: z.string(),
    status: z.enum(['available', 'pending', 'failed', 'none']),
    tracks: z.array(trackSchema),
    transcript: transcriptSchema,
  }),
  errors: ['NOT_FOUND'],
  async handler({ params, deps }) {
    const video = await findVideo(deps.sql, params.videoId);
    const [tracks, transcript] = await Promise.all([latestTracks(deps.sql, [video.videoId]), readTranscript(deps.sql, video.videoId)]);
    const status: 'available' | 'pending' | 'failed' | 'none' = tracks.length > 0 ? 'available' : transcript.state === 'pending' ? 'pending' : transcript.state === 'failed' ? 'failed' : 'none';
    return { videoId: video.videoId, status, tracks: tracks.map(describeTrack), transcript: describeTranscript(transcript) };
  },
});

// ---------------------------------------------------------------------------------------------
// POST /api/subtitles/bulk-download
// ---------------------------------------------------------------------------------------------

const bulkBody = z
  .strictObject({
    videoIds: z
      .array(videoIdSchema)
      .min(1, { message: 'give at least one video id' })
      .max(BULK_MAX_VIDEOS, { message: `at most ${BULK_MAX_VIDEOS} video ids per request` }),
    query: z.string().trim().min(1, { message: 'an empty query marks nothing; leave it out' }).max(200, { message: 'at most 200 characters' }).optional(),
    format: z.enum(['json', 'srt', 'vtt', 'txt', 'zip'], { message: 'expected json, srt, vtt, txt or zip' }).default('json'),
    fileFormat: z.enum(['srt', 'vtt', 'txt'], { message: 'expected srt, vtt or txt' }).optional().describe('the files of a zip (default srt)'),
    lang: language.optional(),
    kind: kind.optional(),
  })
  .refine((body) => body.fileFormat === undefined || body.format === 'zip', { message: 'only a zip has files: fileFormat goes with format "zip"', path: ['fileFormat'] });

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
        cues: z.array(z.object({ startMs: z.number(), endMs: z.number(), start: z.string(), end: z.string(), text: z.string(), speakerChange: z.boolean().optional(), match: z.boolean().optional() })).optional(),
        text: z.string().optional(),
        matchCount: z.number().int().optional(),
        matches: z.array(z.object({ startMs: z.number(), endMs: z.number(), start: z.string(), end: z.string(), text: z.string() })).optional(),
      }),
    ),
    missing: z.array(z.object({ videoId: z.string(), reason: z.enum(['unknown_video', 'no_subtitles', 'no_matching_track']), message: z.string() })),
    totals: z.object({ requested: z.number().int(), returned: z.number().int(), missing: z.number().int(), cues: z.number().int(), matches: z.number().int(), textBytes: z.number().int() }),
  }),
  errors: ['RATE_LIMITED'],
  async handler({ body, caller, deps, res }) {
    const plan = await planBulkDownload(deps.sql, body, deps.config.SUBTITLE_BULK_MAX_BYTES);
    if (plan.planned.length > 0) await chargeQuota(deps.counterSql ?? deps.sql, caller, 'subtitleDownloadsPerDay', res, plan.planned.length);
    if (body.format === 'zip') {
      res.writeHead(200, {
        'Content-Type': 'application/zip',
        'Content-Disposition': `attachment; filename="subtitles-${plan.planned.length}-videos.zip"`,
        'Cache-Control': 'no-store',
      });
      await pipe(res, bulkZip(deps.sql, plan, { fileFormat: body.fileFormat ?? 'srt', query: body.query }));
    } else {
      res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' });
      await pipe(res, inDataEnvelope(bulkJson(deps.sql, plan, { format: body.format, query: body.query })));
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

/** Writes the pieces as they come, each once the client has taken the last; stops reading when the client is gone. */
async function pipe(res: ServerResponse, pieces: AsyncIterable<string | Uint8Array>): Promise<void> {
  for await (const piece of pieces) {
    if (res.destroyed) return;
    res.write(piece);
    await drained(res);
  }
  res.end();
}

/** Resolves when the response can take more (or is gone): the backpressure of a streamed answer. */
async function drained(res: ServerResponse): Promise<void> {
  if (!res.writableNeedDrain || res.destroyed) return;
  await Promise.race([once(res, 'drain'), once(res, 'close')]);
}

/** Every subtitle route, in matching order. */
export const subtitleRoutes = [bulkDownloadRoute, fetchSubtitlesRoute, subtitleStatusRoute, getSubtitlesRoute];

import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { Zip, ZipDeflate } from 'fflate';
import { z } from 'zod';
import { videoIdSchema, videoParams } from '../../core/schemas.ts';
import type { Queryable } from '../../core/db/database.ts';
import { invalidInput, notFound } from '../../core/errors.ts';
import type { Cue, OutputFormat } from '../../core/subtitles/cue.ts';
import { enqueueSubtitleFetch } from '../../core/subtitles/enqueue.ts';
import { matchCues } from '../../core/subtitles/match.ts';
import { render } from '../../core/subtitles/render.ts';
import { formatTimestamp } from '../../core/subtitles/timestamps.ts';
import { readTranscript, transcriptStates, type TranscriptInfo } from '../../core/subtitles/transcript.ts';
import {
  LANGUAGE,
  chooseTrack,
  describeTrack,
  latestTracks,
  readCues,
  trackKinds,
  trackSources,
  trackVersion,
  type TrackInfo,
  type TrackKind,
} from '../../core/subtitles/tracks.ts';
import { chargeQuota } from '../http/quota.ts';
import { defineRoute, handled, reply } from '../http/route.ts';

/** At most this many video ids per bulk download. */
export const BULK_MAX_VIDEOS = 100;
/** Videos whose cues are read from the database at once while a bulk download streams. */
const BULK_BATCH = 10;

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

interface VideoRow { videoId: string; title: string | null; channelId: string; channelTitle: string | null; language: string | null }

async function findVideos(sql: Queryable, ids: readonly string[]): Promise<Map<string, VideoRow>> {
  const rows = await sql<VideoRow[]>`
    select v.video_id as "videoId", v.title, v.channel_id as "channelId", nullif(c.title, '') as "channelTitle", v.language
    from videos v join channels c on c.channel_id = v.channel_id where v.video_id = any(${ids as string[]}::text[])`;
  return new Map(rows.map((row) => [row.videoId, row]));
}

async function findVideo(sql: Queryable, id: string): Promise<VideoRow> {
  const video = (await findVideos(sql, [id])).get(id);
  if (!video) throw notFound(`no video ${id} is stored; a channel search finds a channel's videos`);
  return video;
}

const listTracks = (tracks: readonly TrackInfo[]) => tracks.map((track) => `${track.language} (${track.kind})`).join(', ');

function filterText(choice: { lang?: string | undefined; kind?: TrackKind | undefined }): string {
  return [choice.lang ? `in ${choice.lang}` : '', choice.kind ? `of kind ${choice.kind}` : ''].filter(Boolean).join(' ');
}

/** Resolves when the response can take more (or is gone): the backpressure of a streamed answer. */
async function drained(res: ServerResponse): Promise<void> {
  if (!res.writableNeedDrain || res.destroyed) return;
  await Promise.race([once(res, 'drain'), once(res, 'close')]);
}

// ---------------------------------------------------------------------------------------------
// GET /api/subtitles/:videoId
// ---------------------------------------------------------------------------------------------

export const getSubtitlesRoute = defineRoute({
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
    const video = await findVideo(deps.sql, params.videoId);
    const tracks = await latestTracks(deps.sql, [video.videoId]);
    const chosen = chooseTrack(tracks, { videoLanguage: video.language, lang: query.lang, kind: query.kind });
    if (!chosen) {
      throw notFound(
        tracks.length === 0
          ? `video ${video.videoId} has no subtitles stored; POST /api/subtitles/${video.videoId}/fetch looks for them`
          : `video ${video.videoId} has no subtitles ${filterText(query)}; it has ${listTracks(tracks)}`,
      );
    }
    let track = chosen;
    if (query.version !== undefined && query.version !== chosen.version) {
      const older = await trackVersion(deps.sql, video.videoId, chosen.language, chosen.kind, query.version);
      if (!older) throw notFound(`the ${chosen.language} (${chosen.kind}) subtitles of ${video.videoId} have versions 1 to ${chosen.version}, not ${query.version}`);
      track = older;
    }
    await chargeQuota(deps.counterSql ?? deps.sql, caller, 'subtitleDownloadsPerDay', res);
    const cues = (await readCues(deps.sql, [track.id])).get(track.id) ?? [];
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

export const fetchSubtitlesRoute = defineRoute({
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

export const subtitleStatusRoute = defineRoute({
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

type BulkBody = z.output<typeof bulkBody>;
type MissingReason = 'unknown_video' | 'no_subtitles' | 'no_matching_track';
interface Missing { videoId: string; reason: MissingReason; message: string }
interface Planned { video: VideoRow; track: TrackInfo }

const timed = (ms: number) => formatTimestamp(ms, '.');

/** One cue as bulk JSON shows it. */
function cueJson(cue: Cue, match: boolean) {
  return {
    startMs: cue.startMs,
    endMs: cue.endMs,
    start: timed(cue.startMs),
    end: timed(cue.endMs),
    text: cue.text,
    ...(cue.speakerChange ? { speakerChange: true } : {}),
    ...(match ? { match: true } : {}),
  };
}

function plan(body: BulkBody, videos: Map<string, VideoRow>, tracks: TrackInfo[]): { planned: Planned[]; missing: Missing[] } {
  const byVideo = new Map<string, TrackInfo[]>();
  for (const track of tracks) byVideo.set(track.videoId, [...(byVideo.get(track.videoId) ?? []), track]);
  const planned: Planned[] = [];
  const missing: Missing[] = [];
  for (const id of new Set(body.videoIds)) {
    const video = videos.get(id);
    if (!video) {
      missing.push({ videoId: id, reason: 'unknown_video', message: `no video ${id} is stored` });
      continue;
    }
    const own = byVideo.get(id) ?? [];
    const track = chooseTrack(own, { videoLanguage: video.language, lang: body.lang, kind: body.kind });
    if (track) planned.push({ video, track });
    else if (own.length === 0) missing.push({ videoId: id, reason: 'no_subtitles', message: `no subtitles stored; POST /api/subtitles/${id}/fetch looks for them` });
    else missing.push({ videoId: id, reason: 'no_matching_track', message: `no subtitles ${filterText(body)}; it has ${listTracks(own)}` });
  }
  return { planned, missing };
}

/** The cues of the planned videos, BULK_BATCH videos' worth at a time, in request order. */
async function* cuesInBatches(sql: Queryable, planned: Planned[]): AsyncGenerator<{ entry: Planned; cues: Cue[] }> {
  for (let start = 0; start < planned.length; start += BULK_BATCH) {
    const batch = planned.slice(start, start + BULK_BATCH);
    const cues = await readCues(sql, batch.map((entry) => entry.track.id));
    for (const entry of batch) yield { entry, cues: cues.get(entry.track.id) ?? [] };
  }
}

export const bulkDownloadRoute = defineRoute({
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
    const ids = [...new Set(body.videoIds)];
    const [videos, tracks] = await Promise.all([findVideos(deps.sql, ids), latestTracks(deps.sql, ids)]);
    const { planned, missing } = plan(body, videos, tracks);
    const textBytes = planned.reduce((sum, entry) => sum + entry.track.textBytes, 0);
    const limit = deps.config.SUBTITLE_BULK_MAX_BYTES;
    if (textBytes > limit) {
      throw invalidInput(`videoIds: these subtitles hold ${textBytes} bytes of text, more than the ${limit} bytes one download may carry; ask for fewer videos`, { textBytes, maxBytes: limit });
    }
    if (planned.length > 0) await chargeQuota(deps.counterSql ?? deps.sql, caller, 'subtitleDownloadsPerDay', res, planned.length);
    if (body.format === 'zip') await sendZip(deps.sql, res, body, planned, missing, ids.length);
    else await sendJson(deps.sql, res, body, planned, missing, ids.length);
    return handled;
  },
});

interface VideoResult {
  matchCount: number;
  cueCount: number;
}

function matchesOf(cues: Cue[], query: string | undefined): Set<number> {
  return query ? new Set(matchCues(cues, query)) : new Set();
}

async function sendJson(sql: Queryable, res: ServerResponse, body: BulkBody, planned: Planned[], missing: Missing[], requested: number): Promise<void> {
  const format = body.format as 'json' | OutputFormat;
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' });
  res.write(`{"data":{"format":${JSON.stringify(format)},"query":${JSON.stringify(body.query ?? null)},"videos":[`);
  const totals = { requested, returned: planned.length, missing: missing.length, cues: 0, matches: 0, textBytes: 0 };
  let first = true;
  for await (const { entry, cues } of cuesInBatches(sql, planned)) {
    if (res.destroyed) return;
    const matched = matchesOf(cues, body.query);
    const base = {
      videoId: entry.video.videoId,
      title: entry.video.title,
      channelId: entry.video.channelId,
      channelTitle: entry.video.channelTitle,
      track: describeTrack(entry.track),
    };
    const item =
      format === 'json'
        ? { ...base, cues: cues.map((cue, index) => cueJson(cue, matched.has(index))), ...(body.query ? { matchCount: matched.size } : {}) }
        : {
            ...base,
            text: render(cues, format),
            ...(body.query ? { matchCount: matched.size, matches: [...matched].map((index) => cueJson(cues[index]!, false)) } : {}),
          };
    totals.cues += cues.length;
    totals.matches += matched.size;
    totals.textBytes += entry.track.textBytes;
    res.write(`${first ? '' : ','}${JSON.stringify(item)}`);
    first = false;
    await drained(res);
  }
  res.end(`],"missing":${JSON.stringify(missing)},"totals":${JSON.stringify(totals)}}}`);
}

async function sendZip(sql: Queryable, res: ServerResponse, body: BulkBody, planned: Planned[], missing: Missing[], requested: number): Promise<void> {
  const fileFormat = body.fileFormat ?? 'srt';
  res.writeHead(200, {
    'Content-Type': 'application/zip',
    'Content-Disposition': `attachment; filename="subtitles-${planned.length}-videos.zip"`,
    'Cache-Control': 'no-store',
  });
  const zip = new Zip((error, chunk, final) => {
    if (error) {
      res.destroy(error);
      return;
    }
    if (!res.destroyed) res.write(chunk);
    if (final) res.end();
  });
  const addFile = (name: string, text: string) => {
    const file = new ZipDeflate(name, { level: 6 });
    zip.add(file);
    file.push(Buffer.from(text, 'utf8'), true);
  };
  const manifest: Array<Record<string, unknown>> = [];
  const results: VideoResult[] = [];
  for await (const { entry, cues } of cuesInBatches(sql, planned)) {
    if (res.destroyed) {
      zip.terminate();
      return;
    }
    const matched = matchesOf(cues, body.query);
    const file = `${entry.video.videoId}.${entry.track.language}.${fileFormat}`;
    addFile(file, render(cues, fileFormat));
    results.push({ matchCount: matched.size, cueCount: cues.length });
    manifest.push({
      videoId: entry.video.videoId,
      title: entry.video.title,
      channelId: entry.video.channelId,
      channelTitle: entry.video.channelTitle,
      file,
      track: describeTrack(entry.track),
      ...(body.query ? { matchCount: matched.size, matches: [...matched].map((index) => cueJson(cues[index]!, false)) } : {}),
    });
    await drained(res);
  }
  const totals = {
    requested,
    returned: planned.length,
    missing: missing.length,
    cues: results.reduce((sum, result) => sum + result.cueCount, 0),
    matches: results.reduce((sum, result) => sum + result.matchCount, 0),
    textBytes: planned.reduce((sum, entry) => sum + entry.track.textBytes, 0),
  };
  addFile('manifest.json', `${JSON.stringify({ format: 'zip', fileFormat, query: body.query ?? null, videos: manifest, missing, totals }, null, 2)}\n`);
  zip.end();
  await drained(res);
}

/** Every subtitle route, in matching order. */
export const subtitleRoutes = [bulkDownloadRoute, fetchSubtitlesRoute, subtitleStatusRoute, getSubtitlesRoute];

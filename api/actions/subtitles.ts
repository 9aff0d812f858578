/**
 * Subtitles as callers use them: a video's as a file download (GET /api/subtitles/:videoId and the video
 * page's download links, each counting one subtitleDownloadsPerDay when a track is sent), fetched on
 * demand and its status (POST …/fetch, GET …/status), and many videos' at once (POST …/bulk-download).
 */
import type { Writable } from 'node:stream';
import { notFound } from '../../core/errors.ts';
import { planBulkDownload, type BulkRequest } from '../../core/subtitles/bulk.ts';
import { bulkJson, type BulkJsonOptions } from '../../core/subtitles/bulkJson.ts';
import { bulkZip } from '../../core/subtitles/bulkZip.ts';
import type { OutputFormat } from '../../core/subtitles/cue.ts';
import { enqueueSubtitleFetch, enqueueVideoLookup } from '../../core/subtitles/enqueue.ts';
import { findSubtitleTrack, type SubtitleChoice } from '../../core/subtitles/findSubtitleTrack.ts';
import { render } from '../../core/subtitles/render.ts';
import { readTranscript, type TranscriptInfo } from '../../core/subtitles/transcript.ts';
import { describeTrack, latestTracks, readCues } from '../../core/subtitles/tracks.ts';
import { readVideoLookup, type VideoLookup } from '../../core/subtitles/videoLookups.ts';
import { findVideos } from '../../core/subtitles/videos.ts';
import { addVary, codingFor, drained, JSON_TYPE, prepareAnswer, streamSink } from '../http/representation.ts';
import { handled, privateCache, type Exchange } from '../http/route.ts';
import { defineAction } from '../http/route.ts';

export const SUBTITLE_TYPES: Record<OutputFormat, string> = {
  srt: 'application/x-subrip; charset=utf-8',
  vtt: 'text/vtt; charset=utf-8',
  txt: 'text/plain; charset=utf-8',
};

/**
 * The stored hash of the track's cues, per format, validates before the download is charged, so a 304
 * costs nothing.
 */
export const downloadSubtitles = defineAction({
  what: 'subtitle downloads',
  access: { scope: 'L1', feature: 'subtitleDownload', charges: ['subtitleDownloadsPerDay'] },
  async run(
    { deps, charge },
    { exchange, videoId, choice }: { exchange: Exchange; videoId: string; choice: SubtitleChoice & { format: OutputFormat } },
  ): Promise<typeof handled> {
    const { video, track } = await findSubtitleTrack(deps.sql, videoId, choice);
    const answer = prepareAnswer(exchange, {
      contentType: SUBTITLE_TYPES[choice.format],
      cache: privateCache,
      etag: `"${track.contentHash}.${choice.format}"`,
    });
    if (!answer) return handled;
    await charge('subtitleDownloadsPerDay');
    const cues = (await readCues(deps.sql, [track.id])).get(track.id) ?? [];
    await answer.send(render(cues, choice.format), {
      'Content-Disposition': `attachment; filename="${video.videoId}.${track.language}.${choice.format}"`,
      'X-Subtitle-Language': track.language,
      'X-Subtitle-Kind': track.kind,
      'X-Subtitle-Version': String(track.version),
      'X-Subtitle-Source': track.source,
    });
    return handled;
  },
});

/** A transcript's state as the API tells it (its dates as ISO 8601). */
const describeTranscript = (transcript: TranscriptInfo) => ({
  state: transcript.state,
  language: transcript.language,
  kind: transcript.kind,
  version: transcript.version,
  error: transcript.error,
  requestedAt: transcript.requestedAt?.toISOString() ?? null,
  checkedAt: transcript.checkedAt?.toISOString() ?? null,
});

const statusUrl = (id: string) => `/api/subtitles/${id}/status`;
const pending = (videoId: string) => ({ status: 'pending' as const, videoId, pollUrl: statusUrl(videoId) });

/**
 * A video's stored tracks, else one background job to fetch them (or, for a video not stored, to look it
 * up in the configured sources: charged one subtitleDownloadsPerDay when this call starts the lookup).
 */
export const fetchSubtitles = defineAction({
  what: 'fetching subtitles',
  access: { scope: 'L2', feature: 'subtitleDownload', charges: ['subtitleDownloadsPerDay'] },
  async run({ deps, charge }, videoId: string) {
    const video = (await findVideos(deps.sql, [videoId])).get(videoId);
    if (!video) {
      await deps.sql.begin(async (tx) => {
        // Charged only for a lookup that starts, before its transaction commits: a refusal queues nothing.
        if (await enqueueVideoLookup(tx, videoId)) await charge('subtitleDownloadsPerDay');
      });
      return pending(videoId);
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
    return pending(video.videoId);
  },
});

/** Whether a video's subtitles are available, being fetched, not found or failed, with its tracks and transcript. */
export const subtitleStatus = defineAction({
  what: 'subtitle status',
  access: { scope: 'L1', feature: 'subtitleDownload' },
  async run({ deps }, videoId: string) {
    const video = (await findVideos(deps.sql, [videoId])).get(videoId);
    if (!video) return describeLookup(videoId, await readVideoLookup(deps.sql, videoId));
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

/** A bulk download as its body asks: JSON (cues, or each video's text in a format) or a zip of files. */
export type BulkDownload = BulkRequest &
  Pick<BulkJsonOptions, 'query'> &
  ({ format: 'zip'; fileFormat?: OutputFormat | undefined } | { format: BulkJsonOptions['format'] });

/**
 * Up to 100 videos' subtitles streamed as one answer, all or nothing against the quota: one
 * subtitleDownloadsPerDay per video sent (nothing planned counts only the request).
 */
export const bulkDownloadSubtitles = defineAction({
  what: 'subtitle downloads',
  access: { scope: 'L1', feature: 'subtitleDownload', charges: ['subtitleDownloadsPerDay'] },
  async run({ deps, charge }, { exchange: { req, res }, request }: { exchange: Exchange; request: BulkDownload }): Promise<typeof handled> {
    const plan = await planBulkDownload(deps.sql, request, deps.config.SUBTITLE_BULK_MAX_BYTES);
    await charge('subtitleDownloadsPerDay', plan.planned.length);
    if (request.format === 'zip') {
      res.writeHead(200, {
        'Content-Type': 'application/zip',
        'Content-Disposition': `attachment; filename="subtitles-${plan.planned.length}-videos.zip"`,
      });
      await pipe(res, bulkZip(deps.sql, plan, { fileFormat: request.fileFormat ?? 'srt', query: request.query }));
    } else {
      // Streamed, so its length is unknown: coded whatever its size when the client accepts a coding.
      const coding = codingFor(req, JSON_TYPE);
      addVary(res, ['Accept-Encoding']);
      res.writeHead(200, {
        'Content-Type': JSON_TYPE,
        ...(coding === 'identity' ? {} : { 'Content-Encoding': coding }),
      });
      await pipe(streamSink(res, coding), inDataEnvelope(bulkJson(deps.sql, plan, { format: request.format, query: request.query })));
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

import { z } from 'zod';
import { INT4_MAX, videoIdSchema } from '../../../core/schemas.ts';
import { statusHistorySchema } from '../../../core/status/statusHistory.ts';
import { readSubtitles } from '../../../core/subtitles/readSubtitles.ts';
import { timestampedText } from '../../../core/subtitles/timestampedText.ts';
import { languageParam, trackIdParam, trackKinds, trackSources } from '../../../core/subtitles/tracks.ts';
import { videoObject } from '../../../core/videos/videoObject.ts';
import { perform } from '../../http/route.ts';
import { readStatusHistory, readVideo } from '../../actions/videos.ts';
import { defineTool } from '../tool.ts';

export const getVideoTool = defineTool({
  name: 'get_video',
  title: 'Get a video',
  description:
    "A stored video's metadata: title, description, channel, duration, views, upload date, status (live, deleted, re-uploaded, checking) with its reason, tags, captions, whether subtitles and a summary exist, archive links.",
  input: z.object({ videoId: videoIdSchema.describe('the 11-character video id') }),
  output: videoObject,
  access: readVideo.access,
  readOnly: true,
  async run(args, ctx) {
    return { data: await perform(readVideo, ctx, args.videoId) };
  },
});

/** Cues per page of get_subtitles: about an hour of speech, one page for most videos. */
const CUES_PER_PAGE = 1000;

export const getSubtitlesTool = defineTool({
  name: 'get_subtitles',
  title: 'Get subtitles',
  description: `A video's subtitles as timestamped text, one cue per line ("[m:ss] text"; ">>" marks a new speaker), ${CUES_PER_PAGE} cues a page by default (page through long videos with page). Without lang/kind the best track is chosen (manual, then auto, then translated; the video's language, else English). Each call counts one subtitleDownloadsPerDay.`,
  input: z.object({
    videoId: videoIdSchema,
    lang: languageParam.optional().describe('a track language (BCP 47): en, en-GB, pt-BR…'),
    kind: z.enum(trackKinds).optional(),
    trackId: trackIdParam.optional().describe("a named track's id (one of several in its language)"),
    version: z.number().int().min(1).max(INT4_MAX).optional().describe('an older version of the chosen track'),
    page: z.number().int().min(1).max(INT4_MAX).default(1),
    pageSize: z.number().int().min(50).max(5000).default(CUES_PER_PAGE).describe('cues per page'),
  }),
  output: z.object({
    videoId: z.string(),
    title: z.string().nullable(),
    track: z.object({
      language: z.string(),
      trackId: z.string().nullable(),
      kind: z.enum(trackKinds),
      source: z.enum(trackSources),
      version: z.number().int(),
    }),
    page: z.number().int(),
    totalPages: z.number().int(),
    cues: z.number().int().describe('cues on this page'),
    fromMs: z.number().int().nullable(),
    toMs: z.number().int().nullable(),
    text: z.string().describe('one "[m:ss] text" line per cue'),
  }),
  access: { scope: 'L1', feature: 'subtitleDownload', charges: ['subtitleDownloadsPerDay'] },
  readOnly: true,
  async run(args, ctx) {
    const { video, track, cues } = await readSubtitles(
      ctx.deps.sql,
      args.videoId,
      args,
      async () => void (await ctx.charge('subtitleDownloadsPerDay')),
    );
    const page = timestampedText(cues, args.page, args.pageSize);
    const data = {
      videoId: video.videoId,
      title: video.title,
      track: { language: track.language, trackId: track.trackId, kind: track.kind, source: track.source, version: track.version },
      ...page,
    };
    return {
      data,
      text: `${video.title ?? video.videoId} — ${track.language} (${track.kind}) subtitles, page ${page.page} of ${page.totalPages}\n${page.text}`,
    };
  },
});

export const statusHistoryTool = defineTool({
  name: 'get_video_status_history',
  title: 'Video status history',
  description:
    "A video's current status (live, deleted with a reason such as copyright or private, re-uploaded as another id) and every change of it, oldest first, with what each probe saw.",
  input: z.object({ videoId: videoIdSchema }),
  output: statusHistorySchema,
  access: readStatusHistory.access,
  readOnly: true,
  async run(args, ctx) {
    const data = await perform(readStatusHistory, ctx, args.videoId);
    const lines = data.history.map(
      (entry) =>
        `- ${entry.observedAt} ${entry.previousStatus ?? '∅'} → ${entry.status}${entry.reason ? ` (${entry.reason}${entry.claimant ? `, ${entry.claimant}` : ''})` : ''}${entry.linkedVideoId ? ` as ${entry.linkedVideoId}` : ''} [${entry.source ?? '?'}]`,
    );
    return {
      data,
      text: `${data.videoId} is ${data.current.status}${data.current.reason ? ` (${data.current.reason})` : ''} since ${data.current.since}\n${lines.join('\n')}`,
    };
  },
});

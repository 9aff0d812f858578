/**
 * A video's subtitles as a file download: GET /api/subtitles/:videoId and the video page's download links
 * perform it, each counting one subtitleDownloadsPerDay when a track is sent.
 */
import type { OutputFormat } from '../../core/subtitles/cue.ts';
import { findSubtitleTrack, type SubtitleChoice } from '../../core/subtitles/findSubtitleTrack.ts';
import { render } from '../../core/subtitles/render.ts';
import { readCues } from '../../core/subtitles/tracks.ts';
import { prepareAnswer } from '../http/representation.ts';
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

/** What the archive holds of one video: its newest watch capture with metadata, else the newest removal notice. */
import { videoIdOfUrl } from '../../youtube/videoUrl.ts';
import { withLastAnswer, type KeptAnswer } from '../keptAnswer.ts';
import type { CdxRow } from './cdx.ts';
import type { WaybackCaptures } from './captures.ts';
import { probeTimeline } from './timeline.ts';
import { classifyWatchPage, type RemovalCategory, type VideoMeta } from './watchPage.ts';

/** `answer`: the capture as the Wayback answered it (kept as evidence of what the record says). */
export type VideoLookup =
  | { kind: 'metadata'; meta: VideoMeta; row: CdxRow; answer?: KeptAnswer }
  | { kind: 'removed'; reason: string; category: RemovalCategory; row: CdxRow; answer?: KeptAnswer }
  | { kind: 'none' };

/**
 * The captures of the video's watch page (up to `capturesPerVideo` read), then of its shorts/,
 * embed/ and youtu.be/ forms (one each), newest first, skipping removal notices to older captures.
 */
export async function lookupVideo(
  captures: WaybackCaptures,
  videoId: string,
  capturesPerVideo: number,
  signal: AbortSignal | undefined,
): Promise<VideoLookup> {
  const forms: Array<{ url: string; replay: boolean; probes: number }> = [
    { url: `youtube.com/watch?v=${videoId}`, replay: false, probes: capturesPerVideo },
    { url: `youtube.com/shorts/${videoId}`, replay: false, probes: 1 },
    { url: `youtube.com/embed/${videoId}`, replay: false, probes: 1 },
    // youtu.be captures are redirects: the replay follows them to the archived watch page.
    { url: `youtu.be/${videoId}`, replay: true, probes: 1 },
  ];
  let notice: VideoLookup | undefined;
  const answers = new Map<CdxRow, KeptAnswer>();
  const publicOrigin = new URL(captures.publicBase).origin;
  const answerOf = (row: CdxRow) => {
    const answer = answers.get(row);
    return answer ? { answer } : {};
  };
  for (const form of forms) {
    const rows = (await captures.timeline(form.url, signal, { anyStatus: form.replay })).filter(
      (row) => videoIdOfUrl(row.original) === videoId,
    );
    if (rows.length === 0) continue;
    const result = await probeTimeline<VideoMeta>(rows, form.probes, async (row) => {
      const { result: body, answer } = await withLastAnswer(publicOrigin, () => captures.readCapture(row, signal, form.replay));
      if (body === undefined) return { kind: 'skip' };
      if (answer) answers.set(row, answer);
      const page = classifyWatchPage(body, videoId);
      if (page.kind === 'metadata') return { kind: 'good', value: page.meta };
      if (page.kind === 'removed') return { kind: 'notice', reason: page.reason, category: page.category };
      return { kind: 'skip' };
    });
    if (result.good) return { kind: 'metadata', meta: result.good.value, row: result.good.row, ...answerOf(result.good.row) };
    if (result.notice && (!notice || (notice.kind === 'removed' && result.notice.row.timestamp > notice.row.timestamp))) {
      notice = {
        kind: 'removed',
        reason: result.notice.reason,
        category: result.notice.category ?? 'unavailable',
        row: result.notice.row,
        ...answerOf(result.notice.row),
      };
    }
  }
  return notice ?? { kind: 'none' };
}

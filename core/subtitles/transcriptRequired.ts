import { AppError } from '../errors.ts';
import type { TranscriptInfo } from './transcript.ts';

/**
 * 409 TRANSCRIPT_REQUIRED for a summary or a stenogram asked of a video without a (completed)
 * transcript: a subtitle fetch is queued or running, and the message says where to poll.
 */
export function transcriptRequired(videoId: string, transcript: TranscriptInfo, what: 'summary' | 'stenogram'): AppError {
  const pollUrl = `/api/subtitles/${videoId}/status`;
  const message =
    what === 'stenogram'
      ? `video ${videoId} has no completed transcript; ${transcript.state === 'pending' ? 'its subtitles are being fetched' : 'a subtitle fetch is queued'}: poll ${pollUrl} and generate again when it says available`
      : transcript.state === 'pending'
        ? `video ${videoId} has no transcript yet; its subtitles are being fetched: poll ${pollUrl} and generate again when it says available`
        : `video ${videoId} has no transcript${transcript.error ? ` (the last fetch failed: ${transcript.error})` : ''}; a subtitle fetch is queued: poll ${pollUrl} and generate again when it says available`;
  return new AppError('TRANSCRIPT_REQUIRED', message, { details: { transcript: transcript.state, pollUrl } });
}

/**
 * What the summary and stenogram jobs share: the transcript they are built from, running a
 * generator with its progress events, and the failures that end a generation for good.
 */
import type { Queryable } from '../db/database.ts';
import type { Cue } from '../subtitles/cue.ts';
import { readCues } from '../subtitles/tracks.ts';
import { readTranscript } from '../subtitles/transcript.ts';
import { describeGeneratorFailure } from './describeFailure.ts';

/** A generator's failure (the model, the transcript): final for this request, told to the client. */
export class GenerationFailed extends Error {
  constructor(
    readonly code: 'TRANSCRIPT_REQUIRED' | 'INTERNAL_ERROR',
    message: string,
  ) {
    super(message);
  }
}

export interface TranscriptTrack {
  id: string;
  language: string;
  kind: string;
  version: number;
}

/** The video's transcript track and its cues; GenerationFailed when it has none (any more). */
export async function readTranscriptCues(sql: Queryable, videoId: string): Promise<{ track: TranscriptTrack; cues: Cue[] }> {
  const transcript = await readTranscript(sql, videoId);
  if (transcript.state !== 'completed' || !transcript.trackId) {
    throw new GenerationFailed(
      'TRANSCRIPT_REQUIRED',
      `video ${videoId} has no transcript any more; POST /api/subtitles/${videoId}/fetch, then generate again`,
    );
  }
  const track = { id: transcript.trackId, language: transcript.language!, kind: transcript.kind!, version: transcript.version! };
  return { track, cues: (await readCues(sql, [track.id])).get(track.id) ?? [] };
}

/** The language part of a track's code (en-GB → en), as generators take their hint. */
export const languageOfTrack = (track: TranscriptTrack) => track.language.split('-')[0]!.toLowerCase();

/**
 * Runs a generator: its failures become GenerationFailed (named after the model, without the LLM
 * endpoint's details); an abort is passed on for the job to be retried. Waits for the progress
 * events reported meanwhile to be written.
 */
export async function runGeneration<T>(
  model: string,
  run: () => Promise<T>,
  progress: { flushed(): Promise<void> },
  signal?: AbortSignal,
): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new GenerationFailed('INTERNAL_ERROR', `${model}: ${describeGeneratorFailure(error)}`);
  } finally {
    await progress.flushed();
  }
}

/** Whether a job's failure ends the generation now (a generator's failure, or the last attempt), as a GenerationFailed. */
export function finalFailure(
  error: unknown,
  options: { finalAttempt: boolean; signal?: AbortSignal },
  what: string,
): GenerationFailed | undefined {
  if (options.signal?.aborted) return undefined;
  if (error instanceof GenerationFailed) return error;
  return options.finalAttempt ? new GenerationFailed('INTERNAL_ERROR', `${what}: ${(error as Error).message}`) : undefined;
}

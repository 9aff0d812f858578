import type { Sql, Queryable } from '../db/database.ts';
import { appendEvents } from '../events/events.ts';
import { summaryEvents, summaryStream } from './summaryEvents.ts';
import { LlmError } from '../llm/openaiClient.ts';
import type { Logger } from '../log.ts';
import { readTranscript } from '../subtitles/transcript.ts';
import { readCues } from '../subtitles/tracks.ts';
import { readSummary } from './findSummary.ts';
import type { GeneratedSummary, SummaryGenerator, SummaryProgress } from './summary.ts';
import { toSummaryObject } from './summaryObject.ts';

export interface GenerateSummaryDeps { sql: Sql; log: Logger; generator: SummaryGenerator }

/** A generator's failure (the model, the transcript): final for this request, told to the client. */
class GenerationFailed extends Error {
  constructor(readonly code: 'TRANSCRIPT_REQUIRED' | 'INTERNAL_ERROR', message: string) {
    super(message);
  }
}

/**
 * The generate_summary job: reads the transcript, runs the generator (progress events as it goes)
 * and stores the summary with its summary:complete event in one transaction. The generator's
 * failures mark the summary failed with summary:error; anything else is thrown for a retry, and
 * on the last attempt it fails the summary too.
 */
export async function generateSummary(deps: GenerateSummaryDeps, summaryId: string, options: { finalAttempt: boolean; signal?: AbortSignal }): Promise<void> {
  const summary = await readSummary(deps.sql, summaryId);
  // Deleted, or finished by an earlier attempt: nothing to do.
  if (!summary || summary.status !== 'generating') return;
  try {
    const generated = await runGenerator(deps, summary.video_id, summary.video_title, summaryId, options.signal);
    await deps.sql.begin(async (tx) => {
      const stored = await storeSummary(tx, summaryId, generated.summary, generated.track);
      if (!stored) return;
      await appendEvents(tx, summaryStream(summaryId), [summaryEvents.complete({ summary: toSummaryObject((await readSummary(tx, summaryId))!) })]);
    });
  } catch (error) {
    if (options.signal?.aborted) throw error;
    if (!(error instanceof GenerationFailed) && !options.finalAttempt) throw error;
    const failure = error instanceof GenerationFailed ? error : new GenerationFailed('INTERNAL_ERROR', `the summary could not be stored: ${(error as Error).message}`);
    deps.log.warn('summary generation failed', { summaryId, videoId: summary.video_id, err: error });
    await deps.sql.begin(async (tx) => {
      const [failed] = await tx`update summaries set status = 'failed', error = ${failure.message}, updated_at = now() where id = ${summaryId} and status = 'generating' returning id`;
      if (failed) await appendEvents(tx, summaryStream(summaryId), [summaryEvents.error({ code: failure.code, message: failure.message })]);
    });
  }
}

interface TranscriptTrack { id: string; language: string; kind: string; version: number }

async function runGenerator(deps: GenerateSummaryDeps, videoId: string, title: string | null, summaryId: string, signal?: AbortSignal) {
  const transcript = await readTranscript(deps.sql, videoId);
  if (transcript.state !== 'completed' || !transcript.trackId) {
    throw new GenerationFailed('TRANSCRIPT_REQUIRED', `video ${videoId} has no transcript any more; POST /api/subtitles/${videoId}/fetch, then generate again`);
  }
  const track: TranscriptTrack = { id: transcript.trackId, language: transcript.language!, kind: transcript.kind!, version: transcript.version! };
  const cues = (await readCues(deps.sql, [track.id])).get(track.id) ?? [];
  const report = progressReporter(deps, summaryId);
  report({ stage: 'reading', percent: 5 });
  let summary: GeneratedSummary;
  try {
    summary = await deps.generator.summarise(
      { videoId, title, language: track.language.split('-')[0]!.toLowerCase(), cues: cues.map((cue) => ({ start: cue.startMs / 1000, end: cue.endMs / 1000, text: cue.text })) },
      { ...(signal ? { signal } : {}), onProgress: report },
    );
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new GenerationFailed('INTERNAL_ERROR', `${deps.generator.model}: ${publicReason(error)}`);
  } finally {
    await report.flushed();
  }
  return { summary, track };
}

/** Progress events in the order reported, one at a time, never holding the generator up; a failed write only loses that event. */
function progressReporter(deps: GenerateSummaryDeps, summaryId: string) {
  let chain = Promise.resolve();
  const report = (progress: SummaryProgress) => {
    chain = chain
      .then(() => appendEvents(deps.sql, summaryStream(summaryId), [summaryEvents.progress(progress)]))
      .catch((error: unknown) => deps.log.warn('summary progress event lost', { summaryId, err: error }));
  };
  return Object.assign(report, { flushed: () => chain });
}

async function storeSummary(tx: Queryable, summaryId: string, summary: GeneratedSummary, track: TranscriptTrack): Promise<boolean> {
  const tags = [...new Set(summary.tags.map((tag) => tag.trim().toLowerCase()).filter(Boolean))];
  const updated = await tx`
    update summaries set status = 'ready', error = null, title = ${summary.title}, tldr = ${summary.tldr},
      key_points = ${JSON.stringify(summary.keyPoints)}::text::jsonb, detailed_summary = ${summary.detailedSummary},
      tags = ${tags}::text[], language = ${summary.language}, llm_model = ${summary.llmModel},
      prompt_tokens = ${summary.tokensUsed?.prompt ?? null}, completion_tokens = ${summary.tokensUsed?.completion ?? null},
      transcript_track_id = ${track.id}, transcript_language = ${track.language}, transcript_kind = ${track.kind},
      transcript_version = ${track.version}, generated_at = now(), updated_at = now()
    where id = ${summaryId} and status = 'generating'`;
  return updated.count > 0;
}

/** What a client is told of a generator's failure: never the LLM endpoint's address (the operator's log has it). */
function publicReason(error: unknown): string {
  if (!(error instanceof LlmError)) return (error as Error).message;
  const status = error.details.status ? ` (HTTP ${error.details.status})` : '';
  if (error.kind === 'unavailable') return `the language model did not answer${status}, even after retries; generate again later`;
  if (error.kind === 'rejected') return `the language model refused the request${status}; the operator should check LLM_MODEL and LLM_API_KEY`;
  return 'the language model answered twice with JSON that does not fit the summary schema';
}

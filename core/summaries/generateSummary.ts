import type { Sql, Queryable } from '../db/database.ts';
import { appendEvents } from '../events/events.ts';
import { summaryEvents, summaryStream } from './summaryEvents.ts';
import { finalFailure, languageOfTrack, readTranscriptCues, runGeneration, type TranscriptTrack } from '../llm/generation.ts';
import { progressAppender } from '../events/progressAppender.ts';
import type { Logger } from '../log.ts';
import { readSummary } from './findSummary.ts';
import type { GeneratedSummary, SummaryGenerator, SummaryProgress } from './summary.ts';
import { toSummaryObject } from './summaryObject.ts';

export interface GenerateSummaryDeps { sql: Sql; log: Logger; generator: SummaryGenerator }

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
    const failure = finalFailure(error, options, 'the summary could not be stored');
    if (!failure) throw error;
    deps.log.warn('summary generation failed', { summaryId, videoId: summary.video_id, err: error });
    await deps.sql.begin(async (tx) => {
      const [failed] = await tx`update summaries set status = 'failed', error = ${failure.message}, updated_at = now() where id = ${summaryId} and status = 'generating' returning id`;
      if (failed) await appendEvents(tx, summaryStream(summaryId), [summaryEvents.error({ code: failure.code, message: failure.message })]);
    });
  }
}

async function runGenerator(deps: GenerateSummaryDeps, videoId: string, title: string | null, summaryId: string, signal?: AbortSignal) {
  const { track, cues } = await readTranscriptCues(deps.sql, videoId);
  const report = progressAppender(deps.sql, deps.log, summaryStream(summaryId), (progress: SummaryProgress) => summaryEvents.progress(progress));
  report({ stage: 'reading', percent: 5 });
  const input = { videoId, title, language: languageOfTrack(track), cues: cues.map((cue) => ({ start: cue.startMs / 1000, end: cue.endMs / 1000, text: cue.text })) };
  const summary = await runGeneration(deps.generator.model, () => deps.generator.summarise(input, { ...(signal ? { signal } : {}), onProgress: report.within(5, 95) }), report, signal);
  return { summary, track };
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


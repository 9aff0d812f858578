import type { Queryable } from '../db/database.ts';
import type { GenerationWork } from '../generations/runGenerationJob.ts';
import { languageOfTrack, type TranscriptTrack } from '../llm/generation.ts';
import { readSummary } from './findSummary.ts';
import type { GeneratedSummary, SummaryGenerator } from './summary.ts';
import { summaryEvents } from './summaryEvents.ts';
import { summaryGeneration } from './summaryGeneration.ts';
import { toSummaryObject, type SummaryRow } from './summaryObject.ts';

/** The generate_summary job's own part (runGenerationJob does the rest): the generator's summary, stored in the row. */
export function summaryWork(generator: SummaryGenerator): GenerationWork<SummaryRow, GeneratedSummary, void> {
  return {
    kind: summaryGeneration,
    model: generator.model,
    generatorUpTo: 95,
    generate: (row, { track, cues }, options) => generator.summarise({ videoId: row.video_id, title: row.video_title, language: languageOfTrack(track), cues }, options),
    keep: async () => {},
    store: storeSummary,
    completion: async (tx, id) => summaryEvents.complete({ summary: toSummaryObject((await readSummary(tx, id))!) }),
  };
}

async function storeSummary(tx: Queryable, summaryId: string, summary: GeneratedSummary, track: TranscriptTrack): Promise<boolean> {
  const tags = [...new Set(summary.tags.map((tag) => tag.trim().toLowerCase()).filter(Boolean))];
  const updated = await tx`
    update summaries set status = 'generated', error = null, title = ${summary.title}, tldr = ${summary.tldr},
      key_points = ${JSON.stringify(summary.keyPoints)}::text::jsonb, detailed_summary = ${summary.detailedSummary},
      tags = ${tags}::text[], language = ${summary.language}, llm_model = ${summary.llmModel},
      prompt_tokens = ${summary.tokensUsed?.prompt ?? null}, completion_tokens = ${summary.tokensUsed?.completion ?? null},
      transcript_track_id = ${track.id}, transcript_language = ${track.language}, transcript_kind = ${track.kind},
      transcript_version = ${track.version}, generated_at = now(), updated_at = now()
    where id = ${summaryId} and status = 'generating'`;
  return updated.count > 0;
}

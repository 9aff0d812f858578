/** A summary as a kind of generation (core/generations): which row a request means, its stream, and the job's own part. */
import type { Queryable, Sql } from '../db/database.ts';
import type { GenerationKind } from '../generations/generationKind.ts';
import { type GenerationRequestInput, type GenerationWork, requestGeneration } from '../generations/lifecycle.ts';
import { languageOfTrack, type TranscriptTrack } from '../llm/generation.ts';
import { enqueue } from '../jobs/enqueue.ts';
import { readSummary } from './findSummary.ts';
import type { GeneratedSummary, SummaryGenerator } from './summary.ts';
import { summaryEvents } from './summaryEvents.ts';
import { toSummaryObject, type SummaryRow } from './summaryObject.ts';
import type { TranscriptInfo } from '../subtitles/transcript.ts';

export interface SummaryRequestInput extends GenerationRequestInput {
  ownerId: string;
  private: boolean;
}

export const summaryGeneration: GenerationKind<SummaryRow, SummaryRequestInput> = {
  name: 'summary',
  table: 'summaries',
  unit: 'summaryGenerationsPerDay',
  events: { progress: summaryEvents.progress, error: summaryEvents.error, final: [summaryEvents.complete.type, summaryEvents.error.type] },
  read: readSummary,
  // One public summary per video, one private per owner and video (the two unique indexes of migration 015).
  async lockExisting(tx: Queryable, input: SummaryRequestInput) {
    const [row] = await tx<{ id: string; status: SummaryRow['status'] }[]>`
      select id::text as id, status from summaries
      where video_id = ${input.videoId} and private = ${input.private} and (not private or owner_id = ${input.ownerId}::uuid)
      for update`;
    return row;
  },
  async insert(tx: Queryable, input: SummaryRequestInput) {
    const [row] = await tx<{ id: string }[]>`
      insert into summaries (video_id, channel_id, owner_id, private)
      select video_id, channel_id, ${input.ownerId}::uuid, ${input.private} from videos where video_id = ${input.videoId}
      on conflict do nothing
      returning id::text as id`;
    return row?.id;
  },
  // A failed public summary is asked for by whoever asks now.
  async restart(tx: Queryable, id: string, input: SummaryRequestInput) {
    await tx`update summaries set owner_id = ${input.ownerId}::uuid where id = ${id}`;
  },
  enqueueJob: (tx, id, options) => enqueue(tx, 'generate_summary', { summaryId: id }, options),
  firstEvent: () => summaryEvents.progress({ stage: 'queued', percent: 0 }),
};

/** The generate_summary job's own part (runGenerationJob does the rest): the generator's summary, stored in the row. */
export function summaryWork(generator: SummaryGenerator): GenerationWork<SummaryRow, GeneratedSummary, void> {
  return {
    kind: summaryGeneration,
    model: generator.model,
    generatorUpTo: 95,
    generate: (row, { track, cues }, options) =>
      generator.summarise({ videoId: row.video_id, title: row.video_title, language: languageOfTrack(track), cues }, options),
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

export type SummaryRequest =
  /** It exists and is generated: nothing was queued or charged. */
  | { outcome: 'generated'; summary: SummaryRow }
  /** A job is writing it: `queued` when this request started that job (and was charged). */
  | { outcome: 'generating'; summary: SummaryRow; queued: boolean }
  /** No transcript to build on: a subtitle fetch is queued (or already running). */
  | { outcome: 'transcript_required'; transcript: TranscriptInfo };

/**
 * POST /api/summary/generate (and MCP generate_summary): a generated summary is answered, a running
 * generation joined (both uncharged); else the lifecycle charges, stores and queues one (requestGeneration).
 */
export async function requestSummary(sql: Sql, input: SummaryRequestInput): Promise<SummaryRequest> {
  const request = await requestGeneration(sql, summaryGeneration, input);
  if (request.outcome === 'transcript_required') return request;
  if (request.row.status === 'generated') return { outcome: 'generated', summary: request.row };
  return { outcome: 'generating', summary: request.row, queued: request.outcome === 'queued' };
}

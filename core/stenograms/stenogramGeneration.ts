/** A stenogram as a kind of generation (core/generations): one per owner and video, its stream opened by stenogram:started, and the job's own part. */
import type { Queryable, Sql } from '../db/database.ts';
import type { GenerationKind } from '../generations/generationKind.ts';
import { type GenerationRequestInput, type GenerationWork, requestGeneration } from '../generations/lifecycle.ts';
import { GenerationFailed, languageOfTrack, type TranscriptTrack } from '../llm/generation.ts';
import { enqueue } from '../jobs/enqueue.ts';
import { readStenogram, stenogramUrl, toMetadata, type StenogramRow } from './metadata.ts';
import { StoreRootRefused } from './fileStore.ts';
import type { GeneratedStenogram, StenogramGenerator } from './stenogram.ts';
import { loggedCompletion, stenogramEvents } from './stenogramEvents.ts';
import type { StenogramStore } from './store.ts';
import { AppError } from '../errors.ts';
import type { TranscriptInfo } from '../subtitles/transcript.ts';

export interface StenogramRequestInput extends GenerationRequestInput {
  ownerId: string;
  /** The caller's ISO 639-1/639-2 hint. */
  language: string | null;
}

export const stenogramGeneration: GenerationKind<StenogramRow, StenogramRequestInput> = {
  name: 'stenogram',
  table: 'stenograms',
  unit: 'apiStenogramsPerDay',
  events: {
    progress: stenogramEvents.progress,
    error: stenogramEvents.error,
    final: [stenogramEvents.complete.type, stenogramEvents.error.type],
  },
  read: readStenogram,
  async lockExisting(tx: Queryable, input: StenogramRequestInput) {
    const [row] = await tx<{ id: string; status: StenogramRow['status'] }[]>`
      select id::text as id, status from stenograms where owner_id = ${input.ownerId}::uuid and video_id = ${input.videoId} for update`;
    return row;
  },
  // unique (owner_id, video_id) of migration 016.
  async insert(tx: Queryable, input: StenogramRequestInput) {
    const [row] = await tx<{ id: string }[]>`
      insert into stenograms (owner_id, video_id, requested_language) values (${input.ownerId}::uuid, ${input.videoId}, ${input.language})
      on conflict do nothing
      returning id::text as id`;
    return row?.id;
  },
  async restart(tx: Queryable, id: string, input: StenogramRequestInput) {
    await tx`update stenograms set requested_language = ${input.language} where id = ${id}`;
  },
  enqueueJob: (tx, id, options) => enqueue(tx, 'generate_stenogram', { stenogramId: id }, options),
  firstEvent: (row) => stenogramEvents.started({ videoId: row.video_id, metadata: toMetadata(row) }),
};

type Written = { bytes: number; sha256: string };

/**
 * The generate_stenogram job's own part (runGenerationJob does the rest): the Markdown goes to the
 * store before the row is marked generated, and stenogram:complete names it without its text. A file
 * written for a row that never became generated is removed by reconcile_stenograms.
 */
export function stenogramWork(
  generator: StenogramGenerator,
  store: StenogramStore,
): GenerationWork<StenogramRow, GeneratedStenogram, Written> {
  return {
    kind: stenogramGeneration,
    model: generator.model,
    generatorUpTo: 90,
    generate: (row, { track, cues }, options) =>
      generator.generate(
        {
          videoId: row.video_id,
          title: row.title,
          channelTitle: row.channel_title,
          language: row.requested_language ?? languageOfTrack(track),
          cues,
        },
        options,
      ),
    async keep(row, generated, report) {
      report({ stage: 'storing', percent: 95 });
      await report.flushed();
      try {
        return await store.put(row.owner_id, row.video_id, generated.markdown);
      } catch (error) {
        // A store that is not mounted stays so until an operator acts: fail now rather than retry for nothing.
        if (error instanceof StoreRootRefused)
          throw new GenerationFailed('INTERNAL_ERROR', `the stenogram could not be stored: ${error.message}`);
        throw error;
      }
    },
    store: markGenerated,
    async completion(tx, id) {
      const stored = (await readStenogram(tx, id))!;
      return loggedCompletion({ stenogram: { url: stenogramUrl(stored.owner_id, stored.video_id) }, metadata: toMetadata(stored) });
    },
  };
}

async function markGenerated(
  tx: Queryable,
  id: string,
  generated: GeneratedStenogram,
  track: TranscriptTrack,
  written: Written,
): Promise<boolean> {
  const updated = await tx`
    update stenograms g set status = 'generated', error = null, language = ${generated.language}, llm_model = ${generated.llmModel},
      prompt_tokens = ${generated.tokensUsed?.prompt ?? 0}, completion_tokens = ${generated.tokensUsed?.completion ?? 0},
      speakers = ${generated.speakers}, paragraphs = ${generated.paragraphs}, words = ${generated.words},
      chunks = ${generated.chunks}, fallback_chunks = ${generated.fallbackChunks}, bytes = ${written.bytes}, content_sha256 = ${written.sha256},
      title = v.title, channel_title = c.title,
      transcript_track_id = ${track.id}, transcript_language = ${track.language}, transcript_kind = ${track.kind},
      transcript_version = ${track.version}, generated_at = now(), updated_at = now()
    from videos v join channels c on c.channel_id = v.channel_id
    where g.id = ${id} and g.status = 'generating' and v.video_id = g.video_id`;
  return updated.count > 0;
}

export type StenogramRequest =
  | { outcome: 'accepted'; stenogram: StenogramRow }
  | { outcome: 'transcript_required'; transcript: TranscriptInfo };

/**
 * POST /api/stenograms/:videoId/generate (and MCP generate_stenogram): a second stenogram of the same
 * video is refused (409 STENOGRAM_CONFLICT); else the lifecycle charges, stores and queues one
 * (requestGeneration; a failed one starts over).
 */
export async function requestStenogram(sql: Sql, input: StenogramRequestInput): Promise<StenogramRequest> {
  const request = await requestGeneration(sql, stenogramGeneration, input);
  if (request.outcome === 'existing') throw conflict(request.row);
  return request.outcome === 'queued' ? { outcome: 'accepted', stenogram: request.row } : request;
}

function conflict(existing: StenogramRow): AppError {
  const url = stenogramUrl(existing.owner_id, existing.video_id);
  return new AppError(
    'STENOGRAM_CONFLICT',
    existing.status === 'generating'
      ? `a stenogram of ${existing.video_id} is being generated for you: follow GET ${url}/stream (it resumes with Last-Event-ID)`
      : `you already have a stenogram of ${existing.video_id}: GET ${url}; DELETE it first to generate it again`,
    { details: { status: existing.status, url } },
  );
}

import type { Queryable } from '../db/database.ts';
import type { GenerationWork } from '../generations/runGenerationJob.ts';
import { languageOfTrack, type TranscriptTrack } from '../llm/generation.ts';
import { readStenogram } from './findStenogram.ts';
import { stenogramUrl, toMetadata, type StenogramRow } from './metadata.ts';
import type { GeneratedStenogram, StenogramGenerator } from './stenogram.ts';
import { loggedCompletion } from './stenogramEvents.ts';
import { stenogramGeneration } from './stenogramGeneration.ts';
import type { StenogramStore } from './store.ts';

type Written = { bytes: number; sha256: string };

/**
 * The generate_stenogram job's own part (runGenerationJob does the rest): the Markdown goes to the
 * store before the row is marked generated, and stenogram:complete names it without its text. A file
 * written for a row that never became generated is removed by reconcile_stenograms.
 */
export function stenogramWork(generator: StenogramGenerator, store: StenogramStore): GenerationWork<StenogramRow, GeneratedStenogram, Written> {
  return {
    kind: stenogramGeneration,
    model: generator.model,
    generatorUpTo: 90,
    generate: (row, { track, cues }, options) =>
      generator.generate({ videoId: row.video_id, title: row.title || null, channelTitle: row.channel_title || null, language: row.requested_language ?? languageOfTrack(track), cues }, options),
    async keep(row, generated, report) {
      report({ stage: 'storing', percent: 95 });
      await report.flushed();
      return store.put(row.owner_id, row.video_id, generated.markdown);
    },
    store: markGenerated,
    async completion(tx, id) {
      const stored = (await readStenogram(tx, id))!;
      return loggedCompletion({ stenogram: { url: stenogramUrl(stored.owner_id, stored.video_id) }, metadata: toMetadata(stored) });
    },
  };
}

async function markGenerated(tx: Queryable, id: string, generated: GeneratedStenogram, track: TranscriptTrack, written: Written): Promise<boolean> {
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

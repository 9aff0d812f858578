import type { Sql, Queryable } from '../db/database.ts';
import { appendEvents } from '../events/events.ts';
import { progressAppender } from '../events/progressAppender.ts';
import { finalFailure, languageOfTrack, readTranscriptCues, runGeneration, type TranscriptTrack } from '../llm/generation.ts';
import type { Logger } from '../log.ts';
import { refundQuota } from '../usage/consumeQuota.ts';
import { readStenogram } from './findStenogram.ts';
import { stenogramUrl, toMetadata, type StenogramRow } from './metadata.ts';
import type { GeneratedStenogram, StenogramGenerator, StenogramProgress } from './stenogram.ts';
import { loggedCompletion, stenogramEvents, stenogramStream } from './stenogramEvents.ts';
import type { StenogramStore } from './store.ts';

export interface GenerateStenogramDeps { sql: Sql; log: Logger; generator: StenogramGenerator; store: StenogramStore }

/**
 * The generate_stenogram job: reads the transcript, runs the generator (progress events as it
 * goes), writes the Markdown to the store, then marks the row generated with stenogram:complete (naming it, not its text) in
 * one transaction. A failure before that marks it failed with stenogram:error and gives the key's
 * apiStenogramsPerDay unit back; a file written for a row that never became generated is removed
 * by reconcile_stenograms.
 */
export async function generateStenogram(deps: GenerateStenogramDeps, stenogramId: string, options: { finalAttempt: boolean; signal?: AbortSignal }): Promise<void> {
  const row = await readStenogram(deps.sql, stenogramId);
  if (!row || row.status !== 'generating') return;
  const stream = stenogramStream(stenogramId);
  try {
    const { track, cues } = await readTranscriptCues(deps.sql, row.video_id);
    const report = progressAppender(deps.sql, deps.log, stream, (progress: StenogramProgress | { stage: 'storing'; percent: number }) => stenogramEvents.progress(progress));
    report({ stage: 'reading', percent: 5 });
    const input = {
      videoId: row.video_id,
      title: row.title || null,
      channelTitle: row.channel_title || null,
      language: row.requested_language ?? languageOfTrack(track),
      cues: cues.map((cue) => ({ start: cue.startMs / 1000, end: cue.endMs / 1000, text: cue.text, ...(cue.speakerChange ? { speakerChange: true } : {}) })),
    };
    const generated = await runGeneration(deps.generator.model, () => deps.generator.generate(input, { ...(options.signal ? { signal: options.signal } : {}), onProgress: report.within(5, 90) }), report, options.signal);
    report({ stage: 'storing', percent: 95 });
    await report.flushed();
    const written = await deps.store.put(row.owner_id, row.video_id, generated.markdown);
    await deps.sql.begin(async (tx) => {
      if (!(await markGenerated(tx, stenogramId, generated, track, written))) return;
      const stored = (await readStenogram(tx, stenogramId))!;
      await appendEvents(tx, stream, [loggedCompletion({ stenogram: { url: stenogramUrl(stored.owner_id, stored.video_id) }, metadata: toMetadata(stored) })]);
    });
  } catch (error) {
    const failure = finalFailure(error, options, 'the stenogram could not be stored');
    if (!failure) throw error;
    deps.log.warn('stenogram generation failed', { stenogramId, videoId: row.video_id, err: error });
    await deps.sql.begin(async (tx) => {
      const [failed] = await tx`update stenograms set status = 'failed', error = ${failure.message}, updated_at = now() where id = ${stenogramId} and status = 'generating' returning id`;
      if (!failed) return;
      const refunded = await refund(tx, row);
      await appendEvents(tx, stream, [stenogramEvents.error({ code: failure.code, message: failure.message, refunded })]);
    });
  }
}

/** Nothing was delivered: the unit goes back to the key, in the day it was charged in. */
async function refund(tx: Queryable, row: StenogramRow): Promise<boolean> {
  if (!row.api_key_id || !row.charged_window_start) return false;
  await refundQuota(tx, row.api_key_id, 'apiStenogramsPerDay', row.charged_window_start);
  await tx`update stenograms set charged_window_start = null where id = ${row.id}`;
  return true;
}

async function markGenerated(tx: Queryable, id: string, generated: GeneratedStenogram, track: TranscriptTrack, written: { bytes: number; sha256: string }): Promise<boolean> {
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

/** The lifecycle every generated thing shares: the request (row, charge, job, first event in one transaction), then the job (transcript, generator, progress, result; or failure, refund, error event). */
import type { Sql, Queryable } from '../db/database.ts';
import { notFound } from '../errors.ts';
import { appendEvents, newStage, progressState } from '../events/events.ts';
import { enqueueSubtitleFetch } from '../subtitles/enqueue.ts';
import { readTranscript, type TranscriptInfo } from '../subtitles/transcript.ts';
import type { Charge, GenerationKind, GenerationRow, GenerationProgress } from './generationKind.ts';
import type { TypedEvent } from '../events/defineEvent.ts';
import { finalFailure, readTranscriptCues, runGeneration, type TranscriptTrack } from '../llm/generation.ts';
import type { Logger } from '../log.ts';
import type { TranscriptCue } from '../subtitles/transcriptCue.ts';
import { refundQuotas } from '../usage/consumeQuota.ts';

/** A generation that fails for a reason of the database, the store or the worker is tried again; the generator's own failures are final. */
const GENERATE_ATTEMPTS = 3;

export interface GenerationRequestInput {
  videoId: string;
  /**
   * Charges the caller one unit of the kind's limit, with the request, in one statement; answers where it
   * went (undefined: not counted). Throwing (429) undoes the request. Counted at once on the counters' own
   * pool, not in this transaction (api/http/guard.ts): a rollback after it does not give it back.
   */
  charge(): Promise<Charge | undefined>;
}

export type GenerationRequest<Row> =
  /** A new generation (or a failed one started over): charged, its job queued, its stream opened. */
  | { outcome: 'queued'; row: Row }
  /** One is generating or generated already: nothing was charged or queued; the kind decides what that means. */
  | { outcome: 'existing'; row: Row }
  /** No transcript to build on: a subtitle fetch is queued (or already running). */
  | { outcome: 'transcript_required'; transcript: TranscriptInfo };

/**
 * A request for a generation, in one transaction. Concurrency: the kind's unique index decides, with
 * `insert … on conflict do nothing` (a second request waits for the first to commit, then finds its
 * row and locks it); no advisory lock, whose key would be a second, unchecked name for the same row.
 * A failed row starts over (its stream too: the failed attempt's final event would end the new one).
 */
export async function requestGeneration<Row extends GenerationRow, Input extends GenerationRequestInput>(
  sql: Sql,
  kind: GenerationKind<Row, Input>,
  input: Input,
): Promise<GenerationRequest<Row>> {
  return sql.begin(async (tx) => {
    const [video] = await tx`select 1 from videos where video_id = ${input.videoId}`;
    if (!video) throw notFound(`no video ${input.videoId} is stored; a channel search finds a channel's videos`);
    const existing = await kind.lockExisting(tx, input);
    if (existing && existing.status !== 'failed') return { outcome: 'existing', row: (await kind.read(tx, existing.id))! };

    const transcript = await readTranscript(tx, input.videoId);
    if (transcript.state !== 'completed') {
      if (transcript.state !== 'pending') await enqueueSubtitleFetch(tx, [input.videoId]);
      return { outcome: 'transcript_required', transcript: await readTranscript(tx, input.videoId) };
    }

    const id = existing ? await restart(tx, kind, existing.id, input) : await kind.insert(tx, input);
    if (!id) {
      // A concurrent request stored it first: answer that one (uncharged).
      const stored = (await kind.lockExisting(tx, input))!;
      return { outcome: 'existing', row: (await kind.read(tx, stored.id))! };
    }
    const charge = await input.charge();
    await tx`update ${tx(kind.table)} set charged_subject = ${charge?.subject ?? null}::uuid, charged_window_start = ${charge?.windowStart ?? null} where id = ${id}`;
    const stream = generationStream(kind, id);
    await kind.enqueueJob(tx, id, { jobKey: stream, maxAttempts: GENERATE_ATTEMPTS });
    const row = (await kind.read(tx, id))!;
    await appendEvents(tx, stream, [kind.firstEvent(row)]);
    return { outcome: 'queued', row };
  });
}

async function restart<Input>(tx: Queryable, kind: GenerationKind<GenerationRow, Input>, id: string, input: Input): Promise<string> {
  await tx`delete from events where stream = ${generationStream(kind, id)}`;
  await tx`
    update ${tx(kind.table)} set status = 'generating', error = null, progress = null, requested_at = now(), updated_at = now()
    where id = ${id}`;
  await kind.restart(tx, id, input);
  return id;
}

/** The event stream of one generation of a kind (`summary:<id>`): named here, where the request opens it. */
export const generationStream = (kind: { name: string }, id: string) => `${kind.name}:${id}`;

/** Whether an event type ends a kind's stream. */
export const isFinalOf = (kind: { events: { final: readonly string[] } }) => (type: string) => kind.events.final.includes(type);

type ReportProgress = (progress: GenerationProgress) => void;

/** The job's side of a kind: what it generates and how it is kept. Built with the kind's dependencies (generator, store). */
export interface GenerationWork<Row extends GenerationRow, Generated, Kept> {
  kind: GenerationKind<Row, never>;
  /** The generator's name, in its failures' messages. */
  model: string;
  /** Where the generator's own 0–100 ends on the job's progress (it starts at 5, after reading the transcript). */
  generatorUpTo: number;
  generate(
    row: Row,
    transcript: { track: TranscriptTrack; cues: TranscriptCue[] },
    options: { signal?: AbortSignal; onProgress: ReportProgress },
  ): Promise<Generated>;
  /** What happens between the generator and the row (e.g. writing the result to a store), outside any transaction. */
  keep(row: Row, generated: Generated, report: ReportProgress & { flushed(): Promise<void> }): Promise<Kept>;
  /** Marks the row generated with what was made, only while it is generating; false when it no longer was. */
  store(tx: Queryable, id: string, generated: Generated, track: TranscriptTrack, kept: Kept): Promise<boolean>;
  /** The final event of a stored generation (as the event log keeps it). */
  completion(tx: Queryable, id: string): Promise<TypedEvent>;
}

/**
 * A generation's job, for every kind: reads the transcript, runs the generator (its progress kept on
 * the row, stages in the event log), keeps the result, then marks the row generated with its final
 * event in one transaction. The generator's failures (or the last attempt's) mark it failed with the
 * kind's error event and give the quota unit back, in one transaction; anything else is thrown for a retry.
 */
export async function runGenerationJob<Row extends GenerationRow, Generated, Kept>(
  deps: { sql: Sql; log: Logger },
  work: GenerationWork<Row, Generated, Kept>,
  id: string,
  options: { finalAttempt: boolean; signal?: AbortSignal },
): Promise<void> {
  const { kind } = work;
  const row = await kind.read(deps.sql, id);
  // Deleted, or finished by an earlier attempt: nothing to do.
  if (!row || row.status !== 'generating') return;
  const stream = generationStream(kind, id);
  try {
    const { track, cues } = await readTranscriptCues(deps.sql, row.video_id);
    const report = progressState(
      deps.sql,
      deps.log,
      { table: kind.table, id, stream, milestone: newStage },
      (progress: GenerationProgress) => kind.events.progress(progress),
    );
    report({ stage: 'reading', percent: 5 });
    const transcript = {
      track,
      cues: cues.map((cue) => ({
        start: cue.startMs / 1000,
        end: cue.endMs / 1000,
        text: cue.text,
        ...(cue.speakerChange ? { speakerChange: true } : {}),
      })),
    };
    const generate = () =>
      work.generate(row, transcript, {
        ...(options.signal ? { signal: options.signal } : {}),
        onProgress: report.within(5, work.generatorUpTo),
      });
    const generated = await runGeneration(work.model, generate, report, options.signal);
    const kept = await work.keep(row, generated, report);
    await deps.sql.begin(async (tx) => {
      if (await work.store(tx, id, generated, track, kept)) await appendEvents(tx, stream, [await work.completion(tx, id)]);
    });
  } catch (error) {
    const failure = finalFailure(error, options, `the ${kind.name} could not be stored`);
    if (!failure) throw error;
    deps.log.warn(`${kind.name} generation failed`, { id, videoId: row.video_id, err: error });
    await deps.sql.begin(async (tx) => {
      const [failed] = await tx<{ subject: string | null; windowStart: Date | null }[]>`
        update ${tx(kind.table)} g set status = 'failed', error = ${failure.message}, charged_window_start = null, updated_at = now()
        from (select charged_subject, charged_window_start from ${tx(kind.table)} where id = ${id}) as charged
        where g.id = ${id} and g.status = 'generating'
        returning charged.charged_subject::text as subject, charged.charged_window_start as "windowStart"`;
      if (!failed) return;
      // Nothing was delivered: the unit goes back to whoever paid, in the bucket it was charged in.
      if (failed.subject && failed.windowStart)
        await refundQuotas(tx, [{ subject: failed.subject, limit: kind.unit, windowStart: failed.windowStart }]);
      await appendEvents(tx, stream, [
        kind.events.error({ code: failure.code, message: failure.message, refunded: Boolean(failed.subject && failed.windowStart) }),
      ]);
    });
  }
}

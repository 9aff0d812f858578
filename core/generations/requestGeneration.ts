import type { Sql, Queryable } from '../db/database.ts';
import { notFound } from '../errors.ts';
import { appendEvents } from '../events/events.ts';
import { enqueueSubtitleFetch } from '../subtitles/enqueue.ts';
import { readTranscript, type TranscriptInfo } from '../subtitles/transcript.ts';
import type { Charge, GenerationKind, GenerationRow } from './generationKind.ts';

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

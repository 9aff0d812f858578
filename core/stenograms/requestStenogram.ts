import type { Sql, Queryable } from '../db/database.ts';
import { AppError, notFound } from '../errors.ts';
import { appendEvents } from '../events/events.ts';
import { enqueue } from '../jobs/enqueue.ts';
import { enqueueSubtitleFetch } from '../subtitles/enqueue.ts';
import { readTranscript, type TranscriptInfo } from '../subtitles/transcript.ts';
import { findStenogram, readStenogram } from './findStenogram.ts';
import { stenogramUrl, toMetadata, type StenogramRow } from './metadata.ts';
import { stenogramEvents, stenogramStream } from './stenogramEvents.ts';

/** The store or the database failing is tried again; the generator's own failures are final. */
const GENERATE_STENOGRAM_ATTEMPTS = 3;

export interface StenogramRequestInput {
  videoId: string;
  ownerId: string;
  apiKeyId: string;
  /** The caller's ISO 639-1/639-2 hint. */
  language: string | null;
  /** Charges one apiStenogramsPerDay to the key; answers the quota bucket it went into. Throwing (429) undoes the request. */
  charge(): Promise<Date | undefined>;
}

export type StenogramRequest = { outcome: 'accepted'; stenogram: StenogramRow } | { outcome: 'transcript_required'; transcript: TranscriptInfo };

/**
 * POST /api/stenograms/:videoId/generate in one transaction: refuses a second stenogram of the same
 * video (409 STENOGRAM_CONFLICT), queues a subtitle fetch when there is no transcript, else charges the
 * key, stores the stenogram as generating (a failed one starts over), queues its generate_stenogram
 * job and appends stenogram:started.
 */
export async function requestStenogram(sql: Sql, input: StenogramRequestInput): Promise<StenogramRequest> {
  return sql.begin(async (tx) => {
    const [video] = await tx`select 1 from videos where video_id = ${input.videoId}`;
    if (!video) throw notFound(`no video ${input.videoId} is stored; a channel search finds a channel's videos`);
    await tx`select pg_advisory_xact_lock(hashtextextended(${`stenogram:${input.ownerId}:${input.videoId}`}, 0))`;
    const existing = await findStenogram(tx, input.ownerId, input.videoId);
    if (existing && existing.status !== 'failed') throw conflict(existing);

    const transcript = await readTranscript(tx, input.videoId);
    if (transcript.state !== 'completed') {
      if (transcript.state !== 'pending') await enqueueSubtitleFetch(tx, [input.videoId]);
      return { outcome: 'transcript_required', transcript: await readTranscript(tx, input.videoId) };
    }

    const windowStart = (await input.charge()) ?? null;
    const id = await upsertGenerating(tx, input, windowStart);
    // A failed attempt's events would end the new stream at once: the stream starts over with the attempt.
    if (existing) await tx`delete from events where stream = ${stenogramStream(id)}`;
    await enqueue(tx, 'generate_stenogram', { stenogramId: id }, { jobKey: `stenogram:${id}`, maxAttempts: GENERATE_STENOGRAM_ATTEMPTS });
    const stenogram = (await readStenogram(tx, id))!;
    await appendEvents(tx, stenogramStream(id), [stenogramEvents.started({ videoId: input.videoId, metadata: toMetadata(stenogram) })]);
    return { outcome: 'accepted', stenogram };
  });
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

async function upsertGenerating(tx: Queryable, input: StenogramRequestInput, windowStart: Date | null): Promise<string> {
  const [row] = await tx<{ id: string }[]>`
    insert into stenograms (owner_id, video_id, api_key_id, charged_window_start, requested_language)
    values (${input.ownerId}::uuid, ${input.videoId}, ${input.apiKeyId}::uuid, ${windowStart}, ${input.language})
    on conflict (owner_id, video_id) do update set
      status = 'generating', error = null, api_key_id = excluded.api_key_id, charged_window_start = excluded.charged_window_start,
      requested_language = excluded.requested_language, requested_at = now(), updated_at = now()
    returning id::text as id`;
  return row!.id;
}

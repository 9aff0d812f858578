import type { Sql, Queryable } from '../db/database.ts';
import { notFound } from '../errors.ts';
import { appendEvents } from '../events/events.ts';
import { summaryEvents, summaryStream } from './summaryEvents.ts';
import { enqueue } from '../jobs/enqueue.ts';
import { enqueueSubtitleFetch } from '../subtitles/enqueue.ts';
import { readTranscript, type TranscriptInfo } from '../subtitles/transcript.ts';
import { readSummary } from './findSummary.ts';
import type { SummaryRow } from './summaryObject.ts';

/** A generation that fails for a reason of the database or the worker is tried again; the generator's own failures are final. */
const GENERATE_SUMMARY_ATTEMPTS = 3;

export type SummaryRequest =
  /** It exists and is ready: nothing was queued or charged. */
  | { outcome: 'ready'; summary: SummaryRow }
  /** A job is writing it: `queued` when this request started that job (and was charged). */
  | { outcome: 'generating'; summary: SummaryRow; queued: boolean }
  /** No transcript to build on: a subtitle fetch is queued (or already running). */
  | { outcome: 'transcript_required'; transcript: TranscriptInfo };

export interface SummaryRequestInput {
  videoId: string;
  ownerId: string;
  private: boolean;
  /** Charges the caller for a new generation; throwing (429) undoes the request. Runs inside the transaction. */
  charge(): Promise<void>;
}

/**
 * POST /api/summary/generate in one transaction: answers a ready summary, joins a running
 * generation, or (with a transcript to build on) charges the caller, stores the summary as
 * generating and queues its one generate_summary job. A failed summary is generated afresh.
 */
export async function requestSummary(sql: Sql, input: SummaryRequestInput): Promise<SummaryRequest> {
  return sql.begin(async (tx) => {
    const [video] = await tx<{ channelId: string }[]>`select channel_id as "channelId" from videos where video_id = ${input.videoId}`;
    if (!video) throw notFound(`no video ${input.videoId} is stored; a channel search finds a channel's videos`);
    const existing = await lockExisting(tx, input);
    if (existing?.status === 'ready') return { outcome: 'ready', summary: (await readSummary(tx, existing.id))! };
    if (existing?.status === 'generating') return { outcome: 'generating', summary: (await readSummary(tx, existing.id))!, queued: false };

    const transcript = await readTranscript(tx, input.videoId);
    if (transcript.state !== 'completed') {
      if (transcript.state !== 'pending') await enqueueSubtitleFetch(tx, [input.videoId]);
      return { outcome: 'transcript_required', transcript: await readTranscript(tx, input.videoId) };
    }

    const summaryId = existing ? await restart(tx, existing.id, input.ownerId) : await insert(tx, input, video.channelId);
    // A concurrent request stored it first: join that one (uncharged).
    if (!summaryId) return requestSummaryJoined(tx, input);
    await input.charge();
    await enqueue(tx, 'generate_summary', { summaryId }, { jobKey: `summary:${summaryId}`, maxAttempts: GENERATE_SUMMARY_ATTEMPTS });
    await appendEvents(tx, summaryStream(summaryId), [summaryEvents.progress({ stage: 'queued', percent: 0 })]);
    return { outcome: 'generating', summary: (await readSummary(tx, summaryId))!, queued: true };
  });
}

async function lockExisting(tx: Queryable, input: SummaryRequestInput) {
  const [row] = await tx<{ id: string; status: SummaryRow['status'] }[]>`
    select id::text as id, status from summaries
    where video_id = ${input.videoId} and private = ${input.private} and (not private or owner_id = ${input.ownerId}::uuid)
    for update`;
  return row;
}

async function requestSummaryJoined(tx: Queryable, input: SummaryRequestInput): Promise<SummaryRequest> {
  const existing = (await lockExisting(tx, input))!;
  const summary = (await readSummary(tx, existing.id))!;
  return existing.status === 'ready' ? { outcome: 'ready', summary } : { outcome: 'generating', summary, queued: false };
}

async function insert(tx: Queryable, input: SummaryRequestInput, channelId: string): Promise<string | undefined> {
  const [row] = await tx<{ id: string }[]>`
    insert into summaries (video_id, channel_id, owner_id, private)
    values (${input.videoId}, ${channelId}, ${input.ownerId}::uuid, ${input.private})
    on conflict do nothing
    returning id::text as id`;
  return row?.id;
}

/** A failed summary starts over, asked for by whoever asks now; its stream too (the failed attempt's events would end it at once). */
async function restart(tx: Queryable, summaryId: string, ownerId: string): Promise<string> {
  await tx`delete from events where stream = ${summaryStream(summaryId)}`;
  await tx`
    update summaries set status = 'generating', error = null, owner_id = ${ownerId}::uuid, requested_at = now(), updated_at = now()
    where id = ${summaryId}`;
  return summaryId;
}

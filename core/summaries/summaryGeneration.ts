/** A summary as a kind of generation (core/generations): which row a request means, and its stream. */
import type { Queryable } from '../db/database.ts';
import type { GenerationKind } from '../generations/generationKind.ts';
import type { GenerationRequestInput } from '../generations/requestGeneration.ts';
import { enqueue } from '../jobs/enqueue.ts';
import { readSummary } from './findSummary.ts';
import { summaryEvents } from './summaryEvents.ts';
import type { SummaryRow } from './summaryObject.ts';

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

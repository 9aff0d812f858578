/** A stenogram as a kind of generation (core/generations): one per owner and video, its stream opened by stenogram:started. */
import type { Queryable } from '../db/database.ts';
import type { GenerationKind } from '../generations/generationKind.ts';
import type { GenerationRequestInput } from '../generations/requestGeneration.ts';
import { enqueue } from '../jobs/enqueue.ts';
import { readStenogram } from './findStenogram.ts';
import { toMetadata, type StenogramRow } from './metadata.ts';
import { stenogramEvents } from './stenogramEvents.ts';

export interface StenogramRequestInput extends GenerationRequestInput {
  ownerId: string;
  /** The caller's ISO 639-1/639-2 hint. */
  language: string | null;
}

export const stenogramGeneration: GenerationKind<StenogramRow, StenogramRequestInput> = {
  name: 'stenogram',
  table: 'stenograms',
  unit: 'apiStenogramsPerDay',
  events: { progress: stenogramEvents.progress, error: stenogramEvents.error, final: [stenogramEvents.complete.type, stenogramEvents.error.type] },
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

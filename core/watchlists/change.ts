import { z } from 'zod';
import type { Queryable } from '../db/database.ts';
import { reasonText } from '../videos/statusWording.ts';

/**
 * One entry of the change log (sql/045_watchlists.sql) as every view of it shows it: a watchlist's
 * changes and its event stream, the Atom feeds, the webhooks' `data`. The log is the source; these
 * are its one presentation.
 */
export const changeType = z.enum([
  'video.deleted',
  'video.reuploaded',
  'video.restored',
  'video.metadata_changed',
  'channel.video_added',
  'query.new_match',
]);
export type ChangeType = z.infer<typeof changeType>;
/** The kinds the deletion feeds list: a video gone, whether or not a re-upload was found. */
export const DELETION_TYPES: readonly ChangeType[] = ['video.deleted', 'video.reuploaded'];

const metadataValues = z.object({
  title: z.string().nullable(),
  description: z.string().nullable().optional().describe('only when the description is what changed'),
  tags: z.array(z.string()),
  thumbnailUrl: z.string().nullable(),
});

export const changeSchema = z.object({
  id: z.string().describe("the change's id in the log: stable, increasing, the same in every feed, stream and webhook"),
  type: changeType,
  videoId: z.string(),
  channelId: z.string(),
  title: z.string().nullable().describe("the video's title when the change was logged"),
  happenedAt: z.string().describe('ISO 8601: when it was observed (a status change: the observation that confirmed it)'),
  recordedAt: z.string().describe('ISO 8601: when it entered the log'),
  status: z
    .object({
      status: z.enum(['live', 'deleted', 're-uploaded']),
      previousStatus: z.string(),
      reason: z.string().nullable(),
      reasonText: z.string().nullable(),
      claimant: z.string().nullable(),
      linkedVideoId: z.string().nullable().describe('a re-upload: the new video; a restored re-upload: the one it was linked to'),
    })
    .nullable()
    .describe('status changes only'),
  evidence: z
    .object({ source: z.string().nullable(), text: z.string().nullable() })
    .nullable()
    .describe('what decided a status change: the source that observed it and what it answered'),
  metadata: z
    .object({ changed: z.array(z.enum(['title', 'description', 'tags', 'thumbnail'])), before: metadataValues, after: metadataValues })
    .nullable()
    .describe('video.metadata_changed only'),
  savedQueryId: z.string().nullable().describe('query.new_match only: the saved query that matched'),
});
export type Change = z.infer<typeof changeSchema>;

/** A changes row as CHANGE_COLUMNS selects it. */
export interface ChangeRow {
  id: string;
  kind: ChangeType;
  videoId: string;
  channelId: string;
  savedQueryId: string | null;
  happenedAt: string;
  recordedAt: string;
  details: Record<string, unknown>;
}

/** The columns of a changes row (aliased `c`) that `presentChange` reads. */
export const CHANGE_COLUMNS = `c.id::text as id, c.kind, c.video_id as "videoId", c.channel_id as "channelId",
  c.saved_query_id::text as "savedQueryId", to_json(c.happened_at)#>>'{}' as "happenedAt",
  to_json(c.recorded_at)#>>'{}' as "recordedAt", c.details`;

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

export function presentChange(row: ChangeRow): Change {
  const d = row.details;
  const isStatus = row.kind === 'video.deleted' || row.kind === 'video.reuploaded' || row.kind === 'video.restored';
  return {
    id: row.id,
    type: row.kind,
    videoId: row.videoId,
    channelId: row.channelId,
    title: text(d.title),
    happenedAt: row.happenedAt,
    recordedAt: row.recordedAt,
    status: isStatus
      ? {
          status: d.status as 'live' | 'deleted' | 're-uploaded',
          previousStatus: text(d.previousStatus) ?? 'live',
          reason: text(d.reason),
          reasonText: reasonText(text(d.reason)),
          claimant: text(d.claimant),
          linkedVideoId: text(d.linkedVideoId),
        }
      : null,
    evidence: isStatus ? { source: text(d.source), text: text(d.evidence) } : null,
    metadata:
      row.kind === 'video.metadata_changed'
        ? ({ changed: d.changed, before: d.before, after: d.after } as NonNullable<Change['metadata']>)
        : null,
    savedQueryId: row.savedQueryId,
  };
}

/** The changes with these ids, in the order given (ids unknown are left out). */
export async function changesById(sql: Queryable, ids: readonly string[]): Promise<Change[]> {
  if (ids.length === 0) return [];
  const rows = await sql.unsafe<ChangeRow[]>(
    `select ${CHANGE_COLUMNS} from changes c where c.id = any($1::bigint[]) order by array_position($1::bigint[], c.id)`,
    [ids as string[]],
  );
  return rows.map(presentChange);
}

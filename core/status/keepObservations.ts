/**
 * Keeps the answers behind observations that decided or confirmed something (gzip-compressed, with
 * the SHA-256 of the raw body), and counts the definite answers that changed nothing. Called in the
 * transaction that applied the observations, after it: the history rows the triggers wrote are there.
 */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { Queryable } from '../db/database.ts';
import type { KeptAnswer } from '../sources/keptAnswer.ts';

/** What the answer decided: a status (a first sign, the change, a later confirmation), or what was kept of it (the thumbnail). */
type Decided = 'suspected' | 'status_change' | 'confirmation' | 'thumbnail';

export interface DecidingObservation {
  videoId: string;
  source: string;
  said: string;
  decided: Decided;
  answer: KeptAnswer;
  wayback?: { timestamp: string; digest: string | null };
}

export const sha256Hex = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

export async function keepObservations(
  tx: Queryable,
  kept: DecidingObservation[],
  /** Videos whose status changed now, with when their suspicion began: their new history row is linked to the change and to that suspicion. */
  changed: Array<{ videoId: string; suspectedAt: Date | null }>,
): Promise<void> {
  if (kept.length > 0) {
    const rows = kept.map((o) => ({
      video_id: o.videoId,
      source: o.source,
      request_url: o.answer.url,
      observed_at: o.answer.answeredAt,
      http_status: o.answer.status,
      content_type: o.answer.contentType,
      decided: o.decided,
      said: o.said.slice(0, 2000),
      wayback_timestamp: o.wayback?.timestamp ?? null,
      cdx_digest: o.wayback?.digest ?? null,
      body_sha256: sha256Hex(o.answer.body),
      body_size: o.answer.body.length,
      body_gzip: gzipSync(o.answer.body),
    }));
    await tx`insert into evidence_observations ${tx(rows)}`;
  }
  if (changed.length === 0) return;
  const links = JSON.stringify(changed.map((c) => ({ video_id: c.videoId, suspected_at: c.suspectedAt?.toISOString() ?? null })));
  await tx`
    update evidence_observations e set status_history_id = h.id
    from (
      select distinct on (c.video_id) c.video_id, c.suspected_at, h.id
      from jsonb_to_recordset(${links}::text::jsonb) as c(video_id text, suspected_at timestamptz)
      join video_status_history h on h.video_id = c.video_id
      order by c.video_id, h.id desc
    ) h
    where e.video_id = h.video_id and e.status_history_id is null
      and (e.decided = 'status_change' or (e.decided = 'suspected' and e.recorded_at >= h.suspected_at))`;
}

/** Definite answers that changed and confirmed nothing (a live video still live): counted, their bodies not kept. */
export async function countUnkeptObservations(tx: Queryable, videoIds: string[]): Promise<void> {
  if (videoIds.length === 0) return;
  await tx`update video_checks set unkept_observations = unkept_observations + 1 where video_id = any(${videoIds})`;
}

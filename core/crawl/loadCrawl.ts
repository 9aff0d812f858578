import type { Queryable } from '../db/database.ts';
import { crawlStepKey } from './queueStep.ts';

export interface Crawl {
  id: string;
  kind: 'full' | 'archive_page';
  status: string;
  archiveCursor: string | null;
  channelId: string;
  channelTitle: string;
  /** The key of the step queued next (crawlStepKey); null for crawls queued before it was kept. */
  queuedStep: string | null;
}

/** A crawl with its channel's stored title (what the sources are asked with). */
export async function loadCrawl(sql: Queryable, crawlId: string): Promise<Crawl | undefined> {
  const [crawl] = await sql<Crawl[]>`
    select cr.id::text, cr.kind, cr.status, cr.archive_cursor as "archiveCursor", cr.channel_id as "channelId", ch.title as "channelTitle",
      cr.queued_step as "queuedStep"
    from crawls cr join channels ch on ch.channel_id = cr.channel_id where cr.id = ${crawlId}`;
  return crawl;
}

/**
 * Whether `step` is the crawl's queued step. A step whose job runs again after its transaction
 * committed (a worker lost before graphile-worker marked the job done) is not: it already ran.
 */
export const isQueued = (crawl: Pick<Crawl, 'queuedStep'>, step: { step: number; cursor?: string | undefined }) =>
  crawl.queuedStep === null || crawl.queuedStep === crawlStepKey(step.step, step.cursor);

import type { Queryable } from '../db/database.ts';
import { enqueue } from '../jobs/enqueue.ts';

/** What names a step of a crawl: the `step`th source of its plan, from `cursor` (its start when absent). */
export const crawlStepKey = (step: number, cursor?: string) => `${step}:${cursor ?? ''}`.slice(0, 500);

/**
 * Queues a step of a crawl (the crawl_channel task) and records it as the crawl's queued step,
 * the one step storeBatch accepts next.
 */
export async function queueCrawlStep(tx: Queryable, crawlId: string, step: number, cursor?: string): Promise<void> {
  const key = crawlStepKey(step, cursor);
  await tx`update crawls set queued_step = ${key} where id = ${crawlId}`;
  await enqueue(
    tx,
    'crawl_channel',
    { crawlId, step, ...(cursor === undefined ? {} : { cursor }) },
    {
      // A step queued twice (a repeated transaction) runs once.
      jobKey: `crawl:${crawlId}:${key}`,
      maxAttempts: 5,
    },
  );
}

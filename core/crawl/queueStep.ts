import type { Queryable } from '../db/database.ts';
import { enqueue } from '../jobs/enqueue.ts';

/** Queues a step of a crawl (the crawl_channel task): the `step`th source of its plan, from `cursor` (its start when absent). */
export async function queueCrawlStep(tx: Queryable, crawlId: string, step: number, cursor?: string): Promise<void> {
  await enqueue(
    tx,
    'crawl_channel',
    { crawlId, step, ...(cursor === undefined ? {} : { cursor }) },
    {
      // A step queued twice (a repeated transaction) runs once.
      jobKey: `crawl:${crawlId}:${step}:${cursor ?? ''}`.slice(0, 512),
      maxAttempts: 5,
    },
  );
}

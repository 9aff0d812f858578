import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crawlStep } from '../../core/crawl/crawlStep.ts';
import { startSearch } from '../../core/crawl/startSearch.ts';
import { createLogger } from '../../core/log.ts';
import type { ChannelRecord, VideoRecord, VideoSource } from '../../core/sources/types.ts';
import { eventually } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { fakeChannelId, fakeVideoId } from '../kit/ids.ts';

// A step's transaction commits before graphile-worker marks its job done: a worker lost between the
// two leaves the job to run again. The repeat must write nothing: no videos counted twice, no
// events streamed twice, no later step queued twice.

let db: TestDatabase;
const channel: ChannelRecord = { channelId: fakeChannelId('repeat-step'), title: 'Repeat Step' };
const videoOf = (n: number): VideoRecord => ({ videoId: fakeVideoId(`repeat-${n}`), channelId: channel.channelId, title: `Video ${n}` });
/** Two pages of 500 videos, a step's batch each (BATCH_VIDEOS of core/crawl/crawlStep.ts). */
const PAGE = 500;
const page = (from: number) => Array.from({ length: PAGE }, (_, n) => videoOf(from + n));
const source: VideoSource = {
  name: 'archive',
  resolveChannel: async () => channel,
  listVideos: async (_channel, cursor) =>
    cursor === undefined ? { videos: page(0), next: 'page-2', progress: 0.5 } : { videos: page(PAGE) },
};
const deps = () => ({ sql: db.sql, sources: [source], log: createLogger('silent'), sourceWaitBudgetMs: 5_000 });

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const crawlOf = (crawlId: string) =>
  db.sql<{ totals: { videos?: number; new?: number }; status: string }[]>`select totals, status from crawls where id = ${crawlId}`;
const videoEvents = (crawlId: string) =>
  db.sql<{ n: number }[]>`select count(*)::int as n from events where stream = ${`crawl:${crawlId}`} and type = 'search:video'`;
/** The keys of the crawl's queued steps (no worker runs here: the first step's own job stays queued too). */
const queuedSteps = async (crawlId: string) =>
  (await db.sql<{ key: string }[]>`select key from graphile_worker.jobs where key like ${`crawl:${crawlId}:%`} order by key`).map(
    (job) => job.key,
  );

describe('a crawl step run again after it committed', () => {
  it('writes nothing the second time: totals, events and the next step stay as the first run left them', async () => {
    const { crawlId } = await startSearch(db.sql, { userId: null, channel, query: channel.channelId, kind: 'full' });
    const first = { crawlId: crawlId, step: 0 };

    await crawlStep(deps(), first, { last: false });
    const afterFirst = (await crawlOf(crawlId))[0]!;
    expect(afterFirst.totals.videos).toBe(PAGE);
    expect((await videoEvents(crawlId))[0]!.n).toBe(PAGE);
    const queued = [`crawl:${crawlId}:0:`, `crawl:${crawlId}:0:page-2`];
    expect(await queuedSteps(crawlId)).toEqual(queued);

    // The same job again, as after a kill -9 between its commit and its completion.
    await crawlStep(deps(), first, { last: false });
    expect((await crawlOf(crawlId))[0]!.totals).toEqual(afterFirst.totals);
    expect((await videoEvents(crawlId))[0]!.n).toBe(PAGE);
    expect(await queuedSteps(crawlId)).toEqual(queued);

    // The queued step goes on, and the crawl ends counting each video once.
    await crawlStep(deps(), { crawlId: crawlId, step: 0, cursor: 'page-2' }, { last: false });
    await crawlStep(deps(), { crawlId: crawlId, step: 0, cursor: 'page-2' }, { last: false });
    const [done] = await crawlOf(crawlId);
    expect(done!.status).toBe('complete');
    expect(done!.totals).toMatchObject({ videos: 2 * PAGE, new: 2 * PAGE });
    expect((await videoEvents(crawlId))[0]!.n).toBe(2 * PAGE);
  });
});

describe('a search joining a crawl while one of its steps stores', () => {
  it('waits for the step instead of deadlocking: startSearch locks the channel, then the crawl, and so does the step', async () => {
    const { crawlId } = await startSearch(db.sql, { userId: null, channel, query: channel.channelId, kind: 'full' });
    let stepDone: Promise<void> | undefined;
    // What startSearch holds while it asks for the running crawl: the channel's row, then the crawl's.
    await db.sql.begin(async (tx) => {
      await tx`select from channels where channel_id = ${channel.channelId} for no key update`;
      stepDone = crawlStep(deps(), { crawlId, step: 0 }, { last: false });
      // The step has fetched its batch and waits for the channel's row, which this transaction holds.
      await eventually(
        async () => (await db.sql`select from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`).length > 0,
        "the step waiting for the channel's lock",
        10_000,
      );
      await tx`select id from crawls where id = ${crawlId} for update`;
    });
    await stepDone;
    expect((await crawlOf(crawlId))[0]!.totals.videos).toBe(PAGE);
  });
});

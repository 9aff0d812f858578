import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendEvents, newStage, progressState } from '../../core/events/events.ts';
import { generationStream } from '../../core/generations/lifecycle.ts';
import { createLogger } from '../../core/log.ts';
import { summaryEvents } from '../../core/summaries/summaryEvents.ts';
import { summaryGeneration } from '../../core/summaries/summaryGeneration.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { eventually } from '../support/cli.ts';
import { readStream, type ReceivedEvent } from '../support/sse.ts';
import { addVideos, channelIdFor, videoIdFor } from '../support/subtitles.ts';

// Progress as state (migration 027): the row keeps the latest progress, the event log only the
// milestones (a new stage) and the final event; a stream gets the current progress before anything
// live, and the percents in between live, each with the id of the last logged event.
let db: TestDatabase;
let api: TestApi;
let key: string;
let summaryId: string;
const videoId = videoIdFor('progress-state');
const stream = () => generationStream(summaryGeneration, summaryId);
const log = createLogger('silent');

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(db.sql);
  ({ key } = await createKeyedUser(db.sql));
  await addVideos(db.sql, channelIdFor('progress-state'), [{ videoId }]);
  const [row] = await db.sql<{ id: string }[]>`
    insert into summaries (video_id, channel_id) select video_id, channel_id from videos where video_id = ${videoId} returning id::text`;
  summaryId = row!.id;
  await appendEvents(db.sql, stream(), [summaryEvents.progress({ stage: 'queued', percent: 0 })]);
});
afterAll(async () => {
  await api?.close();
  await db?.drop();
});

const logged = async () => db.sql<{ id: string; stage: string; percent: number }[]>`
  select id::text, payload->>'stage' as stage, (payload->>'percent')::int as percent from events where stream = ${stream()} order by seq`;
const column = async () => (await db.sql<{ progress: unknown }[]>`select progress from summaries where id = ${summaryId}`)[0]!.progress;

describe("a generation's progress", () => {
  const makeProgress = () =>
    progressState(db.sql, log, { table: 'summaries', id: summaryId, stream: stream(), milestone: newStage }, summaryEvents.progress);
  let progress: ReturnType<typeof makeProgress>;
  beforeAll(() => {
    progress = makeProgress();
  });

  it('logs a new stage, keeps the percents within it on the row only', async () => {
    progress({ stage: 'reading', percent: 5 });
    await progress.flushed();
    progress({ stage: 'reading', percent: 20 });
    await progress.flushed();
    expect((await logged()).map(({ stage, percent }) => [stage, percent])).toEqual([
      ['queued', 0],
      ['reading', 5],
    ]);
    expect(await column()).toEqual({ stage: 'reading', percent: 20 });
  });

  it('a resumed stream gets what it missed, then the current progress, then live progress and the final event, every one with an id', async () => {
    const [queued, reading] = await logged();
    const url = `${api.url}/api/summary/${videoId}/stream`;
    const received: ReceivedEvent[] = [];
    const following = readStream(url, { key, lastEventId: queued!.id, timeoutMs: 15_000, onEvent: (event) => received.push(event) });
    const shown = (percent: number) => received.some((event) => event.data.percent === percent);
    // The current progress is sent before the stream subscribes to live progress, which it passes on once
    // caught up with the log: announced until it arrives (the same percent again is never sent twice).
    await eventually(() => shown(20), 'the current progress on the resumed stream', 10_000);
    await eventually(
      async () => {
        if (shown(40)) return true;
        progress({ stage: 'reading', percent: 40 });
        await progress.flushed();
        return false;
      },
      'live progress on the stream',
      10_000,
    );
    await appendEvents(db.sql, stream(), [
      summaryEvents.error({ code: 'INTERNAL_ERROR', message: 'stopped by the test', refunded: false }),
    ]);
    const { events } = await following;
    expect(events.map((event) => [event.event, event.data.percent ?? null, event.id])).toEqual([
      ['summary:progress', 5, reading!.id],
      ['summary:progress', 20, reading!.id],
      ['summary:progress', 40, reading!.id],
      ['summary:error', null, expect.stringMatching(/^\d+$/)],
    ]);
    expect((await logged()).map((event) => event.stage)).toEqual(['queued', 'reading', null]);
  });
});

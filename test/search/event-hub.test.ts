import { afterAll, beforeAll, expect, it } from 'vitest';
import { createEventHub, type EventHub } from '../../api/sse/hub.ts';
import { appendEvents, readEvents, streamStart, type Position } from '../../core/events/events.ts';
import { searchEvents } from '../../core/events/searchEvents.ts';
import { createLogger } from '../../core/log.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';

let db: TestDatabase;
let hub: EventHub;

beforeAll(async () => {
  db = await createTestDatabase();
  hub = await createEventHub(db.sql, createLogger('silent'));
});

afterAll(async () => {
  await hub.close();
  await db.drop();
});

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

it('gives every subscriber each event after its start once, in order, however it joins: early, late, behind, slow to catch up', async () => {
  const stream = 'crawl:hub-test';
  const start = streamStart;
  const subscribers: Array<{ from: Position; received: Position[]; stop(): void }> = [];
  const join = (from: Position, readyForMore?: () => Promise<void>) => {
    const received: Position[] = [];
    const stop = hub.subscribe(stream, from, (events) => received.push(...events.map((event) => event.seq)), readyForMore);
    subscribers.push({ from, received, stop });
  };
  // More than one slice of subscribers from the start, so deliveries span turns of the event loop.
  for (let i = 0; i < 150; i++) join(start);

  for (let round = 0; round < 30; round++) {
    // A writer that holds its transaction open: the next writer of the stream waits for it, so readers never skip it.
    const late = db.sql.begin(async (tx) => {
      await appendEvents(tx, stream, [searchEvents.progress({ stage: 'late', percent: round })]);
      await sleep(15);
    });
    await sleep(2);
    await db.sql.begin((tx) =>
      appendEvents(
        tx,
        stream,
        Array.from({ length: 1 + (round % 4) * 120 }, (_, idx) =>
          searchEvents.progress({ stage: `round ${round}`, percent: 0, videosInBatch: idx }),
        ),
      ),
    );
    await late;
    const { events: sofar } = await readEvents(db.sql, stream, start, 100_000);
    const behind = sofar[Math.floor((sofar.length * (round % 5)) / 5)]?.seq ?? start;
    join(behind);
    join(behind, () => sleep(round % 3));
    join(start, () => sleep(1));
  }

  const { events: all } = await readEvents(db.sql, stream, start, 100_000);
  const expected = (from: Position) => all.filter((event) => event.seq > from).map((event) => event.seq);
  for (let waited = 0; waited < 10_000 && subscribers.some((sub) => sub.received.length < expected(sub.from).length); waited += 50)
    await sleep(50);
  for (const sub of subscribers) expect(sub.received).toEqual(expected(sub.from));
  subscribers.forEach((sub) => sub.stop());
}, 30_000);

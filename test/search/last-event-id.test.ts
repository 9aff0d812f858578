import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendEvents, crawlStream } from '../../core/events/events.ts';
import { summaryEvents } from '../../core/summaries/summaryEvents.ts';
import { generationStream } from '../../core/generations/lifecycle.ts';
import { summaryGeneration } from '../../core/summaries/summaryGeneration.ts';
import { createKeyedUser } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { fakeSource, generateChannel } from '../support/fake-source.ts';
import { expectError } from '../support/http-helpers.ts';
import { readStream, type ReceivedEvent } from '../support/sse.ts';
import { startSearchStack } from '../support/stack.ts';

let db: TestDatabase;
let stack: Awaited<ReturnType<typeof startSearchStack>>;
let key: string;

const first = generateChannel(4, 'a');
const second = generateChannel(3, 'b');

interface Session {
  id: string;
  events: ReceivedEvent[];
}
/** The second search of each channel: its stream has a stored part (s: ids) and the crawl's part (c: ids). */
const sessions: Record<'first' | 'second', Session> = { first: { id: '', events: [] }, second: { id: '', events: [] } };

const streamUrl = (sessionId: string) => `${stack.api.url}/api/search/${sessionId}/stream`;

async function searchToTheEnd(channelId: string): Promise<Session> {
  const started = await stack.api.call('/api/search', {
    method: 'POST',
    key,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ query: channelId }),
  });
  expect(started.status).toBe(200);
  const id = started.body.data.searchSessionId as string;
  const { events } = await readStream(streamUrl(id), { key, timeoutMs: 30_000 });
  expect(events.at(-1)?.event).toBe('search:complete');
  return { id, events };
}

beforeAll(async () => {
  db = await createTestDatabase();
  stack = await startSearchStack(
    db,
    {},
    {
      sources: [
        fakeSource({ name: 'archive', channel: first.channel, videos: first.videos }),
        fakeSource({ name: 'youtube_api', channel: second.channel, videos: second.videos }),
      ],
    },
  );
  ({ key } = await createKeyedUser(db.sql));
  for (const [name, generated] of [
    ['first', first],
    ['second', second],
  ] as const) {
    await searchToTheEnd(generated.channel.channelId);
    sessions[name] = await searchToTheEnd(generated.channel.channelId);
  }
}, 90_000);
afterAll(async () => {
  await stack.close();
  await db.drop();
});

const idsOf = (session: Session, prefix: 's:' | 'c:') =>
  session.events.flatMap((event) => (event.id?.startsWith(prefix) && event.id.length > 2 && event.id !== 's:~' ? [event.id] : []));

const resumeWith = (lastEventId: string, session = sessions.first) =>
  stack.api.call(`/api/search/${session.id}/stream`, { key, headers: { 'Last-Event-ID': lastEventId } });

describe('a Last-Event-ID that cannot be a position is refused before the stream opens', () => {
  it.each([
    'c:99999999999999999999', // the id is a bigint
    'c:9223372036854775808',
    'c:-1',
    'c:12.5', // the scheme before migration 026
    'c:12x',
    's:not a video',
    'garbage',
  ])('%s → 400 INVALID_INPUT naming Last-Event-ID', async (lastEventId) => {
    const error = expectError(await resumeWith(lastEventId), 400, 'INVALID_INPUT');
    expect(error.message).toMatch(/^Last-Event-ID: /);
  });

  it('also when sent as ?lastEventId=', async () => {
    const response = await stack.api.call(
      `/api/search/${sessions.first.id}/stream?lastEventId=${encodeURIComponent('c:99999999999999999999')}`,
      { key },
    );
    expect(expectError(response, 400, 'INVALID_INPUT').message).toMatch(/^Last-Event-ID: /);
  });
});

describe('a Last-Event-ID of another stream is refused, not silently skipped to', () => {
  it('the stream of each session has ids of both parts (the fixture is what the tests need)', () => {
    for (const session of Object.values(sessions)) {
      expect(idsOf(session, 's:').length).toBeGreaterThan(0);
      expect(idsOf(session, 'c:').length).toBeGreaterThan(0);
    }
  });

  it("a stored video of another session's channel (s:<videoId>) → 400", async () => {
    expectError(await resumeWith(idsOf(sessions.second, 's:')[0]!), 400, 'INVALID_INPUT');
  });

  it('a video id nobody stored → 400', async () => {
    expectError(await resumeWith('s:zzzzzzzzzzz'), 400, 'INVALID_INPUT');
  });

  it('an event of another crawl (c:<position>) → 400', async () => {
    expectError(await resumeWith(idsOf(sessions.second, 'c:')[0]!), 400, 'INVALID_INPUT');
  });

  it('an event of the crawl before this one of the same channel → 400', async () => {
    const [crawl] = await db.sql<
      { crawlId: string }[]
    >`select crawl_id::text as "crawlId" from search_sessions where id = ${sessions.first.id}`;
    const [earlier] = await db.sql<{ id: string }[]>`
      select e.id::text from events e join crawls c on e.stream = 'crawl:' || c.id
      where c.channel_id = ${first.channel.channelId} and c.id <> ${crawl!.crawlId} order by e.id limit 1`;
    expect(earlier).toBeDefined();
    expectError(await resumeWith(`c:${earlier!.id}`), 400, 'INVALID_INPUT');
  });

  it('an event of this crawl from before the session joined it → 400; the first after it resumes', async () => {
    // A session that joined the first session's crawl after its second event.
    const [late] = await db.sql<{ id: string; crawlId: string }[]>`
      insert into search_sessions (user_id, channel_id, crawl_id, join_seq, query)
      select user_id, channel_id, crawl_id, 2, query from search_sessions where id = ${sessions.first.id} returning id, crawl_id::text as "crawlId"`;
    const idAt = async (seq: number) =>
      (await db.sql<{ id: string }[]>`select id::text from events where stream = ${crawlStream(late!.crawlId)} and seq = ${seq}`)[0]!.id;
    const session = { id: late!.id, events: [] };
    expectError(await resumeWith(`c:${await idAt(2)}`, session), 400, 'INVALID_INPUT');
    const resumed = await readStream(streamUrl(late!.id), { key, lastEventId: `c:${await idAt(3)}`, timeoutMs: 30_000 });
    expect(resumed.status).toBe(200);
    expect(resumed.events.at(-1)?.event).toBe('search:complete');
  });

  it('an id in range that names no event → 400', async () => {
    expectError(await resumeWith('c:9223372036854775807'), 400, 'INVALID_INPUT');
  });
});

describe('the ids the stream sent resume it', () => {
  it('after a stored video: the rest of the stream, that video not again', async () => {
    const stored = idsOf(sessions.first, 's:');
    const resumed = await readStream(streamUrl(sessions.first.id), { key, lastEventId: stored[0]!, timeoutMs: 30_000 });
    expect(resumed.status).toBe(200);
    const everyId = (events: ReceivedEvent[]) => events.flatMap((event) => (event.id ? [event.id] : []));
    const all = everyId(sessions.first.events);
    expect(everyId(resumed.events)).toEqual(all.slice(all.indexOf(stored[0]!) + 1));
  });

  it("the stored part's progress counts every stored video of the session, also after a reconnect", async () => {
    const stored = idsOf(sessions.first, 's:');
    const storedCount = (events: ReceivedEvent[]) => events.find((event) => event.id === 's:~')?.data;
    expect(storedCount(sessions.first.events)).toEqual({ stage: 'database', percent: 100, videos: stored.length });
    for (const after of [stored[0]!, stored.at(-1)!]) {
      const resumed = await readStream(streamUrl(sessions.first.id), { key, lastEventId: after, timeoutMs: 30_000 });
      expect(storedCount(resumed.events), after).toEqual({ stage: 'database', percent: 100, videos: stored.length });
    }
  });

  it('after an event of the crawl, and after the end of the stored part', async () => {
    for (const id of [idsOf(sessions.first, 'c:')[0]!, 's:~', 's:']) {
      const resumed = await readStream(streamUrl(sessions.first.id), { key, lastEventId: id, timeoutMs: 30_000 });
      expect(resumed.status).toBe(200);
      expect(resumed.events.at(-1)?.event).toBe('search:complete');
    }
  });
});

describe('generation streams (summaries) check their Last-Event-ID the same way', () => {
  let videoId: string;
  let ownSummaryId: string;
  let ownPosition: string;
  let otherPosition: string;

  beforeAll(async () => {
    videoId = first.videos[0]!.videoId;
    const [own, other] = await db.sql<{ id: string }[]>`
      insert into summaries (video_id, channel_id) values (${videoId}, ${first.channel.channelId}), (${first.videos[1]!.videoId}, ${first.channel.channelId}) returning id::text`;
    for (const summary of [own!, other!])
      await appendEvents(db.sql, generationStream(summaryGeneration, summary.id), [
        summaryEvents.progress({ stage: 'queued', percent: 0 }),
      ]);
    const positionOf = async (summaryId: string) =>
      (
        await db.sql<
          { position: string }[]
        >`select id::text as position from events where stream = ${generationStream(summaryGeneration, summaryId)}`
      )[0]!.position;
    ownSummaryId = own!.id;
    ownPosition = await positionOf(own!.id);
    otherPosition = await positionOf(other!.id);
  });

  const resumeSummary = (lastEventId: string) =>
    stack.api.call(`/api/summary/${videoId}/stream`, { key, headers: { 'Last-Event-ID': lastEventId } });

  it.each(['99999999999999999999', '12.5', 's:abc'])('%s → 400 before the stream opens', async (lastEventId) => {
    expect(expectError(await resumeSummary(lastEventId), 400, 'INVALID_INPUT').message).toMatch(/^Last-Event-ID: /);
  });

  it("an event of another summary's stream → 400", async () => {
    expectError(await resumeSummary(otherPosition), 400, 'INVALID_INPUT');
  });

  it('its own event resumes the stream: what came after it, not it again', async () => {
    await appendEvents(db.sql, generationStream(summaryGeneration, ownSummaryId), [
      summaryEvents.error({ code: 'INTERNAL_ERROR', message: 'stopped by the test', refunded: false }),
    ]);
    const resumed = await readStream(`${stack.api.url}/api/summary/${videoId}/stream`, {
      key,
      lastEventId: ownPosition,
      timeoutMs: 30_000,
    });
    expect(resumed.status).toBe(200);
    expect(resumed.events.map((event) => event.event)).toEqual(['summary:error']);
  });
});

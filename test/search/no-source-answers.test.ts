import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.ts';
import { configuredSources } from '../../core/sources/configured.ts';
import { createKeyedUser, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { readStream } from '../support/sse.ts';
import { startSearchStack } from '../support/stack.ts';
import { fakeChannelId } from '../kit/ids.ts';
import { start as startWayback, type WaybackServer } from '../kit/servers/wayback-server.ts';
import { start as startYoutubeApi, type YoutubeApiServer } from '../kit/servers/youtube-api-server.ts';

// Every source stops answering (requests hang far longer than the per-request timeout allows a
// test to wait): the wait budget alone ends each wait. The local archive is left out, so nothing
// at all can answer.
let db: TestDatabase;
let api: TestApi;
let stack: Awaited<ReturnType<typeof startSearchStack>>;
let youtube: YoutubeApiServer;
let wayback: WaybackServer;
let key: string;
const knownChannel = fakeChannelId('silent-known');

beforeAll(async () => {
  db = await createTestDatabase();
  youtube = await startYoutubeApi();
  wayback = await startWayback();
  const env = {
    YOUTUBE_API_KEY: youtube.apiKey,
    YOUTUBE_API_URL: youtube.url,
    WAYBACK_ENABLED: 'true',
    WAYBACK_URL: wayback.url,
    SOURCE_TIMEOUT_MS: '600000',
    SOURCE_WAIT_BUDGET_MS: '1000',
  };
  const sources = configuredSources(loadConfig({ DATABASE_URL: db.url, ...env }), async () => []).filter(
    (source) => source.name !== 'archive',
  );
  stack = await startSearchStack(db, env, { sources });
  api = stack.api;
  ({ key } = await createKeyedUser(db.sql));
  await db.sql`insert into channels (channel_id, title) values (${knownChannel}, 'Known Before')`;
  youtube.failNext(100_000, 'hang');
  wayback.failNext(100_000, 'hang');
});

afterAll(async () => {
  await stack?.close();
  await youtube?.close();
  await wayback?.close();
  await db?.drop();
});

const search = (query: string) =>
  api.call('/api/search', { method: 'POST', key, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ query }) });

describe('when no source answers at all', () => {
  it('answers a search of an unknown channel with 503 once the wait budget is spent', async () => {
    const response = await search(fakeChannelId('silent-unknown'));
    expect(response.status).toBe(503);
    expect(response.body.error.code).toBe('SERVICE_UNAVAILABLE');
    expect(response.body.error.message).toContain('youtube_api gave no answer for 1 s');
    expect(response.body.error.message).toContain('wayback gave no answer for 1 s');
  });

  it('ends the stream of a known channel with search:error naming every source', async () => {
    const started = await search(knownChannel);
    expect(started.status).toBe(200);
    const { events, ended } = await readStream(`${api.url}${started.body.data.sseEndpointUrl}`, { key, timeoutMs: 25_000 });
    expect(ended).toBe(true);
    const last = events.at(-1)!;
    expect(last.event).toBe('search:error');
    expect(last.data).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      // By source name.
      failedSources: [
        { source: 'wayback', error: 'wayback gave no answer for 1 s' },
        { source: 'youtube_api', error: 'youtube_api gave no answer for 1 s' },
      ],
    });
    // Each source's step went on to the next one instead of failing the job for a retry later.
    const jobs = await db.sql`
      select j.attempts from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
      where t.identifier = 'crawl_channel' and j.attempts > 1`;
    expect(jobs).toHaveLength(0);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changeSchema, type Change } from '../../core/watchlists/change.ts';
import { watchlistStream } from '../../core/watchlists/watchlistEvents.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { expectError } from '../support/http-helpers.ts';
import { connectMcp, textOf } from '../mcp/support.ts';
import { addJob, runJobsOnce } from '../support/jobs.ts';
import { readStream, type ReceivedEvent } from '../support/sse.ts';
import {
  deleteVideos,
  fanOut,
  insertChannel,
  insertVideos,
  insertWatchlist,
  restoreVideo,
  retitleVideo,
  watchChannel,
  watchVideo,
} from './logFixtures.ts';

let db: TestDatabase;
let api: TestApi;
let owner: Awaited<ReturnType<typeof createKeyedUser>>;
let stranger: Awaited<ReturnType<typeof createKeyedUser>>;

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(db.sql);
  owner = await createKeyedUser(db.sql, { tier: 'pro' });
  stranger = await createKeyedUser(db.sql, { tier: 'pro' });
});
afterAll(async () => {
  await api?.close();
  await db?.drop();
});

const streamEvents = (watchlistId: string) =>
  db.sql<{ id: string; type: string; payload: Change }[]>`
    select id::text, type, payload from events where stream = ${watchlistStream(watchlistId)} order by seq`;

describe('the fan-out of the change log', () => {
  it('appends each change to the streams of the watchlists that watch it, from the moment they watch it, once', async () => {
    const channel = await insertChannel(db.sql);
    const other = await insertChannel(db.sql);
    const [gone, retitled, elsewhere] = [
      ...(await insertVideos(db.sql, channel, ['Gone soon', 'Old title'])),
      ...(await insertVideos(db.sql, other, ['Not watched'])),
    ];
    const byChannel = await insertWatchlist(db.sql, owner.user.id);
    const byVideo = await insertWatchlist(db.sql, owner.user.id);
    await watchChannel(db.sql, byChannel, channel);
    await watchVideo(db.sql, byVideo, gone!);
    await watchVideo(db.sql, byVideo, retitled!);
    const changeCount = async () => (await db.sql<{ count: number }[]>`select count(*)::int as count from changes`)[0]!.count;
    const before = await changeCount();

    await deleteVideos(db.sql, [gone!, elsewhere!], 'copyright', 'Example Records');
    await retitleVideo(db.sql, retitled!, 'New title');
    // The job the changes trigger queued runs the fan-out.
    await runJobsOnce(db.url, db.sql);

    expect((await changeCount()) - before).toBe(3);
    for (const watchlist of [byChannel, byVideo]) {
      const events = await streamEvents(watchlist);
      expect(events.map((event) => [event.type, event.payload.videoId])).toEqual([
        ['video.deleted', gone],
        ['video.metadata_changed', retitled],
      ]);
      for (const event of events) changeSchema.parse(event.payload);
      expect(events[0]!.payload.status).toMatchObject({
        status: 'deleted',
        previousStatus: 'live',
        reason: 'copyright',
        reasonText: 'removed after a copyright claim',
        claimant: 'Example Records',
      });
      expect(events[0]!.payload.evidence?.text).toContain('player:');
      expect(events[1]!.payload.metadata).toMatchObject({
        changed: ['title'],
        before: { title: 'Old title' },
        after: { title: 'New title' },
      });
    }
    expect(await db.sql`select 1 from change_fanout_queue`).toHaveLength(0);

    // A watchlist that starts watching later is not told of the past; nothing is fanned out twice.
    const late = await insertWatchlist(db.sql, owner.user.id);
    await watchChannel(db.sql, late, channel);
    await fanOut(db.sql);
    expect(await streamEvents(late)).toHaveLength(0);
    expect(await streamEvents(byChannel)).toHaveLength(2);
  });

  it("tells a saved query's new match to that query's watchers, not to every watcher of the channel", async () => {
    const channel = await insertChannel(db.sql);
    const [video] = await insertVideos(db.sql, channel, ['About cats']);
    const [query] = await db.sql<{ id: string }[]>`insert into saved_queries (query) values ('{"q": "cats"}') returning id::text`;
    const byQuery = await insertWatchlist(db.sql, owner.user.id);
    const byChannel = await insertWatchlist(db.sql, owner.user.id);
    await db.sql`insert into watchlist_items (watchlist_id, kind, saved_query_id) values (${byQuery}, 'query', ${query!.id})`;
    await watchChannel(db.sql, byChannel, channel);
    await db.sql`insert into changes (kind, video_id, channel_id, saved_query_id, happened_at, details)
      values ('query.new_match', ${video!}, ${channel}, ${query!.id}, now(), '{"title": "About cats"}')`;
    await fanOut(db.sql);
    expect((await streamEvents(byQuery)).map((event) => [event.type, event.payload.savedQueryId])).toEqual([
      ['query.new_match', query!.id],
    ]);
    expect(await streamEvents(byChannel)).toEqual([]);
  });

  it('queues a webhook delivery and its job per enabled endpoint, in the same transaction', async () => {
    const channel = await insertChannel(db.sql);
    const [video] = await insertVideos(db.sql, channel, ['Hooked']);
    const watchlist = await insertWatchlist(db.sql, owner.user.id);
    await watchChannel(db.sql, watchlist, channel);
    const [enabled] = await db.sql<{ id: string }[]>`
      insert into webhook_endpoints (watchlist_id, url, secret_sealed) values (${watchlist}, 'http://127.0.0.1:9/a', '\\x00') returning id::text`;
    await db.sql`
      insert into webhook_endpoints (watchlist_id, url, secret_sealed, disabled_at, disabled_reason)
      values (${watchlist}, 'http://127.0.0.1:9/b', '\\x00', now(), 'failing for 3 days')`;

    await deleteVideos(db.sql, [video!]);
    await fanOut(db.sql);

    const deliveries = await db.sql<{ endpointId: string; eventType: string; messageId: string; changeId: string }[]>`
      select d.endpoint_id::text as "endpointId", d.event_type as "eventType", d.message_id as "messageId", d.change_id::text as "changeId"
      from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id where e.watchlist_id = ${watchlist}`;
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ endpointId: enabled!.id, eventType: 'video.deleted' });
    expect(deliveries[0]!.messageId).toMatch(/^msg_[A-Za-z0-9_-]{22}$/);
    const [event] = await streamEvents(watchlist);
    expect(event!.payload.id).toBe(deliveries[0]!.changeId);
    const [{ shard }] = await db.sql<[{ shard: number }]>`select delivery_shard as shard from webhook_endpoints where id = ${enabled!.id}`;
    const jobs = await db.sql<{ payload: unknown }[]>`
      select payload from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
      where t.identifier = 'deliver_webhooks' and j.key = ${`deliver_webhooks:${shard}`}`;
    expect(jobs.map((job) => job.payload)).toEqual([{ shard }]);
  });
});

describe('GET /api/watchlists/:id/changes', () => {
  let watchlist: string;
  let expected: string[];

  beforeAll(async () => {
    const channel = await insertChannel(db.sql);
    const videos = await insertVideos(db.sql, channel, ['One', 'Two', 'Three', 'Four', 'Five']);
    watchlist = await insertWatchlist(db.sql, owner.user.id);
    await watchChannel(db.sql, watchlist, channel);
    await deleteVideos(db.sql, videos.slice(0, 3));
    await restoreVideo(db.sql, videos[0]!);
    await retitleVideo(db.sql, videos[3]!, 'Four, renamed');
    await deleteVideos(db.sql, [videos[4]!], 'private');
    await fanOut(db.sql);
    const rows = await db.sql<{ id: string }[]>`select id::text from changes where channel_id = ${channel} order by changes.id desc`;
    expected = rows.map((row) => row.id);
  });

  it('pages newest first with a working cursor', async () => {
    expect(expected).toHaveLength(6);
    const seen: Change[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const response = await api.call(`/api/watchlists/${watchlist}/changes?limit=4${query}`, { key: owner.key });
      expect(response.status).toBe(200);
      seen.push(...response.body.data.items);
      cursor = response.body.data.nextCursor;
    } while (cursor);
    expect(seen.map((change) => change.id)).toEqual(expected);
    expect(seen.map((change) => change.type)).toEqual([
      'video.deleted',
      'video.metadata_changed',
      'video.restored',
      'video.deleted',
      'video.deleted',
      'video.deleted',
    ]);
    expect(seen[2]!.status).toMatchObject({ status: 'live', previousStatus: 'deleted' });

    const whole = await api.call(`/api/watchlists/${watchlist}/changes`, { key: owner.key });
    expect(whole.body.data.items.map((change: Change) => change.id)).toEqual(expected);
    expect(whole.body.data.nextCursor).toBeNull();
  });

  it('refuses a cursor it did not make, and another owner, anonymous callers and a missing watchlist alike', async () => {
    expectError(await api.call(`/api/watchlists/${watchlist}/changes?cursor=abc`, { key: owner.key }), 400, 'INVALID_INPUT');
    expectError(await api.call(`/api/watchlists/${watchlist}/changes?limit=101`, { key: owner.key }), 400, 'INVALID_INPUT');
    expectError(await api.call(`/api/watchlists/${watchlist}/changes`, { key: stranger.key }), 404, 'NOT_FOUND');
    expectError(await api.call(`/api/watchlists/${crypto.randomUUID()}/changes`, { key: owner.key }), 404, 'NOT_FOUND');
    expectError(await api.call(`/api/watchlists/not-a-uuid/changes`, { key: owner.key }), 404, 'NOT_FOUND');
    expectError(await api.call(`/api/watchlists/${watchlist}/changes`), 401, 'API_KEY_REQUIRED');
  });

  it("keeps the watchlist's stream past the events' 7-day retention: it is the list", async () => {
    await db.sql`update events set created_at = now() - interval '8 days' where stream = ${watchlistStream(watchlist)}`;
    await addJob(db.sql, 'cleanup');
    await runJobsOnce(db.url, db.sql);
    const response = await api.call(`/api/watchlists/${watchlist}/changes`, { key: owner.key });
    expect(response.body.data.items.map((change: Change) => change.id)).toEqual(expected);
  });

  it('the watchlist_changes tool pages the same list, and another owner is not found', async () => {
    const mcp = await connectMcp(api.url, owner.key);
    const first = await mcp.callTool({ name: 'watchlist_changes', arguments: { watchlistId: watchlist, limit: 5 } });
    const data = first.structuredContent as { items: Change[]; nextCursor: string };
    expect(data.items.map((change) => change.id)).toEqual(expected.slice(0, 5));
    const rest = await mcp.callTool({ name: 'watchlist_changes', arguments: { watchlistId: watchlist, cursor: data.nextCursor } });
    expect((rest.structuredContent as { items: Change[] }).items.map((change) => change.id)).toEqual(expected.slice(5));
    await mcp.close();
    const theirs = await connectMcp(api.url, stranger.key);
    const refused = await theirs.callTool({ name: 'watchlist_changes', arguments: { watchlistId: watchlist } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('NOT_FOUND');
    await theirs.close();
  });
});

describe('GET /api/watchlists/:id/stream', () => {
  it('delivers changes live from when it opens, and resumes after Last-Event-ID without repeats', async () => {
    const channel = await insertChannel(db.sql);
    const videos = await insertVideos(db.sql, channel, ['A', 'B', 'C', 'D']);
    const watchlist = await insertWatchlist(db.sql, owner.user.id);
    await watchChannel(db.sql, watchlist, channel);
    // Before the stream opens: the list's, not the stream's.
    await deleteVideos(db.sql, [videos[0]!]);
    await fanOut(db.sql);

    const url = `${api.url}/api/watchlists/${watchlist}/stream`;
    const live = await readStream(url, {
      key: owner.key,
      onComment: (comment) => {
        if (comment.trim() === 'connected') void deleteVideos(db.sql, [videos[1]!]).then(() => fanOut(db.sql));
      },
      onEvent: (event) => {
        if (event.data.videoId === videos[1]) void retitleVideo(db.sql, videos[2]!, 'C, renamed').then(() => fanOut(db.sql));
      },
      until: (_event, all) => all.length === 2,
    });
    expect(live.status).toBe(200);
    expect(live.events.map((event) => [event.event, event.data.videoId])).toEqual([
      ['video.deleted', videos[1]],
      ['video.metadata_changed', videos[2]],
    ]);
    for (const event of live.events) changeSchema.parse(event.data);

    // Missed while away: exactly what came after the last event received.
    await deleteVideos(db.sql, [videos[3]!]);
    await fanOut(db.sql);
    const resumed = await readStream(url, {
      key: owner.key,
      lastEventId: live.events[0]!.id!,
      until: (_event, all) => all.length === 2,
      timeoutMs: 10_000,
    });
    expect(resumed.events.map((event: ReceivedEvent) => event.data.videoId)).toEqual([videos[2], videos[3]]);
    expect(resumed.events[0]!.id).toBe(live.events[1]!.id);
  });

  it('answers 404 to another owner and 400 to an id of another stream', async () => {
    const watchlist = await insertWatchlist(db.sql, owner.user.id);
    const url = `${api.url}/api/watchlists/${watchlist}/stream`;
    expect((await readStream(url, { key: stranger.key, timeoutMs: 5_000 })).status).toBe(404);
    const [latest] = await db.sql<{ id: string }[]>`select max(id)::text as id from events`;
    expect((await readStream(url, { key: owner.key, lastEventId: latest!.id, timeoutMs: 5_000 })).status).toBe(400);
  });

  it("opens with a stream token, as a browser's EventSource does", async () => {
    const watchlist = await insertWatchlist(db.sql, owner.user.id);
    const minted = await api.call('/api/stream-tokens', {
      key: owner.key,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ stream: `/api/watchlists/${watchlist}/stream` }),
    });
    expect(minted.status).toBe(201);
    const controller = new AbortController();
    const response = await fetch(`${api.url}${minted.body.data.url}`, { signal: controller.signal });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    controller.abort();
  });
});

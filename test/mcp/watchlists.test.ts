import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { addVideos, channelIdFor, videoIdFor } from '../support/subtitles.ts';
import { connectMcp, textOf } from './support.ts';

let db: TestDatabase;
let api: TestApi;
let owner: { key: string; client: Client };
let other: { key: string; client: Client };
const videoId = videoIdFor('mcp-watched');

beforeAll(async () => {
  db = await createTestDatabase();
  await updateTier(db.sql, 'pro', { limits: { requestsPerMinute: 100_000 } });
  api = await startTestApi(db.sql);
  await addVideos(db.sql, channelIdFor('mcp-watched'), [{ videoId, title: 'Watched over MCP' }]);
  const connect = async (options: Parameters<typeof createKeyedUser>[1] = {}) => {
    const { key } = await createKeyedUser(db.sql, options);
    return { key, client: await connectMcp(api.url, key) };
  };
  owner = await connect();
  other = await connect();
}, 60_000);

afterAll(async () => {
  await owner?.client.close();
  await other?.client.close();
  await api?.close();
  await db?.drop();
});

/** A tool's structured answer; fails with its text when the call was refused. */
async function tool(client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, textOf(result)).toBeFalsy();
  return result.structuredContent;
}

describe('watchlist tools', () => {
  it('are listed with their hints: reads read-only, deletions destructive', async () => {
    const { tools } = await owner.client.listTools();
    const hints = Object.fromEntries(
      tools.filter((t) => t.name.includes('watchlist')).map((t) => [t.name, [t.annotations?.readOnlyHint, t.annotations?.destructiveHint]]),
    );
    expect(hints).toEqual({
      list_watchlists: [true, false],
      get_watchlist: [true, false],
      create_watchlist: [false, false],
      add_to_watchlist: [false, false],
      remove_from_watchlist: [false, true],
      delete_watchlist: [false, true],
    });
  });

  it('create, add (again: the same item), get, list, remove and delete: the same watchlist REST shows', async () => {
    const created = await tool(owner.client, 'create_watchlist', { name: ' Over MCP ' });
    expect(created).toMatchObject({ name: 'Over MCP', items: [] });
    const rest = await api.call(`/api/watchlists/${created.id}`, { key: owner.key });
    expect(rest.body.data.feedUrl).toBe(created.feedUrl);

    const video = await tool(owner.client, 'add_to_watchlist', { watchlistId: created.id, item: { kind: 'video', videoId } });
    expect(video).toMatchObject({ created: true, item: { kind: 'video', videoId, label: 'Watched over MCP' } });
    const again = await owner.client.callTool({
      name: 'add_to_watchlist',
      arguments: { watchlistId: created.id, item: { kind: 'video', videoId } },
    });
    expect(again.structuredContent).toEqual({ created: false, item: video.item });
    expect(textOf(again)).toMatch(/^Already watched/);
    const query = await tool(owner.client, 'add_to_watchlist', {
      watchlistId: created.id,
      item: { kind: 'query', q: 'lathe  restoration', in: 'subtitles' },
    });
    expect(query.item.query).toEqual({ q: 'lathe restoration', in: 'subtitles' });

    const read = await owner.client.callTool({ name: 'get_watchlist', arguments: { watchlistId: created.id } });
    expect(read.structuredContent).toEqual((await api.call(`/api/watchlists/${created.id}`, { key: owner.key })).body.data);
    expect(textOf(read)).toContain(created.feedUrl);
    expect((await tool(owner.client, 'list_watchlists', {})).watchlists).toEqual([
      expect.objectContaining({ id: created.id, name: 'Over MCP', itemCount: 2 }),
    ]);

    expect(await tool(owner.client, 'remove_from_watchlist', { watchlistId: created.id, itemId: video.item.id })).toEqual({
      id: video.item.id,
      deleted: true,
    });
    expect(await tool(owner.client, 'delete_watchlist', { watchlistId: created.id })).toEqual({ id: created.id, deleted: true });
    expect((await tool(owner.client, 'list_watchlists', {})).watchlists).toEqual([]);
  });

  it("another user's watchlist is NOT_FOUND to every tool; refusals are isError results", async () => {
    const mine = await tool(owner.client, 'create_watchlist', { name: 'Mine' });
    const usage = await owner.client.callTool({ name: 'get_usage', arguments: {} });
    expect(usage.structuredContent).toMatchObject({ allowances: { watchlists: { max: 100, held: 1, remaining: 99 } } });
    expect(textOf(usage)).toContain('- watchlists: 1 held of 100, 99 more allowed');
    for (const [name, args] of [
      ['get_watchlist', { watchlistId: mine.id }],
      ['add_to_watchlist', { watchlistId: mine.id, item: { kind: 'video', videoId } }],
      ['remove_from_watchlist', { watchlistId: mine.id, itemId: mine.id }],
      ['delete_watchlist', { watchlistId: mine.id }],
    ] as const) {
      const refused = await other.client.callTool({ name, arguments: args });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/^NOT_FOUND: no watchlist/);
    }
    const notStored = await owner.client.callTool({
      name: 'add_to_watchlist',
      arguments: { watchlistId: mine.id, item: { kind: 'video', videoId: videoIdFor('mcp-unknown') } },
    });
    expect(textOf(notStored)).toMatch(/^NOT_FOUND: .*search its channel first/);
    const hostile = await owner.client.callTool({ name: 'create_watchlist', arguments: { name: 'bad\u202Ename' } });
    expect(hostile.isError).toBe(true);

    const l1 = await createKeyedUser(db.sql, { scope: 'L1' });
    const reader = await connectMcp(api.url, l1.key);
    expect((await reader.callTool({ name: 'list_watchlists', arguments: {} })).isError).toBeFalsy();
    const refused = await reader.callTool({ name: 'create_watchlist', arguments: { name: 'x' } });
    expect(textOf(refused)).toMatch(/^FORBIDDEN: the create_watchlist tool needs an API key with L2\+ scope/);
    await reader.close();
  });
});

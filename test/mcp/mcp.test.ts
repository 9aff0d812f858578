import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unzipSync } from 'fflate';
import { recordObservations } from '../../core/status/recordObservations.ts';
import { sha256Hex } from '../../core/status/keepObservations.ts';
import { refreshTranscript } from '../../core/subtitles/transcript.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { startSearchStack } from '../support/stack.ts';
import { addTrack, addVideos, channelIdFor, videoIdFor, vttOf } from '../support/subtitles.ts';
import { connectMcp, contentText, textOf } from './support.ts';

let db: TestDatabase;
let stack: Awaited<ReturnType<typeof startSearchStack>>;
let client: Client;
let key: string;
const channelId = channelIdFor('mcp');
const v = { talk: videoIdFor('mcp-talk'), other: videoIdFor('mcp-other'), steno: videoIdFor('mcp-steno'), bare: videoIdFor('mcp-bare') };
const LINES = [
  '>> Welcome to the workshop.',
  'Today we restore an old lathe.',
  'The spindle bearings are worn.',
  '>> Can you show the gears?',
  'Yes, the gears are fine.',
  'We oil everything and switch it on.',
];

async function addTranscript(videoId: string) {
  await addTrack(db.sql, { videoId, language: 'en', kind: 'manual', text: vttOf(LINES, 4) });
  await db.sql.begin((tx) => refreshTranscript(tx, videoId));
}

beforeAll(async () => {
  db = await createTestDatabase();
  await updateTier(db.sql, 'pro', {
    limits: { requestsPerMinute: 100_000, apiStenogramsPerDay: 100, subtitleDownloadsPerDay: 1000, ftsQueriesPerMinute: 1000 },
  });
  stack = await startSearchStack(db, {});
  key = (await createKeyedUser(db.sql)).key;
  await addVideos(
    db.sql,
    channelId,
    [
      { videoId: v.talk, title: 'Restoring an old lathe' },
      { videoId: v.other, title: 'Sharpening chisels' },
      { videoId: v.steno, title: 'Fixing a radio' },
      { videoId: v.bare, title: 'No subtitles here' },
    ],
    'MCP Workshop',
  );
  for (const id of [v.talk, v.other, v.steno]) await addTranscript(id);
  client = await connectMcp(stack.api.url, key);
}, 60_000);

afterAll(async () => {
  await client?.close();
  await stack?.close();
  await db?.drop();
});

describe('MCP server at /mcp', () => {
  it('lists every tool with input and output schemas and read-only hints', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([
      'search_channel',
      'search_videos',
      'get_video',
      'get_subtitles',
      'get_summary',
      'generate_summary',
      'browse_summaries',
      'get_video_status_history',
      'get_evidence',
      'get_usage',
      'generate_stenogram',
      'list_watchlists',
      'get_watchlist',
      'create_watchlist',
      'add_to_watchlist',
      'remove_from_watchlist',
      'delete_watchlist',
      'watchlist_changes',
      'list_webhooks',
      'webhook_deliveries',
      'test_webhook',
    ]);
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
    }
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    expect(byName.get_video!.annotations?.readOnlyHint).toBe(true);
    expect(byName.generate_summary!.annotations?.readOnlyHint).toBe(false);
    expect(Object.keys(byName.search_videos!.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['q', 'page', 'pageSize', 'status', 'hasVideo', 'hasSubtitles', 'hasSummary', 'sort', 'in']),
    );
  });

  it('get_video, get_video_status_history, get_usage', async () => {
    const video = await client.callTool({ name: 'get_video', arguments: { videoId: v.talk } });
    expect(video.isError).toBeFalsy();
    expect(video.structuredContent).toMatchObject({ videoId: v.talk, title: 'Restoring an old lathe', channelId, hasSubtitles: true });
    const missing = await client.callTool({ name: 'get_video', arguments: { videoId: videoIdFor('nowhere') } });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/^NOT_FOUND/);
    const history = await client.callTool({ name: 'get_video_status_history', arguments: { videoId: v.talk } });
    expect(history.structuredContent).toMatchObject({ videoId: v.talk, current: { status: 'live' } });
    const usage = await client.callTool({ name: 'get_usage', arguments: {} });
    expect(usage.structuredContent).toMatchObject({ tier: { name: 'pro' }, limits: { apiStenogramsPerDay: { max: 100 } } });
  });

  it('get_evidence: the kept answers, the manifest hash a download has, counted like the download', async () => {
    const body = Buffer.from(JSON.stringify({ kind: 'youtube#videoListResponse', items: [] }));
    const answer = { url: 'https://www.googleapis.com/youtube/v3/videos?id=x&key=***', status: 200, contentType: 'application/json', body };
    await db.sql.begin(async (tx) =>
      recordObservations(
        tx,
        [
          {
            videoId: v.other,
            outcome: 'gone',
            reason: 'unknown',
            source: 'youtube_api',
            evidence: 'videos.list did not return it',
            answer: { ...answer, answeredAt: new Date() },
          },
        ],
        { confirmMinutes: 60, recheckDays: 30 },
      ),
    );
    const downloads = async () =>
      (
        (await client.callTool({ name: 'get_usage', arguments: {} })).structuredContent as {
          limits: { subtitleDownloadsPerDay: { used: number } };
        }
      ).limits.subtitleDownloadsPerDay.used;
    const before = await downloads();
    const evidence = await client.callTool({ name: 'get_evidence', arguments: { videoId: v.other } });
    expect(evidence.isError).toBeFalsy();
    const data = evidence.structuredContent as {
      manifestSha256: string;
      bundleUrl: string;
      history: { videoId: string };
      observations: Array<{ source: string; httpStatus: number; bodySha256: string; decided: string }>;
      keptObservations: number;
    };
    expect(await downloads()).toBe(before + 1);
    expect(data.observations).toEqual([
      expect.objectContaining({ source: 'youtube_api', httpStatus: 200, bodySha256: sha256Hex(body), decided: 'suspected' }),
    ]);
    expect(data.keptObservations).toBe(1);
    expect(data.history).toEqual((await stack.api.call(`/api/videos/${v.other}/status-history`, { key })).body.data);
    expect(data.bundleUrl).toBe(`${stack.api.url}/api/videos/${v.other}/evidence`);
    const bundle = unzipSync(new Uint8Array(await (await fetch(data.bundleUrl, { headers: { 'X-API-Key': key } })).arrayBuffer()));
    expect(Buffer.from(bundle['README.txt']!).toString().split('\n')[0]).toBe(data.manifestSha256);
    expect(textOf(evidence)).toContain(data.manifestSha256);
    const missing = await client.callTool({ name: 'get_evidence', arguments: { videoId: videoIdFor('nowhere') } });
    expect(textOf(missing)).toMatch(/^NOT_FOUND/);
  });

  it('search_videos in titles and in subtitles, charged like GET /api/fts', async () => {
    const hits = await client.callTool({ name: 'search_videos', arguments: { q: 'lathe' } });
    expect(hits.isError).toBeFalsy();
    expect((hits.structuredContent as { videos: Array<{ videoId: string }> }).videos.map((video) => video.videoId)).toEqual([v.talk]);
    const said = await client.callTool({
      name: 'search_videos',
      arguments: { q: 'spindle bearings', in: 'subtitles', hasSubtitles: true, sort: 'date-desc', pageSize: 10 },
    });
    const result = said.structuredContent as { in: string; videos: Array<{ videoId: string; cues: unknown[] }> };
    expect(result.in).toBe('subtitles');
    expect(result.videos.length).toBe(3);
    expect(result.videos[0]!.cues.length).toBeGreaterThan(0);
    const usage = await client.callTool({ name: 'get_usage', arguments: {} });
    expect((usage.structuredContent as { limits: { ftsQueriesPerMinute: { used: number } } }).limits.ftsQueriesPerMinute.used).toBe(2);
  });

  it('get_subtitles as timestamped text, paged', async () => {
    const first = await client.callTool({ name: 'get_subtitles', arguments: { videoId: v.talk, pageSize: 50 } });
    expect(first.structuredContent).toMatchObject({ videoId: v.talk, track: { language: 'en', kind: 'manual' }, page: 1, totalPages: 1 });
    expect((first.structuredContent as { text: string }).text).toContain('[0:04] Today we restore an old lathe.');
    const none = await client.callTool({ name: 'get_subtitles', arguments: { videoId: v.bare } });
    expect(none.isError).toBe(true);
  });

  it('bounds integer arguments to what their columns hold: a refused argument, never an internal error', async () => {
    for (const [name, args] of [
      ['get_subtitles', { videoId: v.talk, version: 2_147_483_648 }],
      ['browse_summaries', { page: 2_147_483_648 }],
    ] as const) {
      const answer = await client
        .callTool({ name, arguments: args })
        .catch((error: Error) => ({ isError: true, content: [{ type: 'text', text: error.message }] }));
      expect(answer.isError).toBe(true);
      expect(textOf(answer as Parameters<typeof textOf>[0])).not.toMatch(/INTERNAL|out of range/i);
    }
  });

  it('refuses text Postgres cannot store in any argument as REST does (INVALID_INPUT naming it), never an internal error', async () => {
    const nul = await client.callTool({ name: 'browse_summaries', arguments: { tag: '\u0000' } });
    expect(nul.isError).toBe(true);
    expect(textOf(nul)).toBe('INVALID_INPUT: tag: must not contain a NUL character (U+0000) or an unpaired surrogate');
    const surrogate = await client.callTool({ name: 'search_videos', arguments: { q: 'lathe\ud800' } });
    expect(textOf(surrogate)).toMatch(/^INVALID_INPUT: q: must not contain/);
  });

  it('search_channel starts a crawl and answers what is stored now with the session id', async () => {
    const result = await client.callTool({ name: 'search_channel', arguments: { query: channelId } });
    expect(result.isError).toBeFalsy();
    const data = result.structuredContent as { searchSessionId: string; channelId: string; storedVideos: number; videos: unknown[] };
    expect(data.channelId).toBe(channelId);
    expect(data.storedVideos).toBe(4);
    expect(data.videos).toHaveLength(4);
    expect(data.searchSessionId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("generate_summary forwards the job's progress and answers the summary; get_summary and browse_summaries read it", async () => {
    const progress: number[] = [];
    const result = await client.callTool({ name: 'generate_summary', arguments: { videoId: v.talk } }, undefined, {
      onprogress: (update) => progress.push(update.progress),
      timeout: 60_000,
    });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ videoId: v.talk, status: 'generated' });
    expect(progress.length).toBeGreaterThan(0);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    const read = await client.callTool({ name: 'get_summary', arguments: { videoId: v.talk } });
    expect(read.structuredContent).toMatchObject({ videoId: v.talk, status: 'generated' });
    const browse = await client.callTool({ name: 'browse_summaries', arguments: { channelId } });
    expect((browse.structuredContent as { items: Array<{ videoId: string }> }).items.map((item) => item.videoId)).toContain(v.talk);
    const noTranscript = await client.callTool({ name: 'generate_summary', arguments: { videoId: v.bare } });
    expect(noTranscript.isError).toBe(true);
    expect(textOf(noTranscript)).toMatch(/^TRANSCRIPT_REQUIRED/);
  }, 60_000);

  it('generate_summary without a progress token answers at once with status generating', async () => {
    const result = await client.callTool({ name: 'generate_summary', arguments: { videoId: v.other } });
    expect((result.structuredContent as { status: string }).status).toMatch(/generating|ready/);
  });

  it('reads every resource template and lists the listable ones', async () => {
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((template) => template.uriTemplate).sort()).toEqual([
      'tube://channel/{channelId}',
      'tube://subtitles/{videoId}',
      'tube://summary/{videoId}',
      'tube://video/{videoId}',
    ]);
    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.uri)).toEqual(
      expect.arrayContaining(['tube://tags', `tube://summary/${v.talk}`, `tube://channel/${channelId}`]),
    );
    const video = await client.readResource({ uri: `tube://video/${v.talk}` });
    expect(JSON.parse(contentText(video))).toMatchObject({ videoId: v.talk });
    expect(video.contents[0]!.mimeType).toBe('application/json');
    const channel = await client.readResource({ uri: `tube://channel/${channelId}` });
    expect(JSON.parse(contentText(channel))).toMatchObject({ channelId, storedVideos: 4 });
    const subtitles = await client.readResource({ uri: `tube://subtitles/${v.talk}` });
    expect(subtitles.contents[0]!.mimeType).toBe('text/plain');
    expect(contentText(subtitles)).toContain('[0:08] The spindle bearings are worn.');
    const summary = await client.readResource({ uri: `tube://summary/${v.talk}` });
    expect(JSON.parse(contentText(summary))).toMatchObject({ videoId: v.talk, status: 'generated' });
    const tags = await client.readResource({ uri: 'tube://tags' });
    expect(JSON.parse(contentText(tags)).tags.length).toBeGreaterThan(0);
    await expect(client.readResource({ uri: `tube://video/${videoIdFor('nowhere')}` })).rejects.toThrow(/NOT_FOUND/);
  });

  it('gets every prompt with its arguments', async () => {
    const { prompts } = await client.listPrompts();
    expect(prompts.map((prompt) => prompt.name)).toEqual(['research_video', 'channel_overview', 'find_deleted']);
    const research = await client.getPrompt({
      name: 'research_video',
      arguments: { videoId: v.talk, question: 'Which bearings are worn?' },
    });
    expect(research.messages[0]!.content).toMatchObject({ type: 'text', text: expect.stringContaining('get_subtitles') });
    expect(JSON.stringify(research)).toContain('Which bearings are worn?');
    const overview = await client.getPrompt({ name: 'channel_overview', arguments: { channel: '@workshop' } });
    expect(JSON.stringify(overview)).toContain('search_channel with query \\"@workshop\\"');
    const deleted = await client.getPrompt({ name: 'find_deleted', arguments: { topic: 'lathe' } });
    expect(JSON.stringify(deleted)).toContain('status \\"deleted\\"');
  });

  it('shares apiStenogramsPerDay with POST /api/stenograms/:videoId/generate', async () => {
    const user = await createKeyedUser(db.sql);
    await updateTier(db.sql, 'pro', { limits: { apiStenogramsPerDay: 1 } });
    try {
      const rest = await fetch(`${stack.api.url}/api/stenograms/${v.steno}/generate`, {
        method: 'POST',
        headers: { 'X-API-Key': user.key },
      });
      expect(rest.status).toBe(200);
      await rest.body?.cancel();
      const mcp = await connectMcp(stack.api.url, user.key);
      const refused = await mcp.callTool({ name: 'generate_stenogram', arguments: { videoId: v.talk } });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/^RATE_LIMITED: Limit reached: 1 .*\(apiStenogramsPerDay\); resets at \d{4}-\d\d-\d\dT00:00:00Z/);
      await mcp.close();
    } finally {
      await updateTier(db.sql, 'pro', { limits: { apiStenogramsPerDay: 100 } });
    }
  });

  it('generate_stenogram waits for the Markdown with a progress token', async () => {
    const progress: number[] = [];
    const result = await client.callTool({ name: 'generate_stenogram', arguments: { videoId: v.other } }, undefined, {
      onprogress: (update) => progress.push(update.progress),
      timeout: 60_000,
    });
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    expect((result.structuredContent as { markdown: string }).markdown).toContain('lathe');
    const again = await client.callTool({ name: 'generate_stenogram', arguments: { videoId: v.other } });
    expect(textOf(again)).toMatch(/^STENOGRAM_CONFLICT/);
  }, 60_000);

  it('a used-up quota is a tool result with isError naming the limit and its reset, not a protocol error', async () => {
    const user = await createKeyedUser(db.sql);
    await updateTier(db.sql, 'pro', { limits: { ftsQueriesPerMinute: 1 } });
    try {
      const mcp = await connectMcp(stack.api.url, user.key);
      expect((await mcp.callTool({ name: 'search_videos', arguments: { q: 'lathe' } })).isError).toBeFalsy();
      const refused = await mcp.callTool({ name: 'search_videos', arguments: { q: 'bearings' } });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/RATE_LIMITED: Limit reached: 1 .* per minute \(ftsQueriesPerMinute\); resets at .* \(in \d+ s\)/);
      await mcp.close();
    } finally {
      await updateTier(db.sql, 'pro', { limits: { ftsQueriesPerMinute: 1000 } });
    }
  });

  it('scope and feature refusals are isError results', async () => {
    const l1 = await createKeyedUser(db.sql, { scope: 'L1' });
    const mcp = await connectMcp(stack.api.url, l1.key);
    const refused = await mcp.callTool({ name: 'generate_summary', arguments: { videoId: v.talk } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^FORBIDDEN: the generate_summary tool needs an API key with L2\+ scope/);
    await mcp.close();
  });
});

describe('/mcp over HTTP', () => {
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
  };
  const post = (headers: Record<string, string>, body: unknown = initialize) =>
    fetch(`${stack.api.url}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(body),
    });

  it('401 with WWW-Authenticate without a key or with a bad one', async () => {
    const none = await post({});
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const bad = await post({ Authorization: `Bearer tsk_${'x'.repeat(48)}` });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_token"/);
  });

  it('400 when X-API-Key and Authorization: Bearer name different keys; the same key in both is accepted', async () => {
    const other = await createKeyedUser(db.sql, { tier: 'pro' });
    const conflicting = await post({ 'X-API-Key': key, Authorization: `Bearer ${other.key}` });
    expect(conflicting.status).toBe(400);
    expect((await conflicting.json()).error.message).toMatch(/^INVALID_INPUT: X-API-Key and Authorization: Bearer name different API keys/);
    expect((await post({ 'X-API-Key': key, Authorization: `Bearer ${key}` })).status).toBe(200);
  });

  it('403 for a tier without API access, and for a browser origin not allowed', async () => {
    const plus = await createKeyedUser(db.sql, { tier: 'registered' });
    expect((await post({ 'X-API-Key': plus.key })).status).toBe(403);
    expect((await post({ 'X-API-Key': key, Origin: 'https://evil.example' })).status).toBe(403);
    expect((await post({ 'X-API-Key': key, Origin: stack.api.url })).status).toBe(200);
  });

  it('answers initialize as JSON with X-API-Key too; GET and DELETE are 405 (stateless)', async () => {
    const response = await post({ 'X-API-Key': key });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ result: { serverInfo: { name: 'afterimage' } } });
    expect(response.headers.get('mcp-session-id')).toBeNull();
    const get = await fetch(`${stack.api.url}/mcp`, { headers: { 'X-API-Key': key, Accept: 'text/event-stream' } });
    expect(get.status).toBe(405);
    expect((await fetch(`${stack.api.url}/mcp`, { method: 'DELETE', headers: { 'X-API-Key': key } })).status).toBe(405);
  });

  it('two API processes over one database both answer (no sticky sessions)', async () => {
    const second: TestApi = await startTestApi(db.sql);
    try {
      const a = await connectMcp(stack.api.url, key);
      const b = await connectMcp(second.url, key);
      expect((await a.callTool({ name: 'get_video', arguments: { videoId: v.talk } })).isError).toBeFalsy();
      expect((await b.callTool({ name: 'get_video', arguments: { videoId: v.talk } })).structuredContent).toMatchObject({
        videoId: v.talk,
      });
      await a.close();
      await b.close();
    } finally {
      await second.close();
    }
  });
});

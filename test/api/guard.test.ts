import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { anonymousSubject, type Caller, guarded } from '../../api/http/guard.ts';
import { AppError, notFound } from '../../core/errors.ts';
import { refreshTranscript } from '../../core/subtitles/transcript.ts';
import { loadTiers } from '../../core/tiers/loadTiers.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import type { Tier } from '../../core/schemas.ts';
import { createKeyedUser, startTestApi, type TestApi } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { fakeSource, generateChannel } from '../support/fake-source.ts';
import { awaitFreshWindow, expectError, requestFrom, restoreTiers, snapshotTiers } from '../support/http-helpers.ts';
import { addTrack, addVideos, channelIdFor, videoIdFor, vttOf } from '../support/subtitles.ts';
import { connectMcp } from '../mcp/support.ts';

let db: TestDatabase;
let api: TestApi;
let defaults: Tier[];
const channelId = channelIdFor('guard');
const videos = {
  rest: videoIdFor('guard-rest'),
  mcp: videoIdFor('guard-mcp'),
  page: videoIdFor('guard-page'),
  subtitles: videoIdFor('guard-subtitles'),
};
const known = generateChannel(3);

beforeAll(async () => {
  db = await createTestDatabase();
  // Every write to a counter is logged with its transaction: the counters' pool autocommits, so one
  // transaction is one statement.
  await db.sql.unsafe(`
    create table charge_log (xid bigint not null, subject uuid not null, limit_name text not null, used int not null);
    create function log_charge() returns trigger language plpgsql as $$
      begin insert into charge_log values (txid_current(), new.subject, new.limit_name, new.used); return new; end $$;
    create trigger log_charge after insert or update on usage_counters for each row execute function log_charge();`);
  api = await startTestApi(db.sql, {}, undefined, {
    sources: [fakeSource({ name: 'archive', channel: known.channel, videos: known.videos })],
  });
  defaults = await snapshotTiers(db.sql);
  await addVideos(
    db.sql,
    channelId,
    Object.values(videos).map((videoId) => ({ videoId, title: `Guard ${videoId}` })),
    'Guard Channel',
  );
  for (const videoId of Object.values(videos)) {
    await addTrack(db.sql, { videoId, language: 'en', kind: 'manual', text: vttOf(['One line.', 'Another line.']) });
    await db.sql.begin((tx) => refreshTranscript(tx, videoId));
  }
}, 60_000);

afterEach(async () => {
  await restoreTiers(db.sql, defaults);
});

afterAll(async () => {
  await api?.close();
  await db?.drop();
});

/** The charges written for a subject, grouped by the statement (transaction) that wrote them. */
async function statementsOf(subject: string): Promise<string[][]> {
  const rows = await db.sql<{ limits: string[] }[]>`
    select array_agg(limit_name order by limit_name) as limits from charge_log where subject = ${subject}::uuid group by xid order by min(xid)`;
  return rows.map((row) => row.limits);
}

/** What a subject's counters hold now, per limit (every bucket). */
async function countersOf(subject: string): Promise<Record<string, number>> {
  const rows = await db.sql<{ limit: string; used: number }[]>`
    select limit_name as limit, sum(used)::int as used from usage_counters where subject = ${subject}::uuid group by limit_name`;
  return Object.fromEntries(rows.map((row) => [row.limit, row.used]));
}

const json = (body: unknown) => ({ method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

describe('one guard chain for REST, pages and MCP: every charge is one statement with the request', () => {
  it('REST: POST /api/summary/generate and GET /api/subtitles count requestsPerMinute with their own limit', async () => {
    const { key, user } = await createKeyedUser(db.sql);
    expect((await api.call('/api/summary/generate', { key, ...json({ videoId: videos.rest }) })).status).toBe(202);
    expect((await api.call(`/api/subtitles/${videos.subtitles}`, { key })).status).toBe(200);
    expect(await statementsOf(user.id)).toEqual([
      ['requestsPerMinute', 'summaryGenerationsPerDay'],
      ['requestsPerMinute', 'subtitleDownloadsPerDay'],
    ]);
  });

  it('REST: a request that ends without charging is counted once, alone (a 404, a free read)', async () => {
    const { key, user } = await createKeyedUser(db.sql);
    expect((await api.call(`/api/subtitles/${videoIdFor('guard-missing')}`, { key })).status).toBe(404);
    expect((await api.call('/api/tiers', { key })).status).toBe(200);
    expect(await statementsOf(user.id)).toEqual([['requestsPerMinute'], ['requestsPerMinute']]);
  });

  it("pages: a subtitle download from the video page counts the visitor's request with the download", async () => {
    const address = '127.0.0.41';
    const response = await requestFrom(`${api.url}/videos/${videos.page}/subtitles.srt`, { localAddress: address });
    expect(response.status).toBe(200);
    expect(await statementsOf(anonymousSubject(address))).toEqual([['requestsPerMinute', 'subtitleDownloadsPerDay']]);
  });

  it("MCP: tools/call of generate_summary and get_subtitles count the call with the tool's limit; a free tool counts the call alone", async () => {
    const { key, user } = await createKeyedUser(db.sql);
    let client: Client | undefined;
    try {
      client = await connectMcp(api.url, key);
      const summary = await client.callTool({ name: 'generate_summary', arguments: { videoId: videos.mcp } });
      expect(summary.isError).toBeFalsy();
      const subtitles = await client.callTool({ name: 'get_subtitles', arguments: { videoId: videos.subtitles } });
      expect(subtitles.isError).toBeFalsy();
      expect((await client.callTool({ name: 'get_video', arguments: { videoId: videos.mcp } })).isError).toBeFalsy();
      expect((await client.getPrompt({ name: 'research_video', arguments: { videoId: videos.mcp } })).messages).toHaveLength(1);
    } finally {
      await client?.close();
    }
    expect(await statementsOf(user.id)).toEqual([
      ['requestsPerMinute', 'summaryGenerationsPerDay'],
      ['requestsPerMinute', 'subtitleDownloadsPerDay'],
      ['requestsPerMinute'],
      ['requestsPerMinute'],
    ]);
  });
});

describe('administrators are counted, never refused', () => {
  it("an administrator past the tier's ftsQueriesPerMinute and requestsPerMinute is served; the use shows in /api/features", async () => {
    await awaitFreshWindow(db.sql);
    await updateTier(db.sql, 'pro', { limits: { requestsPerMinute: 3, ftsQueriesPerMinute: 1 } });
    const admin = await createKeyedUser(db.sql, { tier: 'pro', isAdmin: true, scope: 'L4' });
    // Four different queries: the same one again is not charged (another page of it).
    for (let query = 0; query < 4; query++) expect((await api.call(`/api/fts?q=guard${query}`, { key: admin.key })).status).toBe(200);
    const features = await api.call('/api/features', { key: admin.key });
    expect(features.status).toBe(200);
    expect(features.body.data.limitsEnforced).toBe(false);
    expect(features.body.data.limits.ftsQueriesPerMinute).toMatchObject({ max: 1, used: 4, remaining: 0 });
    expect(features.body.data.limits.requestsPerMinute).toMatchObject({ max: 3, used: 5, remaining: 0 });
    expect(features.headers.get('ratelimit-limit')).toBe('3');

    // The same tier refuses anybody else.
    const member = await createKeyedUser(db.sql, { tier: 'pro' });
    expect((await api.call('/api/features', { key: member.key })).body.data.limitsEnforced).toBe(true);
    expect((await api.call('/api/fts?q=guard', { key: member.key })).status).toBe(200);
    const refused = expectError(await api.call('/api/fts?q=guards', { key: member.key }), 429, 'RATE_LIMITED');
    expect(refused.details).toMatchObject({ limit: 'ftsQueriesPerMinute' });
  });

  it("MCP: the same for an administrator's tool calls", async () => {
    await awaitFreshWindow(db.sql);
    await updateTier(db.sql, 'pro', { limits: { subtitleDownloadsPerDay: 1 } });
    const admin = await createKeyedUser(db.sql, { tier: 'pro', isAdmin: true, scope: 'L4' });
    let client: Client | undefined;
    try {
      client = await connectMcp(api.url, admin.key);
      for (let call = 0; call < 2; call++) {
        const subtitles = await client.callTool({ name: 'get_subtitles', arguments: { videoId: videos.subtitles } });
        expect(subtitles.isError).toBeFalsy();
      }
    } finally {
      await client?.close();
    }
    expect((await countersOf(admin.user.id)).subtitleDownloadsPerDay).toBe(2);
  });
});

describe('requests that fail on their input or end not found are not charged', () => {
  it('POST /api/search for a channel no source knows: 404, its channelSearchesPerHour given back, the request counted', async () => {
    const { key, user } = await createKeyedUser(db.sql);
    expectError(await api.call('/api/search', { key, ...json({ query: '@nobody-knows-this-guard' }) }), 404, 'NOT_FOUND');
    expect(await countersOf(user.id)).toEqual({ requestsPerMinute: 1, channelSearchesPerHour: 0 });
    // Charged with the request in one statement, given back in one more.
    expect(await statementsOf(user.id)).toEqual([['channelSearchesPerHour', 'requestsPerMinute'], ['channelSearchesPerHour']]);
    // A channel a source knows is charged and kept.
    expect((await api.call('/api/search', { key, ...json({ query: known.channel.channelId }) })).status).toBe(200);
    expect(await countersOf(user.id)).toEqual({ requestsPerMinute: 2, channelSearchesPerHour: 1 });
  });

  it('MCP search_channel of an unknown channel is not charged either', async () => {
    const { key, user } = await createKeyedUser(db.sql);
    let client: Client | undefined;
    try {
      client = await connectMcp(api.url, key);
      const result = await client.callTool({ name: 'search_channel', arguments: { query: '@nobody-knows-this-guard' } });
      expect(result.isError).toBe(true);
      expect((result._meta as { code?: string }).code).toBe('NOT_FOUND');
    } finally {
      await client?.close();
    }
    expect(await countersOf(user.id)).toEqual({ requestsPerMinute: 1, channelSearchesPerHour: 0 });
  });

  it('a query that cannot be a channel (400) charges no channel search', async () => {
    const { key, user } = await createKeyedUser(db.sql);
    expectError(await api.call('/api/search', { key, ...json({ query: 'hello world' }) }), 400, 'INVALID_INPUT');
    expect(await countersOf(user.id)).toEqual({ requestsPerMinute: 1 });
  });
});

describe('guarded, as any caller (a web page) uses it', () => {
  const callerOf = async (user: { id: string; email: string }, keyId: string): Promise<Caller> => {
    const tier = (await loadTiers(db.sql)).find((entry) => entry.name === 'pro')!;
    return { kind: 'key', tier, subject: user.id, userId: user.id, email: user.email, isAdmin: false, keyId, scope: 4 };
  };

  it('keeps a charge when the work fails after it with a fault of the server (5xx), its transaction rolled back included', async () => {
    const { user, keyId } = await createKeyedUser(db.sql);
    const caller = await callerOf(user, keyId);
    const work = guarded({ counterSql: db.sql }, caller, { charges: ['summaryGenerationsPerDay'] }, ({ charge }) =>
      db.sql.begin(async (tx) => {
        await tx`select 1`;
        await charge('summaryGenerationsPerDay');
        throw new AppError('SERVICE_UNAVAILABLE', 'the work failed after its charge');
      }),
    );
    await expect(work).rejects.toThrow('the work failed after its charge');
    expect(await statementsOf(user.id)).toEqual([['requestsPerMinute', 'summaryGenerationsPerDay']]);
    expect(await countersOf(user.id)).toEqual({ requestsPerMinute: 1, summaryGenerationsPerDay: 1 });
  });

  it('gives the units back (not the request) when the work ends not found or on its input after a charge', async () => {
    const { user, keyId } = await createKeyedUser(db.sql);
    const caller = await callerOf(user, keyId);
    const failing = (error: AppError) =>
      guarded({ counterSql: db.sql }, caller, { charges: ['subtitleDownloadsPerDay'] }, async ({ charge }) => {
        await charge('subtitleDownloadsPerDay', 2);
        throw error;
      });
    await expect(failing(notFound('no such video'))).rejects.toThrow('no such video');
    await expect(failing(new AppError('INVALID_INPUT', 'not a track'))).rejects.toThrow('not a track');
    expect(await countersOf(user.id)).toEqual({ requestsPerMinute: 2, subtitleDownloadsPerDay: 0 });
  });

  it('counts only the request for 0 units, and refuses a charge of a limit it does not declare', async () => {
    const { user, keyId } = await createKeyedUser(db.sql);
    const caller = await callerOf(user, keyId);
    await guarded({ counterSql: db.sql }, caller, { charges: ['subtitleDownloadsPerDay'] }, ({ charge }) =>
      charge('subtitleDownloadsPerDay', 0),
    );
    expect(await statementsOf(user.id)).toEqual([['requestsPerMinute']]);
    await expect(
      guarded({ counterSql: db.sql }, caller, { charges: ['subtitleDownloadsPerDay'] }, ({ charge }) => charge('ftsQueriesPerMinute'), {
        what: 'the page',
      }),
    ).rejects.toThrow('the page charged ftsQueriesPerMinute, which its guard does not declare in charges');
  });

  it('checks access before anything is counted', async () => {
    const { user, keyId } = await createKeyedUser(db.sql);
    const caller = { ...(await callerOf(user, keyId)), scope: 1 };
    await expect(
      guarded({ counterSql: db.sql }, caller, { scope: 'L3', charges: ['apiStenogramsPerDay'] }, async () => 'ran', {
        what: 'the stenogram page',
      }),
    ).rejects.toThrow('the stenogram page needs an API key with L3+ scope; this key has L1');
    expect(await statementsOf(user.id)).toEqual([]);
  });
});

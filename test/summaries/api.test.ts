import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshTranscript } from '../../core/subtitles/transcript.ts';
import { generationStream } from '../../core/generations/lifecycle.ts';
import { summaryGeneration } from '../../core/summaries/summaryGeneration.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { createKeyedUser } from '../support/api.ts';
import { eventually } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { expectError } from '../support/http-helpers.ts';
import { readStream } from '../support/sse.ts';
import { startSearchStack } from '../support/stack.ts';
import { addTrack, addVideos, channelIdFor, videoIdFor, vttOf } from '../support/subtitles.ts';

let db: TestDatabase;
let stack: Awaited<ReturnType<typeof startSearchStack>>;
let owner: { key: string; userId: string };
let other: { key: string; userId: string };
let admin: { key: string };
let readOnly: { key: string };
const channelId = channelIdFor('summaries');
const otherChannelId = channelIdFor('summaries-other');
const v = {
  lathe: videoIdFor('sum-lathe'),
  bread: videoIdFor('sum-bread'),
  secret: videoIdFor('sum-secret'),
  bare: videoIdFor('sum-bare'),
  escaped: videoIdFor('sum-escaped'),
  joined: videoIdFor('sum-joined'),
};
const unknown = videoIdFor('sum-unknown');

const LATHE = [
  'Today we restore an old lathe that sat in a barn for thirty years.',
  'The lathe bed is covered in rust, so we start with the cleaning.',
  'Rust comes off the lathe bed with oil, a scraper and a lot of patience.',
  'Next we take the headstock apart and look at the spindle bearings.',
  'The spindle bearings are worn, and we order new bearings for the headstock.',
  'While we wait, the tailstock gets cleaned and painted green.',
  'Paint goes on in two thin coats so the tailstock keeps its fine finish.',
  'The new bearings arrive and we press them onto the spindle.',
  'With the spindle back in the headstock, the lathe turns smoothly again.',
  'Finally we cut a test piece of brass to check the lathe is accurate.',
  'The brass test piece measures within two hundredths of a millimetre.',
  'Thanks for watching the lathe restoration, see you next time.',
];
const BREAD = [
  'This video shows how to bake sourdough bread at home.',
  'Sourdough bread needs a starter made from flour and water.',
  'Feed the starter every day until it doubles in size.',
  'Mix the flour, the water, the salt and the starter into a dough.',
  'Fold the dough every half hour to build its strength.',
  'Let the dough rise overnight in the fridge.',
  'Bake the bread in a hot oven inside a covered pot.',
  'The crust of the sourdough bread turns dark and crisp.',
];

async function addTranscript(videoId: string, lines: string[], language = 'en') {
  await addTrack(db.sql, { videoId, language, kind: 'manual', text: vttOf(lines, 20) });
  await db.sql.begin((tx) => refreshTranscript(tx, videoId));
}

beforeAll(async () => {
  db = await createTestDatabase();
  await updateTier(db.sql, 'pro', { limits: { requestsPerMinute: 100_000, summaryGenerationsPerDay: 5 } });
  await updateTier(db.sql, 'anonymous', { limits: { requestsPerMinute: 100_000 } });
  stack = await startSearchStack(db, {});
  const make = async (options: Parameters<typeof createKeyedUser>[1] = {}) => {
    const created = await createKeyedUser(db.sql, options);
    return { key: created.key, userId: created.user.id };
  };
  owner = await make();
  other = await make();
  admin = await make({ isAdmin: true });
  readOnly = await make({ scope: 'L1' });
  await addVideos(
    db.sql,
    channelId,
    [
      { videoId: v.lathe, title: 'Restoring a 1950s lathe' },
      { videoId: v.secret, title: 'A private matter' },
      { videoId: v.bare, title: 'No subtitles yet' },
      { videoId: v.escaped, title: '<script>alert(1)</script> & "quotes"' },
      { videoId: v.joined, title: 'Asked for twice' },
    ],
    'Workshop',
  );
  await addVideos(db.sql, otherChannelId, [{ videoId: v.bread, title: 'Sourdough at home' }], 'Kitchen');
  for (const videoId of [v.lathe, v.secret, v.escaped, v.joined]) await addTranscript(videoId, LATHE);
  await addTranscript(v.bread, BREAD);
});

afterAll(async () => {
  await stack?.close();
  await db?.drop();
});

const call = (path: string, init: { key?: string | undefined; method?: string; body?: unknown } = {}) =>
  stack.api.call(path, {
    ...(init.key ? { key: init.key } : {}),
    method: init.method ?? 'GET',
    ...(init.body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(init.body) }),
  });
const generate = (videoId: string, key: string, extra: Record<string, unknown> = {}) =>
  call('/api/summary/generate', { key, method: 'POST', body: { videoId, ...extra } });

async function generationsCharged(userId: string): Promise<number> {
  const [row] = await db.sql<
    { used: number }[]
  >`select coalesce(sum(used), 0)::int as used from usage_counters where subject = ${userId}::uuid and limit_name = 'summaryGenerationsPerDay'`;
  return row!.used;
}

async function readySummary(videoId: string, key?: string) {
  return eventually(async () => {
    const response = await call(`/api/summary/${videoId}`, { key });
    return response.body?.data?.status === 'generated' ? response.body.data : undefined;
  }, `the summary of ${videoId} is ready`);
}

describe('POST /api/summary/generate → job → events → the summary', () => {
  it('answers 202 generating, streams progress and summary:complete, and stores a generated summary', async () => {
    const accepted = await generate(v.lathe, owner.key);
    expect(accepted.status).toBe(202);
    expect(accepted.body.data).toMatchObject({
      status: 'generating',
      videoId: v.lathe,
      private: false,
      streamUrl: `/api/summary/${v.lathe}/stream`,
    });
    expect(accepted.headers.get('location')).toBe(`/api/summary/${v.lathe}`);

    const streamed = await readStream(`${stack.api.url}/api/summary/${v.lathe}/stream`, { key: owner.key });
    expect(streamed.status).toBe(200);
    const types = streamed.events.map((event) => event.event);
    expect(types.at(-1)).toBe('summary:complete');
    // The generation logs its milestones (each stage once); a stream opened before it ends carries them and
    // the latest percents in between, never going back; one opened after (a loaded machine) answers the final event at once.
    const [{ id }] = await db.sql<[{ id: string }]>`select id::text from summaries where video_id = ${v.lathe} and not private`;
    const logged = await db.sql<{ stage: string; percent: number }[]>`
      select payload->>'stage' as stage, (payload->>'percent')::int as percent from events where stream = ${generationStream(summaryGeneration, id)} and type = 'summary:progress' order by seq`;
    expect(logged.map((row) => row.stage)).toEqual([...new Set(logged.map((row) => row.stage))]);
    const percents = logged.map((row) => row.percent);
    expect(percents).toEqual([...percents].sort((a, b) => a - b));
    const streamedPercents = streamed.events
      .filter((event) => event.event === 'summary:progress')
      .map((event) => event.data.percent as number);
    expect(streamedPercents).toEqual([...streamedPercents].sort((a, b) => a - b));
    if (types.length > 1) expect(streamedPercents).toEqual(expect.arrayContaining(percents));
    // Every event has its id, the final one too.
    for (const event of streamed.events) expect(event.id).toMatch(/^\d+$/);
    const summary = streamed.events.at(-1)!.data.summary;
    expect(summary).toMatchObject({
      videoId: v.lathe,
      status: 'generated',
      llmModel: 'afterimage-extractive-1',
      language: 'en',
      tokensUsed: null,
      videoTitle: 'Restoring a 1950s lathe',
      channelTitle: 'Workshop',
    });
    expect(summary.transcript).toEqual({ language: 'en', kind: 'manual', version: 1 });
    expect(summary.keyPoints.length).toBeGreaterThan(0);
    for (const point of summary.keyPoints) expect(point.url).toBe(`https://www.youtube.com/watch?v=${v.lathe}&t=${point.startSeconds}s`);
    expect(summary.tags).toContain('lathe');
    expect(summary.pageUrl).toBe(`/summaries/${v.lathe}`);

    expect(await generationsCharged(owner.userId)).toBe(1);
    const [video] = await db.sql`select has_summary from videos where video_id = ${v.lathe}`;
    expect(video!.has_summary).toBe(true);
  });

  it('answers a generated summary with 200 and charges nothing', async () => {
    const before = await generationsCharged(owner.userId);
    const again = await generate(v.lathe, other.key);
    expect(again.status).toBe(200);
    expect(again.body.data.status).toBe('generated');
    expect(await generationsCharged(owner.userId)).toBe(before);
    expect(await generationsCharged(other.userId)).toBe(0);
  });

  it('lets /api/fts?hasSummary=true find the summarised video', async () => {
    const found = await call('/api/fts?q=lathe&hasSummary=true', { key: owner.key });
    expect(found.status).toBe(200);
    expect(found.body.data.videos.map((video: { videoId: string }) => video.videoId)).toEqual([v.lathe]);
  });

  it('joins a generation that is running: one job, one charge', async () => {
    const before = await generationsCharged(other.userId);
    const answers = await Promise.all([generate(v.joined, other.key), generate(v.joined, other.key), generate(v.joined, other.key)]);
    for (const answer of answers) expect([200, 202]).toContain(answer.status);
    expect(await generationsCharged(other.userId)).toBe(before + 1);
    const [rows] = await db.sql`select count(*)::int as n from summaries where video_id = ${v.joined}`;
    expect(rows!.n).toBe(1);
    await readySummary(v.joined);
  });

  it('a stream opened after the summary is generated ends with summary:complete at once', async () => {
    const streamed = await readStream(`${stack.api.url}/api/summary/${v.lathe}/stream`, { key: owner.key });
    expect(streamed.events.map((event) => event.event)).toEqual(['summary:complete']);
    expect(streamed.ended).toBe(true);
  });
});

describe('refusals', () => {
  it('without a transcript: 409 TRANSCRIPT_REQUIRED, a subtitle fetch queued, nothing charged', async () => {
    const before = await generationsCharged(owner.userId);
    const refused = await generate(v.bare, owner.key);
    const error = expectError(refused, 409, 'TRANSCRIPT_REQUIRED');
    expect(error.message).toContain(`/api/subtitles/${v.bare}/status`);
    // The fetch was asked for (the worker may have run it already: no source is configured here).
    const [transcript] = await db.sql`select requested_at from transcripts where video_id = ${v.bare}`;
    expect(transcript?.requested_at).toBeInstanceOf(Date);
    expect(await generationsCharged(owner.userId)).toBe(before);
    expect(await db.sql`select 1 from summaries where video_id = ${v.bare}`).toHaveLength(0);
  });

  it('an unknown video is 404, a malformed id or body 400', async () => {
    expectError(await generate(unknown, owner.key), 404, 'NOT_FOUND');
    expectError(await generate('short', owner.key), 400, 'INVALID_INPUT');
    expectError(await generate(v.lathe, owner.key, { private: 'yes' }), 400, 'INVALID_INPUT');
    expectError(
      await call('/api/summary/generate', { key: owner.key, method: 'POST', body: { videoId: v.lathe, extra: 1 } }),
      400,
      'INVALID_INPUT',
    );
  });

  it('needs a key with L2 scope', async () => {
    expectError(await generate(v.bread, readOnly.key), 403, 'FORBIDDEN');
    expectError(await call('/api/summary/generate', { method: 'POST', body: { videoId: v.bread } }), 401, 'API_KEY_REQUIRED');
  });

  it('refuses past summaryGenerationsPerDay with 429 RATE_LIMITED and queues nothing', async () => {
    await updateTier(db.sql, 'pro', { limits: { summaryGenerationsPerDay: 0 } });
    try {
      // Not the administrator's key: administrators are counted but never refused (test/api/guard.test.ts).
      const refused = await generate(v.bread, other.key);
      expectError(refused, 429, 'RATE_LIMITED');
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(await db.sql`select 1 from summaries where video_id = ${v.bread}`).toHaveLength(0);
    } finally {
      await updateTier(db.sql, 'pro', { limits: { summaryGenerationsPerDay: 5 } });
    }
  });
});

describe('private summaries', () => {
  it('are seen by their owner only, and never listed', async () => {
    const accepted = await generate(v.secret, owner.key, { private: true });
    expect(accepted.status).toBe(202);
    expect(accepted.body.data.private).toBe(true);
    const mine = await readySummary(v.secret, owner.key);
    expect(mine.private).toBe(true);
    expect(mine.pageUrl).toBeNull();

    expectError(await call(`/api/summary/${v.secret}`, { key: other.key }), 404, 'NOT_FOUND');
    expectError(await call(`/api/summary/${v.secret}`, { key: admin.key }), 404, 'NOT_FOUND');
    expectError(await call(`/api/summary/${v.secret}`), 404, 'NOT_FOUND');
    expect((await call(`/summaries/${v.secret}`)).status).toBe(404);

    const lists = [
      await call('/api/summary/browse?limit=100'),
      await call('/api/summary/latest?limit=100'),
      await call(`/api/summary/browse?channelId=${channelId}`),
    ];
    for (const list of lists) expect(list.body.data.items.map((item: { videoId: string }) => item.videoId)).not.toContain(v.secret);
    expect((await call('/sitemap.xml')).body).not.toContain(v.secret);
    const [video] = await db.sql`select has_summary from videos where video_id = ${v.secret}`;
    expect(video!.has_summary).toBe(false);
    const channels = await call('/api/summary/channels');
    expect(channels.body.data.items.find((item: { channelId: string }) => item.channelId === channelId).summaries).toBe(2);
  });
});

describe('lists of public summaries', () => {
  beforeAll(async () => {
    await generate(v.bread, other.key);
    await readySummary(v.bread);
  });

  it('browse filters by tag, channel and language, newest first, with totals', async () => {
    const all = await call('/api/summary/browse');
    expect(all.status).toBe(200);
    expect(all.body.data).toMatchObject({ page: 1, limit: 20, total: 3, totalPages: 1 });
    expect(all.body.data.items[0].videoId).toBe(v.bread);
    const byTag = await call('/api/summary/browse?tag=Lathe');
    expect(byTag.body.data.items.map((item: { videoId: string }) => item.videoId).sort()).toEqual([v.joined, v.lathe].sort());
    expect(byTag.body.data.total).toBe(2);
    const byChannel = await call(`/api/summary/browse?channelId=${otherChannelId}`);
    expect(byChannel.body.data.items.map((item: { videoId: string }) => item.videoId)).toEqual([v.bread]);
    expect(byChannel.body.data.total).toBe(1);
    const combined = await call(`/api/summary/browse?channelId=${channelId}&tag=bread&language=en`);
    expect(combined.body.data).toMatchObject({ items: [], total: 0 });
    const paged = await call('/api/summary/browse?limit=1&page=2');
    expect(paged.body.data).toMatchObject({ page: 2, limit: 1, total: 3, totalPages: 3 });
    expect(paged.body.data.items).toHaveLength(1);
  });

  it('refuses limits past 100 and pages past 10,000 results, naming the field', async () => {
    expect(expectError(await call('/api/summary/browse?limit=101'), 400, 'INVALID_INPUT').message).toContain('limit');
    expect(expectError(await call('/api/summary/browse?page=600'), 400, 'INVALID_INPUT').message).toContain('page');
    expect(expectError(await call('/api/summary/browse?language=english'), 400, 'INVALID_INPUT').message).toContain('language');
  });

  it('tags, languages and channels count public summaries', async () => {
    const tags = await call('/api/summary/tags');
    expect(tags.status).toBe(200);
    expect(tags.body.data.tags.find((tag: { tag: string }) => tag.tag === 'lathe').count).toBe(2);
    expect(tags.body.data.languages).toEqual([expect.objectContaining({ language: 'en', count: 3 })]);
    expect((await call('/api/summary/languages')).body.data.languages).toEqual([{ language: 'en', count: 3 }]);
    const channels = (await call('/api/summary/channels')).body.data;
    expect(channels.total).toBe(2);
    expect(channels.items[0]).toMatchObject({ channelId, channelTitle: 'Workshop', summaries: 2 });
  });

  it('fixed words are never taken for a video id', async () => {
    for (const word of ['browse', 'latest', 'tags', 'languages', 'channels']) expect((await call(`/api/summary/${word}`)).status).toBe(200);
  });
});

describe('public pages', () => {
  it('a public summary is an escaped HTML page (in the web app: test/web/summaries.test.ts) whose key points link to their moment', async () => {
    await generate(v.escaped, owner.key);
    await readySummary(v.escaped);
    const page = await call(`/summaries/${v.escaped}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('public, max-age=300');
    expect(page.body).not.toContain('<script>alert(1)</script>');
    expect(page.body).toContain('&lt;script>alert(1)&lt;/script>');
    expect(page.body).toMatch(new RegExp(`href="/videos/${v.escaped}\\?t=\\d+"`));
  });

  it('the sitemap lists every public summary with an absolute URL', async () => {
    const sitemap = await call('/sitemap.xml');
    expect(sitemap.status).toBe(200);
    expect(sitemap.headers.get('content-type')).toBe('application/xml; charset=utf-8');
    for (const videoId of [v.lathe, v.bread, v.escaped]) expect(sitemap.body).toContain(`<loc>${stack.api.url}/summaries/${videoId}</loc>`);
    expect((await call('/sitemaps/summaries/2')).status).toBe(404);
  });
});

describe('DELETE /api/summary/:videoId', () => {
  it('is for administrators; it clears hasSummary and the counts in the same transaction', async () => {
    expectError(await call(`/api/summary/${v.lathe}`, { key: owner.key, method: 'DELETE' }), 403, 'FORBIDDEN');
    // An administrator's key below L4 administers nothing, as on PATCH /api/tiers/:name.
    for (const scope of ['L1', 'L3'] as const) {
      const lowKey = (await createKeyedUser(db.sql, { isAdmin: true, scope })).key;
      const refused = expectError(await call(`/api/summary/${v.lathe}`, { key: lowKey, method: 'DELETE' }), 403, 'FORBIDDEN');
      expect(refused.message).toContain('needs an API key with L4+ scope');
    }
    const deleted = await call(`/api/summary/${v.lathe}`, { key: admin.key, method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toEqual({ videoId: v.lathe, deleted: true });
    expectError(await call(`/api/summary/${v.lathe}`), 404, 'NOT_FOUND');
    const [video] = await db.sql`select has_summary from videos where video_id = ${v.lathe}`;
    expect(video!.has_summary).toBe(false);
    expect((await call('/api/summary/languages')).body.data.languages).toEqual([{ language: 'en', count: 3 }]);
    expectError(await call(`/api/summary/${v.lathe}`, { key: admin.key, method: 'DELETE' }), 404, 'NOT_FOUND');
    // the owner's private summary of another video is untouched by deletes of public ones
    expect((await call(`/api/summary/${v.secret}`, { key: owner.key })).status).toBe(200);
  });
});

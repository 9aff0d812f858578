import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshTranscript } from '../../core/subtitles/transcript.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { createKeyedUser } from '../support/api.ts';
import { eventually } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { expectError } from '../support/http-helpers.ts';
import { readStream } from '../support/sse.ts';
import { startSearchStack } from '../support/stack.ts';
import { addTrack, addVideos, channelIdFor, videoIdFor, vttOf } from '../support/subtitles.ts';

let db: TestDatabase;
let dataDir: string;
let stack: Awaited<ReturnType<typeof startSearchStack>>;
type User = { key: string; userId: string; keyId: string };
let owner: User;
let other: User;
let admin: User;
let l2: User;
/** The API's clock for quota windows (the database clock when null). */
let now: Date | null = null;
const channelId = channelIdFor('stenograms');
const v = {
  dialogue: videoIdFor('st-dialogue'),
  second: videoIdFor('st-second'),
  third: videoIdFor('st-third'),
  left: videoIdFor('st-left'),
  bare: videoIdFor('st-bare'),
  race: videoIdFor('st-race'),
};
const DIALOGUE = [
  '>> Welcome back to the workshop.',
  'Today we fix the old radio.',
  '>> Thanks for having me here.',
  'I brought the spare valves.',
  '>> Great, let us open the case.',
  '[Music]',
];

async function addTranscript(videoId: string, lines: string[]) {
  await addTrack(db.sql, { videoId, language: 'en', kind: 'manual', text: vttOf(lines, 4) });
  await db.sql.begin((tx) => refreshTranscript(tx, videoId));
}

beforeAll(async () => {
  db = await createTestDatabase();
  dataDir = await mkdtemp(join(tmpdir(), 'afterimage-stenograms-'));
  await updateTier(db.sql, 'pro', { limits: { requestsPerMinute: 100_000, apiStenogramsPerDay: 100 } });
  stack = await startSearchStack(db, { DATA_DIR: dataDir }, {}, () => now ?? new Date());
  const make = async (options: Parameters<typeof createKeyedUser>[1] = {}): Promise<User> => {
    const created = await createKeyedUser(db.sql, options);
    return { key: created.key, userId: created.user.id, keyId: created.keyId };
  };
  owner = await make();
  other = await make();
  admin = await make({ isAdmin: true });
  l2 = await make({ scope: 'L2' });
  await addVideos(db.sql, channelId, [
    { videoId: v.dialogue, title: 'Fixing a radio' },
    { videoId: v.second, title: 'Second' },
    { videoId: v.third, title: 'Third' },
    { videoId: v.left, title: 'Left early' },
    { videoId: v.bare, title: 'No transcript' },
    { videoId: v.race, title: 'Raced' },
  ]);
  for (const videoId of [v.dialogue, v.second, v.third, v.left, v.race]) await addTranscript(videoId, DIALOGUE);
});

afterAll(async () => {
  await stack?.close();
  await db?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

const call = (path: string, key: string | undefined, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) =>
  stack.api.call(path, {
    ...(key ? { key } : {}),
    method: init.method ?? 'GET',
    headers: { ...(init.body === undefined ? {} : { 'Content-Type': 'application/json' }), ...init.headers },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
const generateUrl = (videoId: string) => `${stack.api.url}/api/stenograms/${videoId}/generate`;
const path = (user: User, videoId: string) => `/api/stenograms/@${user.userId}/${videoId}`;

/** POST generate read as a stream until its final event (or until `until` says stop: a client leaving). */
async function generate(videoId: string, user: User, options: { body?: unknown; until?: (type: string) => boolean } = {}) {
  const response = await fetch(generateUrl(videoId), {
    method: 'POST',
    headers: { 'X-API-Key': user.key, 'Content-Type': 'application/json', Accept: 'text/event-stream' },
    body: JSON.stringify(options.body ?? {}),
  });
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream'))
    return { status: response.status, headers: response.headers, body: await response.json(), events: [] };
  const events: Array<{ event: string; id: string | undefined; data: any }> = [];
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const event = /^event: (.*)$/m.exec(frame)?.[1];
      const data = /^data: (.*)$/m.exec(frame)?.[1];
      if (!event || data === undefined) continue;
      events.push({ event, id: /^id: (.*)$/m.exec(frame)?.[1], data: JSON.parse(data) });
      if (options.until?.(event)) {
        await reader.cancel();
        return { status: response.status, headers: response.headers, body: undefined, events };
      }
    }
  }
  return { status: response.status, headers: response.headers, body: undefined, events };
}

async function charged(user: User): Promise<number> {
  const [row] = await db.sql<
    { used: number }[]
  >`select coalesce(sum(used), 0)::int as used from usage_counters where subject = ${user.keyId}::uuid and limit_name = 'apiStenogramsPerDay'`;
  return row!.used;
}

describe('generate → stream → read → list → delete', () => {
  it('streams started, progress and stenogram:complete with the Markdown and the §2.4 metadata', async () => {
    const generated = await generate(v.dialogue, owner);
    expect(generated.status).toBe(200);
    const types = generated.events.map((event) => event.event);
    expect(types[0]).toBe('stenogram:started');
    // What is not known yet (no language was asked for, no model has written) is absent, not "".
    const started = generated.events[0]!.data.metadata;
    expect(Object.values(started)).not.toContain('');
    expect(started).not.toHaveProperty('language');
    expect(started).not.toHaveProperty('llmModel');
    expect(started).toMatchObject({ title: 'Fixing a radio', channelTitle: 'Subtitle Channel', status: 'generating' });
    expect(types).toContain('stenogram:progress');
    expect(types.at(-1)).toBe('stenogram:complete');
    const percents = generated.events.filter((event) => event.event === 'stenogram:progress').map((event) => event.data.percent as number);
    expect(percents).toEqual([...percents].sort((a, b) => a - b));
    const { stenogram, metadata } = generated.events.at(-1)!.data;
    expect(stenogram.markdown).toMatch(/Speaker 1/);
    expect(stenogram.markdown).toMatch(/Speaker 2/);
    expect(stenogram.markdown).toContain('[Music]');
    expect(metadata).toMatchObject({
      videoId: v.dialogue,
      title: 'Fixing a radio',
      channelId,
      language: 'en',
      tokensUsed: 0,
      llmModel: 'afterimage-stenogram-1',
      status: 'generated',
    });
    expect(Date.parse(metadata.generatedAt)).not.toBeNaN();
    expect(await charged(owner)).toBe(1);

    const file = join(dataDir, 'stenograms', owner.userId, `${v.dialogue}.md`);
    expect(await readFile(file, 'utf8')).toBe(stenogram.markdown);

    // The private text went to its owner's stream, never into the event log (kept for a week).
    const logged = await db.sql<{ payload: { stenogram: object } }[]>`
      select e.payload from events e join stenograms g on e.stream = 'stenogram:' || g.id where g.video_id = ${v.dialogue} and e.type = 'stenogram:complete'`;
    expect(logged).toHaveLength(1);
    expect(logged[0]!.payload.stenogram).toEqual({ url: stenogram.url });
    expect(JSON.stringify(await db.sql`select payload from events`)).not.toContain('[Music]');
  });

  it('reads the Markdown, its metadata, the list and the video ids', async () => {
    const markdown = await call(path(owner, v.dialogue), owner.key);
    expect(markdown.status).toBe(200);
    expect(markdown.headers.get('content-type')).toBe('text/markdown; charset=utf-8');
    expect(markdown.body).toMatch(/Speaker 2/);
    const etag = markdown.headers.get('etag')!;
    expect((await call(path(owner, v.dialogue), owner.key, { headers: { 'If-None-Match': etag } })).status).toBe(304);

    const meta = await call(`${path(owner, v.dialogue)}/meta`, owner.key);
    expect(meta.body.data).toMatchObject({
      videoId: v.dialogue,
      channelTitle: 'Subtitle Channel',
      llmModel: 'afterimage-stenogram-1',
      status: 'generated',
    });
    // fetch asks for gzip: the coded representation's tag is the hash with -gzip (api/http/representation.ts).
    expect(meta.body.data.sha256).toBe(etag.replaceAll('"', '').replace(/-(br|gzip)$/, ''));

    const list = await call('/api/user/stenograms', owner.key);
    expect(list.body.data).toMatchObject({ page: 1, pageSize: 20, total: 1, totalPages: 1 });
    expect(list.body.data.items[0].videoId).toBe(v.dialogue);
    const ids = await call('/api/user/stenograms/video-ids', owner.key);
    expect(ids.body.data).toEqual({ videoIds: [v.dialogue], generating: [], failed: [], capped: false, cap: 1000 });
    expect((await call('/api/user/stenograms', other.key)).body.data.total).toBe(0);
  });

  it('a second generation of the same video is 409 STENOGRAM_CONFLICT, and charges nothing', async () => {
    const before = await charged(owner);
    const again = await generate(v.dialogue, owner);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('STENOGRAM_CONFLICT');
    expect(await charged(owner)).toBe(before);
  });

  it('concurrent generations of the same video: one is accepted and charged, the others are 409 (the unique index decides)', async () => {
    const answers = await Promise.all([1, 2, 3].map(() => generate(v.race, other)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409, 409]);
    for (const refused of answers.filter((answer) => answer.status === 409)) expect(refused.body.error.code).toBe('STENOGRAM_CONFLICT');
    expect(answers.find((answer) => answer.status === 200)!.events.at(-1)!.event).toBe('stenogram:complete');
    expect(await charged(other)).toBe(1);
  });

  it('a client that disconnects loses nothing: the job finishes and the stream resumes', async () => {
    const left = await generate(v.left, owner, { until: (type) => type === 'stenogram:started' });
    expect(left.events.map((event) => event.event)).toEqual(['stenogram:started']);
    await eventually(async () => (await call(path(owner, v.left), owner.key)).status === 200 || undefined, 'the stenogram is generated');
    const resumed = await readStream(`${stack.api.url}${path(owner, v.left)}/stream`, { key: owner.key, lastEventId: left.events[0]!.id! });
    expect(resumed.events[0]!.event).not.toBe('stenogram:started');
    expect(resumed.events.at(-1)!.event).toBe('stenogram:complete');
  });

  it('delete removes the row, its events and its file; reading then is 404', async () => {
    const file = join(dataDir, 'stenograms', owner.userId, `${v.left}.md`);
    expect(existsSync(file)).toBe(true);
    const deleted = await call(path(owner, v.left), owner.key, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toEqual({ videoId: v.left, deleted: true });
    expect(existsSync(file)).toBe(false);
    expectError(await call(path(owner, v.left), owner.key), 404, 'NOT_FOUND');
    expect(await db.sql`select 1 from events where stream like 'stenogram:%' and payload->'metadata'->>'videoId' = ${v.left}`).toHaveLength(
      0,
    );
    expectError(await call(path(owner, v.left), owner.key, { method: 'DELETE' }), 404, 'NOT_FOUND');
  });
});

describe('access', () => {
  it('nobody but the owner finds it: other users and administrators get 404 on read, meta, stream and delete', async () => {
    for (const user of [other, admin]) {
      expectError(await call(path(owner, v.dialogue), user.key), 404, 'NOT_FOUND');
      expectError(await call(`${path(owner, v.dialogue)}/meta`, user.key), 404, 'NOT_FOUND');
      expectError(await call(`${path(owner, v.dialogue)}/stream`, user.key), 404, 'NOT_FOUND');
      expectError(await call(path(owner, v.dialogue), user.key, { method: 'DELETE' }), 404, 'NOT_FOUND');
      expectError(await call(path(user, v.dialogue), user.key), 404, 'NOT_FOUND');
    }
    expect((await call(path(owner, v.dialogue), owner.key)).status).toBe(200);
  });

  it('an L2 key is 403 FORBIDDEN naming L3; no key is 401; the feature switched off is 403 FEATURE_DISABLED', async () => {
    const refused = await generate(v.second, l2);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('FORBIDDEN');
    expect(refused.body.error.message).toContain('L3');
    expectError(await call(path(l2, v.second), l2.key), 403, 'FORBIDDEN');
    expectError(await call('/api/user/stenograms', undefined), 401, 'API_KEY_REQUIRED');
    await updateTier(db.sql, 'pro', { features: { stenograms: false } });
    try {
      expect((await generate(v.second, owner)).body.error.code).toBe('FEATURE_DISABLED');
      expectError(await call('/api/user/stenograms', owner.key), 403, 'FEATURE_DISABLED');
    } finally {
      await updateTier(db.sql, 'pro', { features: { stenograms: true } });
    }
  });

  it('refuses bad input before any stream: ids, language codes, unknown videos, no transcript', async () => {
    for (const bad of ['short', 'abcdefghijkl', 'abc%2F..%2Fxy']) expect((await generate(bad, owner)).status).toBe(400);
    const language = await generate(v.second, owner, { body: { language: 'english' } });
    expect(language.status).toBe(400);
    expect(language.body.error.message).toContain('language');
    expect((await generate(v.second, owner, { body: { extra: true } })).status).toBe(400);
    expect((await generate(videoIdFor('st-unknown'), owner)).body.error.code).toBe('NOT_FOUND');
    const bare = await generate(v.bare, owner);
    expect(bare.status).toBe(409);
    expect(bare.body.error.code).toBe('TRANSCRIPT_REQUIRED');
    expect(bare.body.error.message).toContain(`/api/subtitles/${v.bare}/status`);
  });

  it('path traversal in every parameter is refused: nothing outside the store is read or removed', async () => {
    const attempts = [
      `/api/stenograms/@..%2F..%2Fetc/${v.dialogue}`,
      `/api/stenograms/${owner.userId}/${v.dialogue}`,
      `/api/stenograms/@${owner.userId}/..%2F..%2Fpasswd`,
      `/api/stenograms/@${owner.userId}/${v.dialogue}%2F..`,
      `/api/stenograms/@${owner.userId}%2F..%2F${other.userId}/${v.dialogue}`,
    ];
    for (const attempt of attempts) {
      for (const method of ['GET', 'DELETE']) expect([400, 404]).toContain((await call(attempt, owner.key, { method })).status);
      expect([400, 404]).toContain((await call(`${attempt}/meta`, owner.key)).status);
    }
    expect((await call(path(owner, v.dialogue), owner.key)).status).toBe(200);
  });
});

describe('apiStenogramsPerDay', () => {
  it('is counted per key and resets at midnight UTC; Retry-After runs to midnight', async () => {
    await updateTier(db.sql, 'pro', { limits: { apiStenogramsPerDay: 1 } });
    const fresh = await createKeyedUser(db.sql);
    const user = { key: fresh.key, userId: fresh.user.id, keyId: fresh.keyId };
    try {
      now = new Date('2031-05-06T23:59:58.000Z');
      expect((await generate(v.second, user)).events.at(-1)!.event).toBe('stenogram:complete');
      const refused = await generate(v.third, user);
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('RATE_LIMITED');
      expect(Number(refused.headers.get('retry-after'))).toBe(2);
      now = new Date('2031-05-07T00:00:01.000Z');
      expect((await generate(v.third, user)).events.at(-1)!.event).toBe('stenogram:complete');
    } finally {
      now = null;
      await updateTier(db.sql, 'pro', { limits: { apiStenogramsPerDay: 100 } });
    }
  });
});

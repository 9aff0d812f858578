import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshTranscript } from '../../core/subtitles/transcript.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { start, type OpenAiServer } from '../kit/servers/openai-server.ts';
import { createKeyedUser } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { readStream } from '../support/sse.ts';
import { startSearchStack } from '../support/stack.ts';
import { addTrack, addVideos, channelIdFor, videoIdFor, vttOf } from '../support/subtitles.ts';

let db: TestDatabase;
let dataDir: string;
let llm: OpenAiServer;
let stack: Awaited<ReturnType<typeof startSearchStack>>;
let user: { key: string; keyId: string; userId: string };
const v = { talk: videoIdFor('st-llm-talk'), refused: videoIdFor('st-llm-refused') };
const LINES = [
  '>> ANNA: Good morning, everyone.',
  'Today we talk about rivers.',
  '>> BEN: And about the bridges over them.',
  'Let us begin with the oldest one.',
];

beforeAll(async () => {
  db = await createTestDatabase();
  dataDir = await mkdtemp(join(tmpdir(), 'afterimage-stenogram-llm-'));
  await updateTier(db.sql, 'pro', { limits: { requestsPerMinute: 100_000, apiStenogramsPerDay: 10 } });
  llm = await start();
  stack = await startSearchStack(db, { DATA_DIR: dataDir, LLM_BASE_URL: llm.url, LLM_MODEL: 'stand-in-model' });
  const created = await createKeyedUser(db.sql);
  user = { key: created.key, keyId: created.keyId, userId: created.user.id };
  await addVideos(
    db.sql,
    channelIdFor('st-llm'),
    Object.values(v).map((videoId) => ({ videoId })),
  );
  for (const videoId of Object.values(v)) {
    await addTrack(db.sql, { videoId, language: 'en', kind: 'manual', text: vttOf(LINES, 5) });
    await db.sql.begin((tx) => refreshTranscript(tx, videoId));
  }
});

afterAll(async () => {
  await stack?.close();
  await llm?.close();
  await db?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

const generate = (videoId: string) => readStream(`${stack.api.url}/api/stenograms/${videoId}/generate`, { key: user.key, method: 'POST' });

async function charged(): Promise<number> {
  const [row] = await db.sql<
    { used: number }[]
  >`select coalesce(sum(used), 0)::int as used from usage_counters where subject = ${user.keyId}::uuid and limit_name = 'apiStenogramsPerDay'`;
  return row!.used;
}

describe('stenograms written by an OpenAI-compatible LLM', () => {
  it('records the model and its tokens', async () => {
    const streamed = await generate(v.talk);
    const last = streamed.events.at(-1)!;
    expect(last.event).toBe('stenogram:complete');
    expect(last.data.metadata).toMatchObject({ llmModel: 'stand-in-model', status: 'generated' });
    expect(last.data.metadata.tokensUsed).toBeGreaterThan(0);
    expect(last.data.stenogram.markdown).toContain('ANNA');
    expect(await charged()).toBe(1);
  });

  it('a generation that fails is refunded and can be asked for again', async () => {
    llm.enqueue('unauthorized');
    const failed = await generate(v.refused);
    const last = failed.events.at(-1)!;
    expect(last.event).toBe('stenogram:error');
    expect(last.data).toMatchObject({ code: 'INTERNAL_ERROR', refunded: true });
    expect(last.data.message).not.toContain('127.0.0.1');
    expect(await charged()).toBe(1);
    const again = await generate(v.refused);
    expect(again.events.at(-1)!.event, JSON.stringify(again.events.at(-1))).toBe('stenogram:complete');
    expect(await charged()).toBe(2);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshTranscript } from '../../core/subtitles/transcript.ts';
import { updateTier } from '../../core/tiers/updateTier.ts';
import { start, type OpenAiServer } from '../kit/servers/openai-server.ts';
import { createKeyedUser } from '../support/api.ts';
import { eventually } from '../support/cli.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { readStream } from '../support/sse.ts';
import { startSearchStack } from '../support/stack.ts';
import { addTrack, addVideos, channelIdFor, videoIdFor, vttOf } from '../support/subtitles.ts';

const API_KEY = 'sk-test-0123456789abcdef';
let db: TestDatabase;
let llm: OpenAiServer;
let stack: Awaited<ReturnType<typeof startSearchStack>>;
let key: string;
const channelId = channelIdFor('llm-flow');
const v = { talk: videoIdFor('llm-talk'), refused: videoIdFor('llm-refused') };
const LINES = Array.from(
  { length: 40 },
  (_, i) => `Part ${i + 1} of the talk is about ${['engines', 'rivers', 'gardens', 'markets'][i % 4]} and their history.`,
);

beforeAll(async () => {
  db = await createTestDatabase();
  await updateTier(db.sql, 'pro', { limits: { requestsPerMinute: 100_000 } });
  llm = await start({ apiKey: API_KEY });
  stack = await startSearchStack(db, {
    LLM_BASE_URL: llm.url,
    LLM_API_KEY: API_KEY,
    LLM_MODEL: 'stand-in-model',
    LLM_CONTEXT_TOKENS: '8192',
  });
  ({ key } = await createKeyedUser(db.sql));
  await addVideos(db.sql, channelId, [
    { videoId: v.talk, title: 'A long talk' },
    { videoId: v.refused, title: 'Refused' },
  ]);
  for (const videoId of Object.values(v)) {
    await addTrack(db.sql, { videoId, language: 'en', kind: 'auto', text: vttOf(LINES, 30) });
    await db.sql.begin((tx) => refreshTranscript(tx, videoId));
  }
});

afterAll(async () => {
  await stack?.close();
  await llm?.close();
  await db?.drop();
});

const generate = (videoId: string) =>
  stack.api.call('/api/summary/generate', {
    key,
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ videoId }),
  });
const settled = (videoId: string) =>
  eventually(async () => {
    const { body } = await stack.api.call(`/api/summary/${videoId}`, { key });
    return body.data.status === 'generating' ? undefined : body.data;
  }, `the summary of ${videoId} settles`);

describe('summaries written by an OpenAI-compatible LLM', () => {
  it('stores what the model wrote, with its model name and token usage', async () => {
    expect((await generate(v.talk)).status).toBe(202);
    const summary = await settled(v.talk);
    expect(summary).toMatchObject({ status: 'generated', llmModel: 'stand-in-model', language: 'en' });
    expect(summary.tokensUsed).toBeGreaterThan(0);
    expect(summary.tokensUsed).toBe(summary.tokenUsage.prompt + summary.tokenUsage.completion);
    const requests = llm.requests().filter((request) => request.status === 200);
    expect(requests.length).toBeGreaterThan(0);
    for (const request of requests) {
      expect(request.authorization).toBe(`Bearer ${API_KEY}`);
      expect(request.body.model).toBe('stand-in-model');
      expect(request.body.response_format?.type).toBe('json_schema');
    }
    const lastSecond = 30 * LINES.length;
    for (const point of summary.keyPoints) expect(point.startSeconds).toBeLessThanOrEqual(lastSecond);
  });

  it('a refused request fails the summary with summary:error, telling neither the endpoint nor the key, gives the unit back; asking again starts over', async () => {
    const charged = async () =>
      (
        await db.sql<
          { used: number }[]
        >`select coalesce(sum(used), 0)::int as used from usage_counters where limit_name = 'summaryGenerationsPerDay'`
      )[0]!.used;
    const before = await charged();
    llm.enqueue('unauthorized');
    expect((await generate(v.refused)).status).toBe(202);
    const failed = await settled(v.refused);
    // The failed generation delivered nothing: its summaryGenerationsPerDay unit is given back, and its error event says so.
    expect(await charged()).toBe(before);
    const [logged] = await db.sql<{ payload: { refunded: boolean } }[]>`
      select e.payload from events e join summaries s on e.stream = 'summary:' || s.id where s.video_id = ${v.refused} and e.type = 'summary:error'`;
    expect(logged!.payload.refunded).toBe(true);
    expect(failed.status).toBe('failed');
    expect(failed.error).toContain('refused');
    expect(failed.error).not.toContain(llm.url);
    expect(failed.error).not.toContain('127.0.0.1');
    expect(failed.error).not.toContain(API_KEY);

    const streamed = await readStream(`${stack.api.url}/api/summary/${v.refused}/stream`, { key });
    expect(streamed.events.map((event) => event.event)).toEqual(['summary:error']);
    expect(streamed.events[0]!.data).toMatchObject({ message: failed.error, refunded: true });

    const again = await generate(v.refused);
    expect(again.status).toBe(202);
    // The new attempt's stream holds only its own events: it ends with summary:complete, not the old error.
    const restreamed = await readStream(`${stack.api.url}/api/summary/${v.refused}/stream`, { key });
    expect(restreamed.events.at(-1)!.event).toBe('summary:complete');
    expect(restreamed.events.map((event) => event.event)).not.toContain('summary:error');
    expect((await settled(v.refused)).status).toBe('generated');
  });
});

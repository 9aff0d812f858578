import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLlmClient } from '../../core/llm/openaiClient.ts';
import { createLlmSummaryGenerator } from '../../core/summaries/llmSummariser.ts';
import { summaryContent, type SummaryProgress } from '../../core/summaries/summary.ts';
import type { TranscriptCue } from '../../core/subtitles/transcriptCue.ts';
import { fakeAnswer, start, type ChatRequest, type OpenAiServer } from '../kit/servers/openai-server.ts';
import { TALK_WORDS } from '../kit/talkWords.ts';

/** A talk of `seconds` with a cue every 3 s of about `wordsPerCue` words (2 h ≈ 20,000 words). */
function transcript(seconds: number, wordsPerCue = 8.4): TranscriptCue[] {
  const cues: TranscriptCue[] = [];
  let words = 0;
  for (let start = 0; start < seconds; start += 3) {
    const count = Math.round((start / 3 + 1) * wordsPerCue) - words;
    const text = Array.from({ length: count }, (_, index) => TALK_WORDS[(words + index * 7 + start) % TALK_WORDS.length]).join(' ');
    words += count;
    cues.push({ start: start + 0.25, end: start + 3, text });
  }
  return cues;
}

/** What a request costs at 3 characters a token (the prompt and the schema), plus the answer it allows. */
function requestTokens(request: ChatRequest): number {
  const prompt = request.messages.reduce((sum, message) => sum + message.content.length, 0);
  return Math.ceil((prompt + JSON.stringify(request.response_format ?? {}).length) / 3) + (request.max_tokens ?? 0);
}

const schemaName = (request: ChatRequest) =>
  request.response_format?.type === 'json_schema' ? request.response_format.json_schema.name : undefined;

let server: OpenAiServer;
afterEach(() => server.close());

function generator(contextTokens: number) {
  return createLlmSummaryGenerator(
    createLlmClient({
      baseUrl: server.url,
      model: 'test-model',
      contextTokens,
      concurrency: 2,
      timeoutMs: 10_000,
      retries: 1,
      minRetryDelayMs: 10,
    }),
  );
}

describe('the LLM summariser', () => {
  beforeEach(async () => {
    server = await start();
  });

  it('summarises a 2-hour transcript with an 8k-token model in chunks that each fit the context', async () => {
    const cues = transcript(7_200);
    expect(cues.reduce((sum, cue) => sum + cue.text.split(' ').length, 0)).toBeGreaterThanOrEqual(20_000);
    const progress: SummaryProgress[] = [];
    const summary = await generator(8192).summarise(
      { videoId: 'dQw4w9WgXcQ', title: 'A long talk', language: 'en-GB', cues },
      { onProgress: (step) => progress.push(step) },
    );

    const requests = server.requests().map((entry) => entry.body);
    const chunks = requests.filter((request) => schemaName(request) === 'partial_summary');
    expect(chunks.length).toBeGreaterThanOrEqual(4);
    for (const request of requests) expect(requestTokens(request)).toBeLessThanOrEqual(8192);

    // The chunks cover the transcript in order, each line once.
    const parts = chunks
      .map((request) => request.messages[1]!.content)
      .sort((a, b) => Number(/Part (\d+) of/.exec(a)![1]) - Number(/Part (\d+) of/.exec(b)![1]));
    const starts = parts.flatMap((part) => [...part.matchAll(/^\[(\d+)\] /gm)].map((match) => Number(match[1])));
    expect(starts[0]).toBe(0);
    expect(starts.at(-1)).toBeGreaterThan(7_000);
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    expect(new Set(starts).size).toBe(starts.length);

    expect(summaryContent.safeParse(summary).success).toBe(true);
    expect(summary.llmModel).toBe('test-model');
    const times = summary.keyPoints.map((point) => point.startSeconds);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    for (const time of times) {
      expect(time).toBeGreaterThanOrEqual(0);
      expect(time).toBeLessThanOrEqual(7_200);
    }

    const used = server
      .requests()
      .reduce(
        (sum, entry) => ({ prompt: sum.prompt + entry.usage!.prompt_tokens, completion: sum.completion + entry.usage!.completion_tokens }),
        { prompt: 0, completion: 0 },
      );
    expect(summary.tokensUsed).toEqual(used);

    const chunkSteps = progress.filter((step) => step.stage === 'chunk');
    expect(chunkSteps.map((step) => step.chunk)).toEqual(chunks.map((_, index) => index + 1));
    expect(chunkSteps.every((step) => step.of === chunks.length)).toBe(true);
    expect(progress.at(-1)!.stage).toBe('combining');
    expect(progress.map((step) => step.percent)).toEqual([...progress.map((step) => step.percent)].sort((a, b) => a - b));
  });

  it('combines in rounds when the partial summaries do not fit one call', async () => {
    await generator(4096).summarise({ videoId: 'dQw4w9WgXcQ', title: null, language: null, cues: transcript(7_200) });
    const requests = server.requests().map((entry) => entry.body);
    const rounds = requests.filter(
      (request) => schemaName(request) === 'partial_summary' && request.messages[1]!.content.startsWith('Summaries of'),
    );
    expect(rounds.length).toBeGreaterThan(0);
    expect(requests.filter((request) => schemaName(request) === 'video_summary')).toHaveLength(1);
    for (const request of requests) expect(requestTokens(request)).toBeLessThanOrEqual(4096);
  });

  it('summarises a short transcript in one call, in the language hinted', async () => {
    const progress: SummaryProgress[] = [];
    const summary = await generator(8192).summarise(
      { videoId: 'dQw4w9WgXcQ', title: 'Short', language: 'de', cues: transcript(120) },
      { onProgress: (step) => progress.push(step) },
    );
    expect(server.requests()).toHaveLength(1);
    expect(schemaName(server.requests()[0]!.body)).toBe('video_summary');
    expect(server.requests()[0]!.body.messages[0]!.content).toContain('(probably "de")');
    expect(progress).toEqual([{ stage: 'chunk', chunk: 1, of: 1, percent: 90 }]);
    expect(summaryContent.safeParse(summary).success).toBe(true);
  });

  it("puts the model's key points back in video order, on moments of the transcript", async () => {
    await server.close();
    // A careless model: key points backwards, one past the end, one between two lines.
    server = await start({
      answer: (request) => {
        const answer = fakeAnswer(request) as { keyPoints: Array<{ text: string; startSeconds: number }> };
        answer.keyPoints = [
          { text: 'after the end', startSeconds: 99_999 },
          { text: 'in between', startSeconds: 61 },
          { text: 'at the start', startSeconds: 0 },
        ];
        return answer;
      },
    });
    const cues = transcript(300);
    const summary = await generator(8192).summarise({ videoId: 'dQw4w9WgXcQ', title: null, language: null, cues });
    const lineStarts = new Set(cues.map((cue) => Math.floor(cue.start)));
    expect(summary.keyPoints.map((point) => point.text)).toEqual(['at the start', 'in between', 'after the end']);
    const times = summary.keyPoints.map((point) => point.startSeconds);
    expect(times[0]).toBe(0);
    expect(times[2]).toBeLessThanOrEqual(297);
    for (const time of times) expect(lineStarts.has(time)).toBe(true);
  });

  it('fails on a transcript with no text', async () => {
    await expect(
      generator(8192).summarise({ videoId: 'dQw4w9WgXcQ', title: null, language: null, cues: [{ start: 0, end: 1, text: '  ' }] }),
    ).rejects.toThrow('no text');
    expect(server.requests()).toHaveLength(0);
  });
});

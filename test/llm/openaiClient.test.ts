import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { describeGeneratorFailure } from '../../core/llm/describeFailure.ts';
import { LlmError } from '../../core/llm/llmError.ts';
import { createLlmClient, type LlmClientOptions } from '../../core/llm/openaiClient.ts';
import { start, type OpenAiServer } from '../kit/servers/openai-server.ts';

const API_KEY = 'sk-test-0123456789';
const wordCount = z.object({ word: z.string().min(3), count: z.number().int().min(0) });
const request = { system: 'You count words.', user: '[12] hello there world', schema: wordCount, schemaName: 'word_count' };
const expected = { word: 'hello there world', count: 12 };

let server: OpenAiServer;

beforeEach(async () => {
  server = await start({ apiKey: API_KEY });
});
afterEach(() => server.close());

function client(overrides: Partial<LlmClientOptions> = {}) {
  return createLlmClient({
    baseUrl: server.url,
    apiKey: API_KEY,
    model: 'test-model',
    contextTokens: 8192,
    concurrency: 2,
    timeoutMs: 5_000,
    retries: 2,
    minRetryDelayMs: 10,
    ...overrides,
  });
}

async function failure(promise: Promise<unknown>): Promise<LlmError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(LlmError);
  return error as LlmError;
}

const userMessage = (index: number) => server.requests()[index]!.body.messages.find((message) => message.role === 'user')!.content;
const usageOf = (index: number) => server.requests()[index]!.usage!;

describe('the OpenAI-compatible client', () => {
  it('asks with a strict json_schema built from the zod schema and returns the checked value with its usage', async () => {
    const result = await client().completeJson(request);
    expect(result.value).toEqual(expected);
    const [sent] = server.requests();
    expect(server.requests()).toHaveLength(1);
    expect(sent!.authorization).toBe(`Bearer ${API_KEY}`);
    expect(sent!.body.model).toBe('test-model');
    expect(sent!.body.messages.map((message) => message.role)).toEqual(['system', 'user']);
    const format = sent!.body.response_format;
    expect(format?.type).toBe('json_schema');
    if (format?.type !== 'json_schema') return;
    expect(format.json_schema).toMatchObject({ name: 'word_count', strict: true });
    expect(format.json_schema.schema).toMatchObject({ type: 'object', required: ['word', 'count'], additionalProperties: false });
    expect(result.usage).toEqual({ prompt: usageOf(0).prompt_tokens, completion: usageOf(0).completion_tokens });
    expect(result.usage.prompt).toBeGreaterThan(0);
  });

  it('sends no Authorization header without a key, and max_tokens when asked', async () => {
    await server.close();
    server = await start();
    await client({ apiKey: undefined }).completeJson({ ...request, maxOutputTokens: 300 });
    expect(server.requests()[0]!.authorization).toBeUndefined();
    expect(server.requests()[0]!.body.max_tokens).toBe(300);
  });

  it('waits at least Retry-After (seconds) after a 429, then succeeds', async () => {
    server.enqueue({ type: 'rateLimit', retryAfter: '1' });
    const started = performance.now();
    const result = await client().completeJson(request);
    expect(performance.now() - started).toBeGreaterThanOrEqual(990);
    expect(result.value).toEqual(expected);
    expect(server.requests().map((entry) => entry.status)).toEqual([429, 200]);
  });

  it('understands Retry-After as an HTTP date', async () => {
    server.enqueue({ type: 'rateLimit', retryAfter: new Date(Date.now() + 2_000).toUTCString() });
    const started = performance.now();
    await client().completeJson(request);
    // The date has whole seconds, so at least one of the two seconds is left to wait.
    expect(performance.now() - started).toBeGreaterThanOrEqual(990);
  });

  it('retries a 500, and gives up after the retries with a message naming the endpoint and status', async () => {
    server.enqueue('serverError');
    expect((await client().completeJson(request)).value).toEqual(expected);
    expect(server.requests()).toHaveLength(2);

    server.enqueue('serverError', 'serverError', 'serverError');
    const error = await failure(client().completeJson(request));
    expect(error.kind).toBe('unavailable');
    expect(error.message).toContain(`${server.url}/chat/completions answered 500`);
    expect(error.message).toContain('3 attempts');
    expect(server.requests()).toHaveLength(5);
  });

  it('retries a malformed answer once, telling the model what was wrong, and adds up the usage of both calls', async () => {
    server.enqueue('malformed');
    const result = await client().completeJson(request);
    expect(result.value).toEqual(expected);
    expect(server.requests()).toHaveLength(2);
    expect(userMessage(0)).toBe(request.user);
    expect(userMessage(1)).toContain(request.user);
    expect(userMessage(1)).toMatch(/previous answer was rejected: not valid JSON/);
    expect(result.usage).toEqual({
      prompt: usageOf(0).prompt_tokens + usageOf(1).prompt_tokens,
      completion: usageOf(0).completion_tokens + usageOf(1).completion_tokens,
    });
  });

  it('names the schema violation in the retry', async () => {
    server.enqueue('schemaViolation');
    expect((await client().completeJson(request)).value).toEqual(expected);
    expect(userMessage(1)).toMatch(/does not fit the schema: word: .*count: /);
  });

  it('fails with a clear message when the answer is malformed twice', async () => {
    server.enqueue('malformed', 'schemaViolation');
    const error = await failure(client().completeJson(request));
    expect(error.kind).toBe('malformed');
    expect(error.message).toMatch(
      /answered twice with JSON that does not fit the word_count schema; last problem: the JSON does not fit the schema: word:/,
    );
    expect(server.requests()).toHaveLength(2);
  });

  it('says when an answer was cut off at max_tokens', async () => {
    const error = await failure(client().completeJson({ ...request, maxOutputTokens: 2 }));
    expect(error.message).toContain('cut off at the output token limit');
  });

  it('accepts JSON wrapped in a Markdown fence', async () => {
    server.enqueue({ type: 'answer', content: '```json\n{"word": "fenced", "count": 3}\n```' });
    expect((await client().completeJson(request)).value).toEqual({ word: 'fenced', count: 3 });
  });

  it('counts usage as 0 when the server omits it', async () => {
    server.enqueue({ type: 'answer', usage: false });
    expect((await client().completeJson(request)).usage).toEqual({ prompt: 0, completion: 0 });
  });

  it('retries a call that times out, then fails saying so', async () => {
    server.enqueue('hang', 'hang');
    const error = await failure(client({ timeoutMs: 300, retries: 1 }).completeJson(request));
    expect(error.kind).toBe('unavailable');
    expect(error.message).toContain('no answer within 300 ms');
    expect(server.requests()).toHaveLength(2);
  });

  it.each(['reset', 'truncated'] as const)('retries an answer whose body breaks off mid-stream (%s) like a 5xx', async (ending) => {
    server.enqueue({ type: 'brokenBody', ending });
    const result = await client().completeJson(request);
    expect(result.value).toEqual(expected);
    expect(server.requests().map((entry) => entry.behaviour)).toEqual(['brokenBody', 'answer']);
  });

  it("gives up on bodies that keep breaking off with an unavailable error naming the endpoint, never a JSON parser's message", async () => {
    server.enqueue(
      { type: 'brokenBody', ending: 'truncated' },
      { type: 'brokenBody', ending: 'reset' },
      { type: 'brokenBody', ending: 'truncated' },
    );
    const error = await failure(client().completeJson(request));
    expect(error.kind).toBe('unavailable');
    expect(error.message).toBe(`${server.url}/chat/completions: the answer's body broke off or is not JSON (gave up after 3 attempts)`);
    expect(describeGeneratorFailure(error)).toBe('the language model did not answer, even after retries; try again later');
    expect(server.requests()).toHaveLength(3);
  });

  it('retries connection failures', async () => {
    const url = server.url;
    await server.close();
    const error = await failure(
      createLlmClient({
        baseUrl: url,
        model: 'm',
        contextTokens: 8192,
        concurrency: 1,
        timeoutMs: 1_000,
        retries: 1,
        minRetryDelayMs: 10,
      }).completeJson(request),
    );
    expect(error.kind).toBe('unavailable');
    expect(error.message).toContain('2 attempts');
  });

  it('fails at once on a 401, naming the endpoint and status but never the key', async () => {
    const wrongKey = 'sk-wrong-secret-key';
    const error = await failure(client({ apiKey: wrongKey }).completeJson(request));
    expect(error.kind).toBe('rejected');
    expect(error.details.status).toBe(401);
    expect(error.message).toContain(`${server.url}/chat/completions answered 401`);
    expect(error.message).not.toContain(wrongKey);
    expect(server.requests()).toHaveLength(1);
  });

  it.each([400, 403, 404, 422])('fails at once on a %i', async (status) => {
    server.enqueue({ type: 'error', status, message: `model not usable (${status})` });
    const error = await failure(client().completeJson(request));
    expect(error.kind).toBe('rejected');
    expect(error.message).toContain(`answered ${status}: model not usable`);
    expect(server.requests()).toHaveLength(1);
  });

  it('falls back to json_object mode with the schema in the system prompt when json_schema is refused, once for the client', async () => {
    await server.close();
    server = await start({ refuseJsonSchema: true });
    const llm = client({ apiKey: undefined });
    expect((await llm.completeJson(request)).value).toEqual(expected);
    expect((await llm.completeJson(request)).value).toEqual(expected);
    const formats = server.requests().map((entry) => entry.body.response_format?.type);
    expect(formats).toEqual(['json_schema', 'json_object', 'json_object']);
    expect(server.requests()[0]!.status).toBe(400);
    const system = server.requests()[1]!.body.messages[0]!.content;
    expect(system.startsWith(request.system)).toBe(true);
    const schemaLine = system.split('\n').find((line) => line.startsWith('{'))!;
    expect(JSON.parse(schemaLine)).toMatchObject({ type: 'object', properties: { word: { type: 'string' }, count: { type: 'integer' } } });
  });

  it('keeps at most `concurrency` calls in flight', async () => {
    await server.close();
    server = await start({ latencyMs: 100 });
    const llm = client({ apiKey: undefined, concurrency: 3 });
    const results = await Promise.all(Array.from({ length: 9 }, () => llm.completeJson(request)));
    expect(results.every((result) => result.value.count === 12)).toBe(true);
    expect(server.requests()).toHaveLength(9);
    expect(server.maxInFlight()).toBe(3);
  });

  it('stops when the caller aborts, without retrying', async () => {
    server.enqueue('hang');
    const controller = new AbortController();
    const call = client().completeJson({ ...request, signal: controller.signal });
    setTimeout(() => controller.abort(new Error('job cancelled')), 100);
    await expect(call).rejects.toThrow('job cancelled');
    expect(server.requests()).toHaveLength(1);
  });
});

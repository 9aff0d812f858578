import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import pRetry, { AbortError } from 'p-retry';
import { z } from 'zod';
import type { Logger } from '../log.ts';
import { LlmError } from './llmError.ts';
import type { JsonRequest, LlmClient, TokenUsage } from './types.ts';

export interface LlmClientOptions {
  /** An OpenAI-compatible API root, e.g. https://api.openai.com/v1 or http://localhost:11434/v1. */
  baseUrl: string;
  apiKey?: string;
  model: string;
  contextTokens: number;
  /** Calls in flight at once for this client (LLM_CONCURRENCY). */
  concurrency: number;
  /** One HTTP attempt's limit (LLM_TIMEOUT_MS). */
  timeoutMs: number;
  log?: Logger;
  /** Retries of transient failures (429, 5xx, timeouts, connection errors) after the first attempt. */
  retries?: number;
  /** First back-off delay; doubles (randomised) up to 30 s. */
  minRetryDelayMs?: number;
}

const DEFAULT_RETRIES = 4;
const MAX_RETRY_DELAY_MS = 30_000;
/** A Retry-After beyond this is a quota reset, not a pause: wait this long and let the retries decide. */
const MAX_RETRY_AFTER_MS = 60_000;
/** 408 and 409 are what OpenAI's own SDK retries besides 429 and 5xx. */
const TRANSIENT_STATUS = (status: number) => status === 408 || status === 409 || status === 429 || status >= 500;
/** What servers without structured outputs (older llama.cpp, LM Studio, vLLM builds) say about json_schema. */
const SCHEMA_FORMAT_REFUSED = /response_format|json_schema/i;
const PROBLEM_LIMIT = 600;

type ResponseFormat = NonNullable<ChatCompletionCreateParamsNonStreaming['response_format']>;

/** An LlmClient over an OpenAI-compatible chat-completions endpoint, with our own retries and concurrency cap. */
export function createLlmClient(options: LlmClientOptions): LlmClient {
  const endpoint = `${displayUrl(options.baseUrl)}/chat/completions`;
  const openai = new OpenAI({
    // The SDK insists on a key; local servers need none, so none is sent (the null header drops it).
    apiKey: options.apiKey ?? 'unused',
    ...(options.apiKey ? {} : { defaultHeaders: { Authorization: null } }),
    baseURL: options.baseUrl,
    organization: null,
    project: null,
    maxRetries: 0,
    timeout: options.timeoutMs,
    logLevel: 'off',
  });
  const limit = createLimiter(options.concurrency);
  const context: CallContext = { openai, endpoint, options, jsonSchemaMode: true };
  return {
    model: options.model,
    contextTokens: options.contextTokens,
    // A signal of its own per call: the SDK and p-retry each listen on it, and a caller's one signal
    // shared by many calls (a long transcript's chunks) would trip Node's listener-leak warning.
    completeJson: (request) =>
      limit(() => completeJson(context, request.signal ? { ...request, signal: AbortSignal.any([request.signal]) } : request)),
  };
}

interface CallContext {
  openai: OpenAI;
  endpoint: string;
  options: LlmClientOptions;
  /** Cleared for the client's lifetime once the server refuses json_schema response formats. */
  jsonSchemaMode: boolean;
}

/** Asks once, and once more with the validation error if the answer does not satisfy the schema. */
async function completeJson<S extends z.ZodType>(
  context: CallContext,
  request: JsonRequest<S>,
): Promise<{ value: z.output<S>; usage: TokenUsage }> {
  const usage: TokenUsage = { prompt: 0, completion: 0 };
  let problem: string | undefined;
  for (let attempt = 1; attempt <= 2; attempt++) {
    const user = problem === undefined ? request.user : `${request.user}\n\n${retryNote(problem)}`;
    const completion = await requestCompletion(context, request, user);
    usage.prompt += completion.usage?.prompt_tokens ?? 0;
    usage.completion += completion.usage?.completion_tokens ?? 0;
    const checked = checkAnswer(completion, request.schema);
    if (checked.ok) return { value: checked.value, usage };
    problem = checked.problem;
    context.options.log?.warn('LLM answer rejected', {
      endpoint: context.endpoint,
      model: context.options.model,
      schema: request.schemaName,
      attempt,
      problem,
    });
  }
  throw new LlmError(
    'malformed',
    `${context.endpoint} (${context.options.model}) answered twice with JSON that does not fit the ${request.schemaName} schema; last problem: ${problem}`,
  );
}

/** Told to the model after a rejected answer; kept short so the retry fits the same budget. */
function retryNote(problem: string): string {
  return `Your previous answer was rejected: ${problem}\nAnswer again with one JSON object that satisfies the schema, and nothing else.`;
}

/** One completion, retried with back-off on transient failures; falls back to json_object mode when json_schema is refused. */
async function requestCompletion<S extends z.ZodType>(
  context: CallContext,
  request: JsonRequest<S>,
  user: string,
): Promise<ChatCompletion> {
  const { options, endpoint } = context;
  const attempt = async (): Promise<ChatCompletion> => {
    const schemaMode = context.jsonSchemaMode;
    try {
      return await send(context, request, user, schemaMode);
    } catch (error) {
      // Checked against the mode this request used: a concurrent call may have switched already.
      if (schemaMode && isSchemaFormatRefusal(error)) {
        if (context.jsonSchemaMode)
          options.log?.warn('LLM endpoint refuses json_schema response formats; using json_object mode from now on', {
            endpoint,
            message: (error as APIError).message,
          });
        context.jsonSchemaMode = false;
        return attempt();
      }
      throw classify(error, context, request.signal);
    }
  };
  return pRetry(attempt, {
    retries: options.retries ?? DEFAULT_RETRIES,
    minTimeout: options.minRetryDelayMs ?? 1_000,
    maxTimeout: MAX_RETRY_DELAY_MS,
    factor: 2,
    randomize: true,
    ...(request.signal ? { signal: request.signal } : {}),
    // Retry-After is waited here, before p-retry's own back-off: the server said when, the back-off adds the jitter.
    onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
      const retryAfterMs = error instanceof LlmError ? error.details.retryAfterMs : undefined;
      options.log?.warn('LLM call failed', { endpoint, attempt: attemptNumber, retriesLeft, retryAfterMs, err: error });
      if (retryAfterMs && retriesLeft > 0) await sleep(retryAfterMs, request.signal);
    },
  }).catch((error: unknown) => {
    if (error instanceof LlmError && error.kind === 'unavailable') {
      throw new LlmError(
        'unavailable',
        `${error.message} (gave up after ${(options.retries ?? DEFAULT_RETRIES) + 1} attempts)`,
        error.details,
      );
    }
    throw error;
  });
}

/** What an attempt throws: transient failures as they are (p-retry retries them), anything else wrapped to stop retrying. */
function classify(error: unknown, context: CallContext, signal: AbortSignal | undefined): Error {
  if (signal?.aborted || error instanceof APIUserAbortError) return new AbortError(abortReason(signal));
  const failure = toLlmError(error, context.endpoint, context.options);
  // Not the model's failure (a bad schema, a bug): thrown as it is, once.
  if (!failure) return new AbortError(error instanceof Error ? error : new Error(String(error)));
  return failure.kind === 'unavailable' ? failure : new AbortError(failure);
}

function send<S extends z.ZodType>(
  context: CallContext,
  request: JsonRequest<S>,
  user: string,
  schemaMode: boolean,
): Promise<ChatCompletion> {
  const system = schemaMode ? request.system : `${request.system}\n\n${schemaInstructions(request.schema)}`;
  const body: ChatCompletionCreateParamsNonStreaming = {
    model: context.options.model,
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ],
    response_format: schemaMode ? schemaResponseFormat(request.schema, request.schemaName) : { type: 'json_object' },
    ...(request.maxOutputTokens ? { max_tokens: request.maxOutputTokens } : {}),
  };
  return readCompletion(
    context,
    context.openai.chat.completions.create(body, request.signal ? { signal: request.signal } : {}).asResponse(),
  );
}

/**
 * The body of a 200, read here rather than by the SDK: a body that breaks off (the connection reset
 * after the headers, JSON cut short) is a transient failure of the endpoint, retried like a 5xx, and
 * no parser's message reaches the caller.
 */
async function readCompletion(context: CallContext, answered: Promise<Response>): Promise<ChatCompletion> {
  const response = await answered;
  try {
    return JSON.parse(await response.text()) as ChatCompletion;
  } catch (error) {
    context.options.log?.warn('LLM answer body unreadable', { endpoint: context.endpoint, err: error });
    throw new LlmError('unavailable', `${context.endpoint}: the answer's body broke off or is not JSON`);
  }
}

/**
 * Strict structured outputs when the schema allows them (the SDK's own zod conversion: every field
 * required, no extra properties), else the plain JSON schema as a non-binding hint. Either way the
 * answer is checked with the zod schema afterwards.
 */
function schemaResponseFormat(schema: z.ZodType, name: string): ResponseFormat {
  try {
    return { type: 'json_schema', json_schema: zodResponseFormat(schema, name).json_schema };
  } catch {
    return {
      type: 'json_schema',
      json_schema: { name, strict: false, schema: z.toJSONSchema(schema, { target: 'draft-7', io: 'input' }) },
    };
  }
}

/** json_object mode has no schema field: the model reads it from the system prompt, on one line. */
function schemaInstructions(schema: z.ZodType): string {
  const { $schema: _dialect, ...jsonSchema } = z.toJSONSchema(schema, { io: 'input' });
  return `Answer with one JSON object, and nothing else, that satisfies this JSON schema:\n${JSON.stringify(jsonSchema)}`;
}

function isSchemaFormatRefusal(error: unknown): boolean {
  return error instanceof APIError && error.status === 400 && SCHEMA_FORMAT_REFUSED.test(error.message);
}

type Checked<T> = { ok: true; value: T } | { ok: false; problem: string };

/** Parses and validates the answer; the problem, if any, is worded for the model and for the error message. */
function checkAnswer<S extends z.ZodType>(completion: ChatCompletion, schema: S): Checked<z.output<S>> {
  const choice = completion.choices?.[0];
  const content = choice?.message?.content;
  if (!content) {
    const refusal = choice?.message?.refusal;
    return { ok: false, problem: refusal ? `the model refused: ${refusal.slice(0, PROBLEM_LIMIT)}` : 'the answer was empty' };
  }
  let json: unknown;
  try {
    json = JSON.parse(stripCodeFence(content));
  } catch (error) {
    const cut = choice.finish_reason === 'length' ? ' (the answer was cut off at the output token limit)' : '';
    return { ok: false, problem: `not valid JSON: ${(error as Error).message}${cut}`.slice(0, PROBLEM_LIMIT) };
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issues = parsed.error.issues.slice(0, 6).map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
  return { ok: false, problem: `the JSON does not fit the schema: ${issues.join('; ')}`.slice(0, PROBLEM_LIMIT) };
}

/** json_object servers sometimes wrap the object in a Markdown fence anyway. */
function stripCodeFence(content: string): string {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/i.exec(content);
  return fenced ? fenced[1]! : content;
}

/** Sorts SDK errors into transient (retried) and definite; messages name the endpoint and status, never the key. */
function toLlmError(error: unknown, endpoint: string, options: LlmClientOptions): LlmError | undefined {
  if (error instanceof LlmError) return error;
  if (error instanceof APIConnectionTimeoutError)
    return new LlmError('unavailable', `${endpoint}: no answer within ${options.timeoutMs} ms`);
  if (error instanceof APIConnectionError) return new LlmError('unavailable', `${endpoint}: ${redact(error.message, options.apiKey)}`);
  if (error instanceof APIError && typeof error.status === 'number') {
    const said = redact(serverMessage(error), options.apiKey);
    const message = `${endpoint} answered ${error.status}${said ? `: ${said}` : ''}`;
    if (TRANSIENT_STATUS(error.status)) {
      const retryAfterMs = retryAfter(error.headers);
      return new LlmError('unavailable', message, { status: error.status, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) });
    }
    return new LlmError('rejected', message, { status: error.status });
  }
  return undefined;
}

function serverMessage(error: APIError): string {
  const body = error.error as { message?: unknown } | undefined;
  const text = typeof body?.message === 'string' ? body.message : '';
  return text.slice(0, 300);
}

/** Retry-After in seconds or as an HTTP date (OpenAI also sends retry-after-ms), capped. */
function retryAfter(headers: Headers | undefined): number | undefined {
  const ms = Number(headers?.get('retry-after-ms'));
  if (headers?.get('retry-after-ms') && Number.isFinite(ms) && ms >= 0) return Math.min(ms, MAX_RETRY_AFTER_MS);
  const value = headers?.get('retry-after')?.trim();
  if (!value) return undefined;
  const seconds = /^\d+(\.\d+)?$/.test(value) ? Number(value) * 1000 : Date.parse(value) - Date.now();
  if (!Number.isFinite(seconds)) return undefined;
  return Math.min(Math.max(0, seconds), MAX_RETRY_AFTER_MS);
}

function redact(text: string, apiKey: string | undefined): string {
  return apiKey ? text.split(apiKey).join('****') : text;
}

/** The base URL as shown in messages: without credentials or a trailing slash. */
function displayUrl(baseUrl: string): string {
  try {
    const url = new URL(baseUrl);
    url.username = '';
    url.password = '';
    return url.toString().replace(/\/+$/, '');
  } catch {
    return baseUrl.replace(/\/+$/, '');
  }
}

function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new Error('the LLM call was aborted');
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** At most `concurrency` tasks running; the rest wait in order (p-limit in a dozen lines). */
function createLimiter(concurrency: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: Array<() => void> = [];
  // A finished task hands its slot straight to the next waiter, so `running` never over- or undercounts.
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else running--;
  };
  return async (task) => {
    if (running < concurrency) running++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await task();
    } finally {
      release();
    }
  };
}

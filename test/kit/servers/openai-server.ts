/**
 * A local stand-in for an OpenAI-compatible chat-completions endpoint (POST /v1/chat/completions),
 * answering in the real wire format: `{id, object: 'chat.completion', created, model, choices:
 * [{index, message: {role: 'assistant', content, refusal}, logprobs, finish_reason}], usage:
 * {prompt_tokens, completion_tokens, total_tokens}}`, and errors as `{error: {message, type, param,
 * code}}` with OpenAI's statuses and texts (llama.cpp's shape for its refusal of json_schema).
 *
 * The default "model" answers any request with JSON built from the schema it was asked for (the
 * response_format's, or in json_object mode the one-line schema in the system prompt) and from the
 * `[seconds] text` lines of the prompt: key points are lines of the prompt at their timestamps.
 *
 * Scriptable: a queue of behaviours for the next requests (answer, 429 with Retry-After, 5xx,
 * malformed JSON, a schema violation, a hang, a body broken mid-stream, llama.cpp's 400 for json_schema, 401), an answer
 * function, a key to check, latency; every request is recorded (headers, body, what was answered).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

interface ChatMessage {
  role: string;
  content: string;
}
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  response_format?:
    | { type: 'text' | 'json_object' }
    | { type: 'json_schema'; json_schema: { name: string; strict?: boolean; schema: JsonSchema } };
  max_tokens?: number;
  [key: string]: unknown;
}
interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  maxLength?: number;
  pattern?: string;
  [key: string]: unknown;
}

type Behaviour =
  /** A 200 answer: `content` (or what it returns), else the default model's; without usage when `usage` is false. */
  | { type: 'answer'; content?: string | ((request: ChatRequest) => string); usage?: boolean }
  | { type: 'rateLimit'; retryAfter?: string }
  | { type: 'serverError'; status?: number }
  /** Any other error status, with OpenAI's body shape. */
  | { type: 'error'; status: number; message?: string; code?: string }
  /** 200 whose content is not JSON (cut off mid-string). */
  | { type: 'malformed' }
  /** 200 whose content is JSON that fits no summary schema. */
  | { type: 'schemaViolation' }
  /** No answer at all, until the client gives up. */
  | { type: 'hang' }
  /** 200 headers, then half the completion's body: the connection reset ('reset'), or ended as if the body were whole ('truncated'). */
  | { type: 'brokenBody'; ending?: 'reset' | 'truncated' }
  /** 400 as llama.cpp builds without structured outputs answer a json_schema response_format. */
  | { type: 'refuseJsonSchema' }
  | { type: 'unauthorized' };

type BehaviourSpec = Behaviour | Behaviour['type'];

interface RecordedRequest {
  path: string;
  authorization: string | undefined;
  body: ChatRequest;
  /** The behaviour that answered ('answer' for the default). */
  behaviour: Behaviour['type'];
  status: number;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

export interface StartOptions {
  /** When set, requests must carry `Authorization: Bearer <apiKey>` (else 401 invalid_api_key). */
  apiKey?: string;
  /** Refuse every json_schema response_format with llama.cpp's 400 (a server without structured outputs). */
  refuseJsonSchema?: boolean;
  latencyMs?: number;
  /** What the default model answers (serialised as the message content); defaults to `fakeAnswer`. */
  answer?: (request: ChatRequest) => unknown;
}

export interface OpenAiServer {
  /** The base URL to give the client (…/v1). */
  url: string;
  close(): Promise<void>;
  /** The next requests are answered like this, in order; then the default model answers again. */
  enqueue(...behaviours: BehaviourSpec[]): void;
  requests(): readonly RecordedRequest[];
  /** The most requests that were being answered at the same time. */
  maxInFlight(): number;
}

const LLAMA_CPP_REFUSAL = 'response_format type must be one of "text" or "json_object", but got: json_schema';

export async function start(options: StartOptions = {}): Promise<OpenAiServer> {
  const queue: Behaviour[] = [];
  const log: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  let inFlight = 0;
  let maxInFlight = 0;
  let counter = 0;

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const raw = await readBody(req);
    if (req.method !== 'POST' || path !== '/v1/chat/completions') {
      return sendError(res, 404, {
        message: `Invalid URL (${req.method} ${path})`,
        type: 'invalid_request_error',
        param: null,
        code: null,
      });
    }
    let body: ChatRequest;
    try {
      body = JSON.parse(raw) as ChatRequest;
    } catch {
      return sendError(res, 400, {
        message: 'We could not parse the JSON body of your request.',
        type: 'invalid_request_error',
        param: null,
        code: null,
      });
    }
    const entry: RecordedRequest = { path, authorization: req.headers.authorization, body, behaviour: 'answer', status: 0 };
    log.push(entry);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.on('close', () => inFlight--);
    if (options.latencyMs) await new Promise((resolve) => setTimeout(resolve, options.latencyMs));
    const behaviour = chooseBehaviour(body, req.headers.authorization);
    entry.behaviour = behaviour.type;
    if (behaviour.type === 'hang') return;
    if (behaviour.type === 'brokenBody') return void (entry.status = breakBody(res, body, behaviour.ending ?? 'reset'));
    entry.status = respond(res, behaviour, body, entry);
  }

  function chooseBehaviour(body: ChatRequest, authorization: string | undefined): Behaviour {
    if (options.apiKey !== undefined && authorization !== `Bearer ${options.apiKey}`) return { type: 'unauthorized' };
    const queued = queue.shift();
    if (queued) return queued;
    if (options.refuseJsonSchema && body.response_format?.type === 'json_schema') return { type: 'refuseJsonSchema' };
    return { type: 'answer' };
  }

  /** A default answer whose body stops halfway. */
  function breakBody(res: ServerResponse, body: ChatRequest, ending: 'reset' | 'truncated'): number {
    const whole = JSON.stringify({
      id: 'chatcmpl-broken',
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: JSON.stringify((options.answer ?? fakeAnswer)(body)), refusal: null },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
    });
    const half = whole.slice(0, whole.length >> 1);
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(ending === 'reset' ? whole : half)),
    });
    if (ending === 'truncated') res.end(half);
    else res.write(half, () => setTimeout(() => res.socket?.resetAndDestroy(), 20));
    return 200;
  }

  function respond(
    res: ServerResponse,
    behaviour: Exclude<Behaviour, { type: 'hang' | 'brokenBody' }>,
    body: ChatRequest,
    entry: RecordedRequest,
  ): number {
    switch (behaviour.type) {
      case 'rateLimit':
        return sendError(
          res,
          429,
          {
            message: `Rate limit reached for ${body.model} on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 1s.`,
            type: 'requests',
            param: null,
            code: 'rate_limit_exceeded',
          },
          { 'retry-after': behaviour.retryAfter ?? '1' },
        );
      case 'serverError':
        return sendError(res, behaviour.status ?? 500, {
          message: 'The server had an error while processing your request. Sorry about that!',
          type: 'server_error',
          param: null,
          code: null,
        });
      case 'error':
        return sendError(res, behaviour.status, {
          message: behaviour.message ?? `request failed with status ${behaviour.status}`,
          type: 'invalid_request_error',
          param: null,
          code: behaviour.code ?? null,
        });
      case 'unauthorized':
        return sendError(res, 401, {
          message: 'Incorrect API key provided: sk-wr***ng. You can find your API key at https://platform.openai.com/account/api-keys.',
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_api_key',
        });
      case 'refuseJsonSchema':
        return sendError(res, 400, { code: 400, message: LLAMA_CPP_REFUSAL, type: 'invalid_request_error' });
      case 'malformed':
        return sendCompletion(res, body, '{"title": "An unfinished answer', entry, true);
      case 'schemaViolation':
        return sendCompletion(res, body, JSON.stringify({ unexpected: true, keyPoints: 'none' }), entry, true);
      case 'answer': {
        const content =
          typeof behaviour.content === 'function'
            ? behaviour.content(body)
            : (behaviour.content ?? JSON.stringify((options.answer ?? fakeAnswer)(body)));
        return sendCompletion(res, body, content, entry, behaviour.usage ?? true);
      }
    }
  }

  function sendCompletion(res: ServerResponse, body: ChatRequest, full: string, entry: RecordedRequest, withUsage: boolean): number {
    // Counted at 4 characters a token; an answer over max_tokens is cut there, as a model's would be.
    const cut = body.max_tokens !== undefined && Math.ceil(full.length / 4) > body.max_tokens;
    const content = cut ? full.slice(0, body.max_tokens! * 4) : full;
    const promptChars = body.messages.reduce((sum, message) => sum + String(message.content).length, 0);
    const usage = { prompt_tokens: Math.ceil(promptChars / 4), completion_tokens: Math.ceil(content.length / 4), total_tokens: 0 };
    usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
    if (withUsage) entry.usage = usage;
    counter++;
    const completion = {
      id: `chatcmpl-standin${counter}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [
        { index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: cut ? 'length' : 'stop' },
      ],
      ...(withUsage ? { usage } : {}),
      system_fingerprint: 'fp_standin',
    };
    res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': `req_standin${counter}` });
    res.end(JSON.stringify(completion));
    return 200;
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendError(res, 500, { message: String(error), type: 'server_error', param: null, code: null });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
    enqueue: (...behaviours) => queue.push(...behaviours.map((spec) => (typeof spec === 'string' ? ({ type: spec } as Behaviour) : spec))),
    requests: () => log,
    maxInFlight: () => maxInFlight,
  };
}

function sendError(res: ServerResponse, status: number, error: Record<string, unknown>, headers: Record<string, string> = {}): number {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ error }));
  return status;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The `[seconds] text` lines of a request's messages, in order. */
function promptLines(request: ChatRequest): Array<{ start: number; text: string }> {
  const user = request.messages
    .filter((message) => message.role === 'user')
    .map((message) => message.content)
    .join('\n');
  return [...user.matchAll(/^\[(\d+)\] (.+)$/gm)].map((match) => ({ start: Number(match[1]), text: match[2]!.trim() }));
}

/** The schema the request asks for: response_format's, or in json_object mode a one-line JSON schema in the system prompt. */
function requestedSchema(request: ChatRequest): JsonSchema | undefined {
  const format = request.response_format;
  if (format?.type === 'json_schema') return format.json_schema.schema;
  const system = request.messages.find((message) => message.role === 'system')?.content ?? '';
  for (const line of system.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const schema = JSON.parse(line) as JsonSchema;
      if (schema.properties) return schema;
    } catch {
      // Not the schema line.
    }
  }
  return undefined;
}

/**
 * The default model: JSON of the requested schema filled from the prompt's lines. An array takes
 * up to four lines spread over the prompt; within an array item strings are that line's text and
 * integers its timestamp, so key points point at moments the prompt gave.
 */
export function fakeAnswer(request: ChatRequest): unknown {
  const schema = requestedSchema(request);
  if (!schema) return { answer: 'no schema was given' };
  const lines = promptLines(request);
  return fill(schema, lines.length > 0 ? lines : [{ start: 0, text: 'nothing was said' }], 0);
}

function fill(schema: JsonSchema, lines: Array<{ start: number; text: string }>, index: number): unknown {
  const type = Array.isArray(schema.type) ? schema.type.find((candidate) => candidate !== 'null') : schema.type;
  const line = lines[Math.min(index, lines.length - 1)]!;
  if (type === 'object') {
    return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([key, property]) => [key, fill(property, lines, index)]));
  }
  if (type === 'array') {
    const count = Math.max(schema.minItems ?? 0, Math.min(lines.length, 4, schema.maxItems ?? 4));
    return Array.from({ length: count }, (_, item) =>
      fill(schema.items ?? { type: 'string' }, lines, Math.floor((item * lines.length) / count)),
    );
  }
  if (type === 'integer' || type === 'number') return line.start;
  if (type === 'boolean') return true;
  if (schema.pattern === '^[a-z]{2,3}$') return 'en';
  const text =
    schema.maxLength !== undefined && schema.maxLength < 60
      ? (line.text.split(' ').find((word) => word.length >= 4) ?? 'topic').toLowerCase()
      : line.text;
  return text.slice(0, schema.maxLength ?? text.length);
}

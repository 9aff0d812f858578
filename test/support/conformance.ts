import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { buildOpenApi } from '../../api/openapi.ts';
import type { Route } from '../../api/http/route.ts';
import { conformanceProblems } from './conformanceProblems.ts';

/**
 * Checks every response a test API server sends against the OpenAPI document of its routes: the
 * status is declared for the operation, the media type is declared for that status, and a JSON or
 * text body is valid against the declared schema (event streams and bytes: the media type only),
 * and each header the document describes (components.headers: RateLimit-*, ETag, Location, …) is
 * sent only where the response declares it.
 * Problems are collected in conformanceProblems.ts and fail the test that caused them (see conformance-setup.ts).
 */

interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: unknown }>; headers?: Record<string, unknown> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; headers?: Record<string, unknown> };
}

interface Checker {
  document: Document;
  /** Document paths in matching order, as patterns. */
  paths: Array<{ template: string; pattern: RegExp }>;
  validators: Map<string, ValidateFunction>;
  ajv: Ajv2020;
}

const checkers = new WeakMap<Route[], Checker>();

function checkerFor(routes: Route[]): Checker {
  let checker = checkers.get(routes);
  if (checker) return checker;
  const document = buildOpenApi(routes, 'test') as unknown as Document;
  // strict: false because the document has OpenAPI keywords (discriminator) besides JSON Schema's.
  const ajv = new Ajv2020({ strict: false, allErrors: true, logger: false });
  addFormats.default(ajv);
  ajv.addSchema(document as object, 'openapi');
  const paths = Object.keys(document.paths).map((template) => ({
    template,
    pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[A-Za-z]+\}/g, '[^/]+')}/?$`),
  }));
  checker = { document, paths, validators: new Map(), ajv };
  checkers.set(routes, checker);
  return checker;
}

const pointer = (...parts: string[]) => parts.map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

function validatorFor(checker: Checker, ...at: string[]): ValidateFunction {
  const ref = `openapi#/${pointer(...at)}`;
  let validate = checker.validators.get(ref);
  if (!validate) {
    validate = checker.ajv.compile({ $ref: ref });
    checker.validators.set(ref, validate);
  }
  return validate;
}

/** What one response was, as the server sent it. */
interface SentResponse {
  method: string;
  path: string;
  status: number;
  headers: Record<string, string>;
  body: Buffer | undefined;
}

const mediaType = (contentType: string | undefined) => contentType?.split(';')[0]?.trim().toLowerCase();
const isJson = (type: string) => type === 'application/json' || type.endsWith('+json');
const isText = (type: string) =>
  (type.startsWith('text/') && type !== 'text/event-stream') || type === 'application/xml' || type === 'application/x-subrip';

/** The problems of one response against the document of `routes`; empty when it conforms. */
function checkResponse(routes: Route[], sent: SentResponse): string[] {
  const checker = checkerFor(routes);
  const what = `${sent.method} ${sent.path} → ${sent.status} ${sent.headers['content-type'] ?? '(no Content-Type)'}`;
  // CORS preflights are answered before any operation (api/http/cors.ts): 204 and no body.
  if (sent.method === 'OPTIONS' && sent.status === 204) return sent.body?.length ? [`${what}: a preflight's answer has no body`] : [];
  const method = sent.method === 'HEAD' ? 'get' : sent.method.toLowerCase();
  const matching = checker.paths.filter((entry) => entry.pattern.test(sent.path));
  const template = matching.find((entry) => checker.document.paths[entry.template]![method])?.template;
  if (!template) {
    // The web app's pages and assets are for people, not part of the API's document.
    if (!sent.path.startsWith('/api/')) return [];
    // Outside every operation the document names two answers in its description: 404 and 405, in the envelope.
    const expected = matching.length ? 405 : 404;
    const problems = sent.status === expected ? [] : [`${what}: the document has no operation here, so only ${expected} may answer`];
    if (expected === 405 && !sent.headers.allow) problems.push(`${what}: a 405 must carry Allow`);
    return [...problems, ...checkBody(checker, what, sent, ['components', 'schemas', 'Error'], 'application/json')];
  }
  const responses = checker.document.paths[template]![method]!.responses;
  const declared = responses[String(sent.status)] ?? responses.default;
  if (!declared)
    return [
      `${what}: status ${sent.status} is not declared for ${method.toUpperCase()} ${template} (declared: ${Object.keys(responses).join(', ')})`,
    ];
  return [
    ...checkHeaders(checker, what, sent, declared.headers ?? {}),
    ...checkContent(checker, what, sent, declared.content ?? {}, [
      'paths',
      template,
      method,
      'responses',
      sent.status in responses ? String(sent.status) : 'default',
    ]),
  ];
}

/** Headers the document describes, sent on a response that does not declare them (a generated client would not read them). */
function checkHeaders(checker: Checker, what: string, sent: SentResponse, declared: Record<string, unknown>): string[] {
  const names = new Set(Object.keys(declared).map((name) => name.toLowerCase()));
  return Object.keys(checker.document.components.headers ?? {})
    .filter((name) => sent.headers[name.toLowerCase()] !== undefined && !names.has(name.toLowerCase()))
    .map((name) => `${what}: header ${name} is sent but not declared for this status (declared: ${[...names].join(', ') || 'none'})`);
}

function checkContent(
  checker: Checker,
  what: string,
  sent: SentResponse,
  content: Record<string, { schema?: unknown }>,
  at: string[],
): string[] {
  const type = mediaType(sent.headers['content-type']);
  if (!type) return Object.keys(content).length && sent.body?.length ? [`${what}: a body without Content-Type`] : [];
  if (!(type in content))
    return [
      `${what}: media type ${type} is not declared for ${sent.status} of ${at[2]!.toUpperCase()} ${at[1]} (declared: ${Object.keys(content).join(', ') || 'no body'})`,
    ];
  if (content[type]!.schema === undefined) return [];
  return checkBody(checker, what, sent, [...at, 'content', type, 'schema'], type);
}

function checkBody(checker: Checker, what: string, sent: SentResponse, at: string[], type: string): string[] {
  if (sent.body === undefined || sent.method === 'HEAD') return [];
  const sentType = mediaType(sent.headers['content-type']);
  if (sentType !== type) return [`${what}: expected ${type}`];
  let value: unknown;
  if (isJson(type)) {
    try {
      value = JSON.parse(sent.body.toString('utf8'));
    } catch (error) {
      return [`${what}: the body is not JSON (${(error as Error).message})`];
    }
  } else if (isText(type)) {
    value = sent.body.toString('utf8');
  } else {
    return [];
  }
  const validate = validatorFor(checker, ...at);
  if (validate(value)) return [];
  const errors = (validate.errors ?? [])
    .slice(0, 5)
    .map((error) => `${error.instancePath || '(body)'} ${error.message} (${error.schemaPath})`);
  return [`${what}: the body does not match #/${at.join('/')}: ${errors.join('; ')}; body: ${sent.body.toString('utf8').slice(0, 300)}`];
}

/** Lets responses of `server` be checked against the document of the routes it serves. */
export function watchConformance(server: Server, routes: Route[]): void {
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => record(req, res, routes));
}

/** The body as the client reads it, its content coding undone. */
const decoded = (body: Buffer, coding: string | undefined) =>
  coding === 'br' ? brotliDecompressSync(body) : coding === 'gzip' ? gunzipSync(body) : body;

/** Keeps what the response writes (bytes of JSON and text bodies) and checks it once it is sent. */
function record(req: IncomingMessage, res: ServerResponse, routes: Route[]): void {
  const chunks: Buffer[] = [];
  const keep = (chunk: unknown, encoding?: unknown) => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
    chunks.push(
      typeof chunk === 'string'
        ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
        : Buffer.from(chunk as Uint8Array),
    );
  };
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    keep(chunk, rest[0]);
    return write(chunk, ...rest);
  }) as typeof res.write;
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    keep(chunk, rest[0]);
    return end(chunk, ...rest);
  }) as typeof res.end;
  const check = (finished: boolean) => {
    if (!res.headersSent) return;
    const headers = Object.fromEntries(
      Object.entries(res.getHeaders()).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : String(value)]),
    );
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    conformanceProblems.push(
      ...checkResponse(routes, {
        method: req.method ?? 'GET',
        path,
        status: res.statusCode,
        headers,
        body: finished ? decoded(Buffer.concat(chunks), headers['content-encoding']) : undefined,
      }),
    );
  };
  let checked = false;
  res.once('finish', () => {
    checked = true;
    check(true);
  });
  // A stream the client left (or the server ended with the connection) is checked by its status and media type.
  res.once('close', () => {
    if (!checked) check(false);
  });
}

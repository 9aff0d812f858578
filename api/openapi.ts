import { STATUS_CODES } from 'node:http';
import { z } from 'zod';
import { errorStatus, type ErrorCode } from '../core/errors.ts';
import { ADMIN_SCOPE } from './http/guard.ts';
import { binaryBody, type Route } from './http/route.ts';
import { fileRequestHeaders } from './http/sendFile.ts';
import { mcpPathItem, mcpSchemas } from './mcp/openapi.ts';
import { apiTags } from './tags.ts';

type JsonSchema = Record<string, unknown>;

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

function parameters(schema: z.ZodType | undefined, location: 'path' | 'query') {
  if (!(schema instanceof z.ZodObject)) return [];
  return Object.entries(schema.shape as Record<string, z.ZodType>).map(([name, field]) => ({
    name,
    in: location,
    required: location === 'path' || !field.safeParse(undefined).success,
    ...(field.description ? { description: field.description } : {}),
    schema: jsonSchema(field, 'input'),
  }));
}

/** The response headers the server sends, declared once (components.headers) and named by the responses that carry them. */
const headerComponents = {
  'X-Request-Id': {
    description:
      "The request's id: the X-Request-Id sent (1–128 characters of A–Z a–z 0–9 . _ : -), else a generated UUID; the server's logs name it",
    required: true,
    schema: { type: 'string' },
  },
  'RateLimit-Limit': {
    description:
      "The maximum of the limit that governed this request (the last one counted: requestsPerMinute, or the operation's own, as ftsQueriesPerMinute)",
    schema: { type: 'integer', minimum: 0 },
  },
  'RateLimit-Remaining': { description: 'Units of that limit left in its window', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Reset': { description: 'Seconds until the window lets a unit through again', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Policy': {
    description: 'The limit as <max>;w=<window seconds> (IETF httpapi RateLimit fields draft)',
    schema: { type: 'string', pattern: '^\\d+;w=\\d+$' },
  },
  'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 0 } },
  ETag: {
    description: 'A strong validator of this representation: send it back in If-None-Match to get 304 while it is current',
    schema: { type: 'string' },
  },
  Location: { description: 'Where to follow the work this answer accepted', schema: { type: 'string', format: 'uri-reference' } },
} satisfies Record<string, JsonSchema>;

type HeaderName = keyof typeof headerComponents;
const headerRefs = (...names: HeaderName[]) => Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));
const RATE_LIMIT_HEADERS: HeaderName[] = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy'];

/** Adds headers to a response (a new object: responses may be shared between operations). */
const withHeaders = (response: Record<string, unknown>, headers: Record<string, unknown>) =>
  Object.keys(headers).length
    ? { ...response, headers: { ...(response.headers as Record<string, unknown> | undefined), ...headers } }
    : response;

/**
 * The headers a route's answer with this status carries: RateLimit-* on a rate-limited route's
 * answers once its limit was counted (all but 401: authentication comes first), ETag on the success
 * and 304 of a conditional read (and a file's 206 and 412), Location where the route sets it.
 */
function routeHeaders(route: Route, status: number): Record<string, unknown> {
  const names: HeaderName[] = [];
  if (route.rateLimited !== false && status !== 401) names.push(...RATE_LIMIT_HEADERS);
  const validated = [route.status ?? 200, 304, 412, ...(route.servesFile ? [206] : [])];
  if ((route.cache || route.servesFile) && validated.includes(status)) names.push('ETag');
  const location =
    route.location?.status === status
      ? { Location: { $ref: '#/components/headers/Location', description: route.location.description } }
      : {};
  return { ...headerRefs(...names), ...location };
}

/** What every answer carries, of every operation (/mcp's too): X-Request-Id, and Retry-After on 429 and 503. */
function withCommonHeaders(paths: Record<string, Record<string, { responses: Record<string, Record<string, unknown>> }>>) {
  return Object.fromEntries(
    Object.entries(paths).map(([path, item]) => [
      path,
      Object.fromEntries(
        Object.entries(item).map(([method, operation]) => [
          method,
          {
            ...operation,
            responses: Object.fromEntries(
              Object.entries(operation.responses).map(([status, response]) => [
                status,
                withHeaders(
                  response,
                  headerRefs('X-Request-Id', ...(status === '429' || status === '503' ? ['Retry-After' as const] : [])),
                ),
              ]),
            ),
          },
        ]),
      ),
    ]),
  );
}

/** Every error a route can answer, as [HTTP status, code]: its own, and those its access rules and inputs bring. */
function errorsOf(route: Route): Array<[number, ErrorCode]> {
  const codes = new Set<ErrorCode>(route.errors ?? []);
  if (route.auth !== 'public') codes.add('UNAUTHORIZED');
  if ((route.auth !== 'public' && route.apiAccess !== false) || route.admin || route.scope) codes.add('FORBIDDEN');
  if (route.feature) codes.add('FEATURE_DISABLED');
  if (route.auth === 'key') codes.add('API_KEY_REQUIRED');
  if (route.rateLimited !== false) codes.add('RATE_LIMITED');
  if (route.params || route.query || route.body) codes.add('INVALID_INPUT');
  // Any request may meet a fault of ours, or a database that is down (even a key lookup needs it).
  codes.add('INTERNAL_ERROR');
  codes.add('SERVICE_UNAVAILABLE');
  const errors = [...codes].map((code): [number, ErrorCode] => [errorStatus[code], code]);
  // A body is read before it is parsed: too large, or not JSON (api/http/input.ts).
  if (route.body) errors.push([413, 'INVALID_INPUT'], [415, 'INVALID_INPUT']);
  return errors;
}

/** The error envelope, its code narrowed to those this status answers with. */
const errorResponse = (codes: ErrorCode[]) => ({
  description: `Error envelope; code is ${codes.join(' or ')}`,
  content: {
    'application/json': {
      schema: {
        allOf: [
          { $ref: '#/components/schemas/Error' },
          { type: 'object', properties: { error: { type: 'object', properties: { code: { enum: codes } } } } },
        ],
      },
    },
  },
});

/** 'search:caption_info' → 'SearchCaptionInfoEvent', 'video.deleted' → 'VideoDeletedEvent' */
const eventComponent = (type: string) =>
  `${type
    .split(/[:_.]/)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('')}Event`;

/**
 * Component schemas of the events of streaming routes, from the event schemas themselves: one per
 * event (its `event:` name, `id:` and JSON `data:`), and per vocabulary a oneOf of them that the
 * route's text/event-stream response names (one schema per event of the stream).
 */
function eventSchemas(routes: Route[]): Record<string, JsonSchema> {
  const schemas: Record<string, JsonSchema> = {};
  for (const vocabulary of new Set(routes.flatMap((route) => (route.events ? [route.events] : [])))) {
    const mapping: Record<string, string> = {};
    for (const event of vocabulary.events) {
      const name = eventComponent(event.type);
      mapping[event.type] = `#/components/schemas/${name}`;
      schemas[name] = {
        type: 'object',
        required: ['event', 'data'],
        properties: {
          event: { type: 'string', const: event.type },
          id: { type: 'string', description: 'resume after this event with Last-Event-ID (absent on events that cannot be resumed after)' },
          data: jsonSchema(event.schema, 'output'),
        },
      };
    }
    schemas[vocabulary.name] = {
      description: 'One Server-Sent Event of the stream: its event name and its data (JSON)',
      oneOf: Object.values(mapping).map(($ref) => ({ $ref })),
      discriminator: { propertyName: 'event', mapping },
    };
  }
  return schemas;
}

const inEnvelope = (schema: z.ZodType) => ({
  schema: { type: 'object', required: ['data'], properties: { data: jsonSchema(schema, 'output') } },
});

/** A body sent as it is: bytes have no schema (OpenAPI 3.1's way for binary content), text and JSON have theirs. */
const rawBody = (schema: z.ZodType) => (schema === binaryBody ? {} : { schema: jsonSchema(schema, 'output') });

/** The success answers of a route: `status` with its JSON envelope, raw media and events, then `alsoAnswers`. */
function successResponses(route: Route): Record<string, unknown> {
  const content = {
    ...(route.response ? { 'application/json': inEnvelope(route.response) } : {}),
    ...Object.fromEntries(Object.entries(route.media ?? {}).map(([type, schema]) => [type, rawBody(schema)])),
    ...(route.events ? { 'text/event-stream': { schema: { $ref: `#/components/schemas/${route.events.name}` } } } : {}),
  };
  const status = route.status ?? 200;
  const responses: Record<string, unknown> = {
    [status]: { description: STATUS_CODES[status], ...(Object.keys(content).length ? { content } : {}) },
  };
  for (const [other, data] of Object.entries(route.alsoAnswers ?? {})) {
    responses[other] = { description: STATUS_CODES[other], ...(data ? { content: { 'application/json': inEnvelope(data) } } : {}) };
  }
  return responses;
}

const ifNoneMatch = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description: 'the ETag of the copy the client has: 304 without a body while it is current',
  schema: { type: 'string' },
};

const headerParameters = Object.entries(fileRequestHeaders).map(([name, description]) => ({
  name,
  in: 'header',
  required: false,
  description,
  schema: { type: 'string' },
}));

/** What a cacheable read (Route.cache, api/http/representation.ts) answers besides 200: not modified, failed preconditions. */
const conditionalResponses = () => ({
  304: {
    description: "Not Modified: the client's copy is current (If-None-Match, If-Modified-Since); no body, and the request counts no quota",
  },
  412: {
    ...errorResponse(['INVALID_INPUT']),
    description: 'Precondition Failed (If-Match, If-Unmodified-Since); error envelope, code INVALID_INPUT',
  },
});

/** What a file route (api/http/sendFile.ts) answers besides 200: one byte range, not modified, failed preconditions. */
function fileResponses(route: Route): Record<string, unknown> {
  const contentRange = (description: string) => ({ 'Content-Range': { description, schema: { type: 'string' } } });
  return {
    206: {
      description: 'Partial Content: one byte range',
      headers: contentRange('bytes a-b/size'),
      content: Object.fromEntries(Object.entries(route.media ?? {}).map(([type, schema]) => [type, rawBody(schema)])),
    },
    ...conditionalResponses(),
    416: {
      ...errorResponse(['INVALID_INPUT']),
      description: 'Range Not Satisfiable; error envelope, code INVALID_INPUT',
      headers: contentRange('bytes */size'),
    },
  };
}

/** The document's groups: those its operations use, in api/tags.ts's order, each with its description. */
function tagsOf(routes: Route[]) {
  const used = new Set([...routes.map((route) => route.tag), ...Object.values(mcpPathItem).flatMap((operation) => operation.tags)]);
  const described = Object.entries(apiTags)
    .filter(([name]) => used.has(name))
    .map(([name, description]) => ({ name, description }));
  // A tag api/tags.ts does not describe is still listed, so the document stays valid (the lint test names it).
  return [...described, ...[...used].filter((name) => !(name in apiTags)).map((name) => ({ name }))];
}

/**
 * The document as served: with the URL clients send requests to (PUBLIC_URL, else the request's
 * origin: api/http/publicOrigin.ts), since generated clients take their base URL from it and a
 * relative "/" has no meaning outside a browser.
 */
export const servedAt = (document: ReturnType<typeof buildOpenApi>, serverUrl: string) => {
  const { openapi, info, ...rest } = document;
  return { openapi, info, servers: [{ url: serverUrl, description: 'this server' }], ...rest };
};

/** OpenAPI 3.1 from the very zod schemas the routes validate with, without servers (servedAt adds them). */
export function buildOpenApi(routes: Route[], version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = route.path.replace(/:([A-Za-z]+)/g, '{$1}');
    const byStatus = new Map<number, ErrorCode[]>();
    for (const [status, code] of errorsOf(route)) byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
    const security = route.auth === 'public' ? [] : [...(route.auth === 'optional' ? [{}] : []), { ApiKeyHeader: [] }, { BearerAuth: [] }];
    const notes = [
      route.description,
      route.scope ? `Needs an API key with ${route.scope}+ scope.` : undefined,
      route.admin ? `Administrators only, with an API key of ${ADMIN_SCOPE} scope.` : undefined,
      route.feature ? `Needs the ${route.feature} feature of the caller's tier.` : undefined,
    ].filter(Boolean);
    paths[path] = {
      ...paths[path],
      [route.method.toLowerCase()]: {
        operationId: `${route.method.toLowerCase()}${path
          .replace(/[{}]/g, '')
          .split('/')
          .filter((part) => part && part !== 'api')
          .map(
            (part) =>
              part[0]!.toUpperCase() + part.slice(1).replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase()),
          )
          .join('')}`,
        summary: route.summary,
        ...(notes.length ? { description: notes.join(' ') } : {}),
        tags: [route.tag],
        security,
        parameters: [
          ...parameters(route.params, 'path'),
          ...parameters(route.query, 'query'),
          ...(route.servesFile ? headerParameters : route.cache ? [ifNoneMatch] : []),
        ],
        ...(route.body
          ? { requestBody: { required: !route.optionalBody, content: { 'application/json': { schema: jsonSchema(route.body, 'input') } } } }
          : {}),
        responses: Object.fromEntries(
          Object.entries({
            ...successResponses(route),
            ...(route.cache ? conditionalResponses() : {}),
            ...(route.servesFile ? fileResponses(route) : {}),
            ...Object.fromEntries([...byStatus].map(([status, codes]) => [String(status), errorResponse(codes)])),
          }).map(([status, response]) => [status, withHeaders(response as Record<string, unknown>, routeHeaders(route, Number(status)))]),
        ),
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Afterimage API',
      version,
      license: { name: 'MIT', identifier: 'MIT' },
      description:
        "Finds, keeps and searches the metadata of videos from YouTube channels, including deleted ones. Successes are {data: …} unless an operation declares another media type (files, event streams, this document); failures are {error: {code, message}} (components.schemas.Error), including those no operation can declare: an unknown path is 404 NOT_FOUND, a method a path does not have is 405 NOT_FOUND with an Allow header, malformed HTTP is 400 INVALID_INPUT, headers over the server's limit 431 and a request not received in time 408, both INVALID_INPUT with Connection: close.",
    },
    tags: tagsOf(routes),
    components: {
      securitySchemes: {
        ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        BearerAuth: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer tsk_…' },
      },
      headers: headerComponents,
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message'],
              properties: { code: { type: 'string', enum: Object.keys(errorStatus) }, message: { type: 'string' }, details: {} },
            },
          },
        },
        ...eventSchemas(routes),
        ...mcpSchemas,
      },
    },
    // createApi serves /mcp beside every route set.
    paths: withCommonHeaders({ ...paths, '/mcp': mcpPathItem } as Parameters<typeof withCommonHeaders>[0]),
  };
}

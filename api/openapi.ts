import { z } from 'zod';
import { errorStatus, type ErrorCode } from '../core/errors.ts';
import type { Route } from './http/route.ts';

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

function errorsOf(route: Route): ErrorCode[] {
  const codes = new Set<ErrorCode>(route.errors ?? []);
  if (route.auth !== 'public') ['UNAUTHORIZED', 'FORBIDDEN'].forEach((code) => codes.add(code as ErrorCode));
  if (route.auth === 'key') codes.add('API_KEY_REQUIRED');
  if (route.rateLimited !== false) codes.add('RATE_LIMITED');
  if (route.params || route.query || route.body) codes.add('INVALID_INPUT');
  return [...codes];
}

const errorResponse = (codes: ErrorCode[]) => ({
  description: `Error envelope; code is one of ${codes.join(', ')}`,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

/** 'search:caption_info' → 'SearchCaptionInfoEvent' */
const eventComponent = (type: string) => `${type.split(/[:_]/).map((part) => part[0]!.toUpperCase() + part.slice(1)).join('')}Event`;

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

const successResponse = (route: Route) =>
  route.events
    ? { description: 'Server-Sent Events', content: { 'text/event-stream': { schema: { $ref: `#/components/schemas/${route.events.name}` } } } }
    : {
        description: 'Success',
        content: { 'application/json': { schema: { type: 'object', required: ['data'], properties: { data: jsonSchema(route.response, 'output') } } } },
      };

/** OpenAPI 3.1 from the very zod schemas the routes validate with. */
export function buildOpenApi(routes: Route[], version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = route.path.replace(/:([A-Za-z]+)/g, '{$1}');
    const byStatus = new Map<number, ErrorCode[]>();
    for (const code of errorsOf(route)) byStatus.set(errorStatus[code], [...(byStatus.get(errorStatus[code]) ?? []), code]);
    const security = route.auth === 'public' ? [] : [...(route.auth === 'optional' ? [{}] : []), { ApiKeyHeader: [] }, { BearerAuth: [] }];
    const notes = [
      route.description,
      route.scope ? `Needs an API key with ${route.scope}+ scope.` : undefined,
      route.admin ? 'Administrators only.' : undefined,
      route.feature ? `Needs the ${route.feature} feature of the caller's tier.` : undefined,
    ].filter(Boolean);
    paths[path] = {
      ...paths[path],
      [route.method.toLowerCase()]: {
        operationId: `${route.method.toLowerCase()}${path.replace(/[{}]/g, '').split('/').filter((part) => part && part !== 'api').map((part) => part[0]!.toUpperCase() + part.slice(1).replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())).join('')}`,
        summary: route.summary,
        ...(notes.length ? { description: notes.join(' ') } : {}),
        tags: [route.tag],
        security,
        parameters: [...parameters(route.params, 'path'), ...parameters(route.query, 'query')],
        ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(route.body, 'input') } } } } : {}),
        responses: {
          [String(route.status ?? 200)]: successResponse(route),
          ...Object.fromEntries([...byStatus].map(([status, codes]) => [String(status), errorResponse(codes)])),
        },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Afterimage API',
      version,
      description: 'Finds, keeps and searches the metadata of videos from YouTube channels, including deleted ones. Successes are {data: …}; failures are {error: {code, message}}.',
    },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: {
        ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        BearerAuth: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer tsk_…' },
      },
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
      },
    },
    paths,
  };
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z, ZodError } from 'zod';
import { buildOpenApi } from '../../api/openapi.ts';
import { allRoutes } from '../../api/routes/index.ts';
import { appendEvents } from '../../core/events/events.ts';
import { searchEvents, searchEventVocabulary } from '../../core/events/searchEvents.ts';
import { createKeyedUser } from '../support/api.ts';
import { createTestDatabase, type TestDatabase } from '../support/db.ts';
import { fakeSource, generateChannel } from '../support/fake-source.ts';
import { readStream, type ReceivedEvent } from '../support/sse.ts';
import { startSearchStack } from '../support/stack.ts';

let db: TestDatabase;
let stack: Awaited<ReturnType<typeof startSearchStack>>;
let key: string;
const channel = generateChannel(120);

beforeAll(async () => {
  db = await createTestDatabase();
  stack = await startSearchStack(
    db,
    {},
    {
      sources: [fakeSource({ name: 'archive', channel: channel.channel, videos: channel.videos, pageSize: 50 })],
    },
  );
  ({ key } = await createKeyedUser(db.sql));
});

afterAll(async () => {
  await stack?.close();
  await db?.drop();
});

const schemaOf = new Map(searchEventVocabulary.events.map((event) => [event.type, event.schema]));

describe('search events', () => {
  it('are made only by their constructors, which check the payload', () => {
    const raw = { type: 'search:progress', payload: { stage: 'archive', percent: 10 } };
    // @ts-expect-error a hand-built event is not an event
    const append = () => appendEvents(db.sql, 'crawl:0', [raw]);
    expect(append).toBeTypeOf('function');
    expect(() => searchEvents.progress({ stage: 'archive', percent: 101 })).toThrow(ZodError);
    // @ts-expect-error percent is a number
    expect(() => searchEvents.progress({ stage: 'archive', percent: '10' })).toThrow(ZodError);
    expect(searchEvents.progress({ stage: 'archive', percent: 10 })).toEqual({
      type: 'search:progress',
      payload: { stage: 'archive', percent: 10 },
    });
  });

  it('on the wire match their schemas, in the crawl part and in the stored part of a stream', async () => {
    const search = async () => {
      const response = await stack.api.call('/api/search', {
        method: 'POST',
        key,
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ query: channel.channel.channelId }),
      });
      expect(response.status).toBe(200);
      const { events } = await readStream(`${stack.api.url}${response.body.data.sseEndpointUrl}`, {
        key,
        until: (event) => event.event === 'search:complete' || event.event === 'search:error',
      });
      return events;
    };
    const seen = new Set<string>();
    const check = (events: ReceivedEvent[]) => {
      for (const event of events) {
        expect(schemaOf.has(event.event), event.event).toBe(true);
        schemaOf.get(event.event)!.parse(event.data);
        seen.add(event.event);
      }
    };
    const first = await search();
    expect(first.at(-1)!.event).toBe('search:complete');
    check(first);
    check(await search()); // the channel is stored now: its videos come from the database first
    expect([...seen].sort()).toEqual(
      [
        'search:caption_info',
        'search:channel_resolved',
        'search:channel_update',
        'search:complete',
        'search:progress',
        'search:video',
        'search:video_batch',
      ].sort(),
    );
  });
});

describe('the OpenAPI document', () => {
  const document = buildOpenApi(allRoutes, 'test') as unknown as {
    components: { schemas: Record<string, any> };
    paths: Record<string, any>;
  };

  it('describes every search event with the JSON Schema of its payload', () => {
    const { schemas } = document.components;
    const union = schemas.SearchEvent;
    expect(union.oneOf).toHaveLength(searchEventVocabulary.events.length);
    for (const event of searchEventVocabulary.events) {
      const ref: string = union.discriminator.mapping[event.type];
      expect(union.oneOf).toContainEqual({ $ref: ref });
      const component = schemas[ref.replace('#/components/schemas/', '')];
      expect(component.properties.event).toEqual({ type: 'string', const: event.type });
      const { $schema: _ignored, ...payload } = z.toJSONSchema(event.schema, { io: 'output', unrepresentable: 'any' }) as Record<
        string,
        unknown
      >;
      expect(component.properties.data).toEqual(payload);
    }
  });

  it('gives the search stream a text/event-stream response of those events', () => {
    const ok = document.paths['/api/search/{sessionId}/stream'].get.responses['200'];
    expect(ok.content).toEqual({ 'text/event-stream': { schema: { $ref: '#/components/schemas/SearchEvent' } } });
  });
});

import { describe, expect, it } from 'vitest';
import { buildOpenApi } from '../../api/openapi.ts';
import { allRoutes } from '../../api/routes/index.ts';
import { stenogramEventVocabulary } from '../../core/stenograms/stenogramEvents.ts';
import { summaryEventVocabulary } from '../../core/summaries/summaryEvents.ts';

const document = buildOpenApi(allRoutes, 'test') as unknown as { components: { schemas: Record<string, any> }; paths: Record<string, any> };

describe('the OpenAPI document of the generation streams', () => {
  it.each([
    ['SummaryEvent', summaryEventVocabulary, '/api/summary/{videoId}/stream', 'get'],
    ['StenogramEvent', stenogramEventVocabulary, '/api/stenograms/{videoId}/generate', 'post'],
    ['StenogramEvent', stenogramEventVocabulary, '/api/stenograms/{owner}/{videoId}/stream', 'get'],
  ] as const)('describes every %s and answers text/event-stream at %s', (name, vocabulary, path, method) => {
    const union = document.components.schemas[name];
    expect(union.oneOf).toHaveLength(vocabulary.events.length);
    for (const event of vocabulary.events) expect(Object.keys(union.discriminator.mapping)).toContain(event.type);
    const ok = document.paths[path][method].responses['200'];
    expect(Object.keys(ok.content)).toEqual(['text/event-stream']);
  });

  it('documents the refusals of stenogram generation with their codes', () => {
    const responses = document.paths['/api/stenograms/{videoId}/generate'].post.responses;
    for (const status of ['400', '403', '404', '409', '429']) expect(responses[status]).toBeDefined();
  });
});

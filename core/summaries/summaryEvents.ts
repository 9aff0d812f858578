/**
 * The events of a summary's generation (`summary:<id>` in the event log, read over SSE at
 * GET /api/summary/:videoId/stream). An addition to the spec, which names only the search and
 * stenogram events: a client follows the job instead of polling.
 */
import { z } from 'zod';
import { summaryObject } from './summaryObject.ts';
import { defineEvent, type EventVocabulary } from '../events/defineEvent.ts';
import { generationError } from '../generations/generationKind.ts';

export const summaryEvents = {
  progress: defineEvent(
    'summary:progress',
    z.object({
      stage: z
        .enum(['queued', 'reading', 'chunk', 'combining', 'writing'])
        .describe('chunk: the LLM summarises one part of a long transcript'),
      percent: z.number().int().min(0).max(100),
      chunk: z.number().int().min(1).optional(),
      of: z.number().int().min(1).optional(),
    }),
  ),
  complete: defineEvent('summary:complete', z.object({ summary: summaryObject }).describe('the summary is generated (last event)')),
  error: defineEvent('summary:error', generationError),
};

export const summaryEventVocabulary: EventVocabulary = { name: 'SummaryEvent', events: Object.values(summaryEvents) };

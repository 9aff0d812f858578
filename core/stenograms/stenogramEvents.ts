/**
 * The events of a stenogram's generation (`stenogram:<id>` in the event log), streamed by
 * POST /api/stenograms/:videoId/generate and resumable at GET …/stream. The spec names only
 * stenogram:complete; the others are this service's (api/REFERENCE.md).
 */
import { z } from 'zod';
import { defineEvent, type EventVocabulary } from '../events/defineEvent.ts';
import { generationError } from '../generations/generationKind.ts';
import { stenogramMetadata } from './metadata.ts';

export const stenogramEvents = {
  started: defineEvent(
    'stenogram:started',
    z.object({ videoId: z.string(), metadata: stenogramMetadata }).describe('the generation was accepted and queued (first event)'),
  ),
  progress: defineEvent(
    'stenogram:progress',
    z.object({
      stage: z.enum(['reading', 'chunk', 'writing', 'storing']).describe('chunk: an LLM writes part `chunk` of `of`'),
      percent: z.number().int().min(0).max(100),
      chunk: z.number().int().min(1).optional(),
      of: z.number().int().min(1).optional(),
    }),
  ),
  complete: defineEvent(
    'stenogram:complete',
    z
      .object({
        stenogram: z.object({ markdown: z.string().describe('the stenogram (text/markdown)'), url: z.string() }),
        metadata: stenogramMetadata,
      })
      .describe('the stenogram is stored (last event)'),
  ),
  error: defineEvent('stenogram:error', generationError),
};

/**
 * stenogram:complete as the event log keeps it: without the Markdown, which is private and would sit
 * in the log for a week. The owner's stream adds it from the store as it sends the event.
 */
const completionLogged = z.object({ stenogram: z.object({ url: z.string() }), metadata: stenogramMetadata });
export type CompletionLogged = z.infer<typeof completionLogged>;
export const loggedCompletion = defineEvent(stenogramEvents.complete.type, completionLogged);

export const stenogramEventVocabulary: EventVocabulary = { name: 'StenogramEvent', events: Object.values(stenogramEvents) };

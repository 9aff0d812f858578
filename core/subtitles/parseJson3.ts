import { z } from 'zod';
import { invalidInput } from '../errors.ts';
import type { Cue } from './cue.ts';

// Only the fields the captions need; YouTube's pens, window styles and positions are ignored.
const json3 = z.object({
  events: z.array(
    z.object({
      tStartMs: z.number().optional(),
      dDurationMs: z.number().optional(),
      segs: z.array(z.object({ utf8: z.string().optional() })).optional(),
    }),
  ),
});

/**
 * Reads YouTube json3: one cue per event with text, the segments joined. Events without segments
 * (window definitions) are skipped; "\n"-only append events come out empty for normaliseCues to drop.
 */
export function parseJson3(input: string): Cue[] {
  let data: unknown;
  try {
    data = JSON.parse(input.charCodeAt(0) === 0xfeff ? input.slice(1) : input);
  } catch (error) {
    throw invalidInput(`json3 captions are not valid JSON: ${(error as Error).message}`);
  }
  const parsed = json3.safeParse(data);
  if (!parsed.success)
    throw invalidInput(
      `not json3 captions: ${parsed.error.issues[0]?.path.join('.') ?? ''} ${parsed.error.issues[0]?.message ?? ''}`.trim(),
    );
  const cues: Cue[] = [];
  for (const event of parsed.data.events) {
    if (!event.segs) continue;
    const startMs = Math.round(event.tStartMs ?? 0);
    cues.push({
      startMs,
      endMs: startMs + Math.max(0, Math.round(event.dDurationMs ?? 0)),
      text: event.segs.map((seg) => seg.utf8 ?? '').join(''),
    });
  }
  return cues;
}

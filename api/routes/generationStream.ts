/** The one stream route of every kind of generation (GET …/stream of a summary, a stenogram, …): its path, access and row are the kind's. */
import { z } from 'zod';
import type { EventVocabulary } from '../../core/events/defineEvent.ts';
import type { GenerationRow } from '../../core/generations/generationKind.ts';
import type { FeatureName, ScopeLabel } from '../../core/schemas.ts';
import type { ErrorCode } from '../../core/errors.ts';
import { defineRoute, handled, type ApiDeps, type RouteContext, streamTokenParam } from '../http/route.ts';
import type { RouteAuth } from '../http/guard.ts';
import { answerGenerationStream, type GenerationStreamParts } from '../sse/followStream.ts';
import { lastEventId } from '../sse/writer.ts';

/** Resume where a client left off; `token`: a stream token in place of the key (a browser's EventSource, api/http/route.ts). */
const resumeQuery = z.strictObject({ lastEventId: z.string().max(64).optional(), token: streamTokenParam });

export function generationStreamRoute<P extends z.ZodType, Row extends GenerationRow>(route: {
  path: string;
  tag: string;
  summary: string;
  description: string;
  access: { auth: RouteAuth; scope?: ScopeLabel; feature?: FeatureName };
  params: P;
  events: EventVocabulary;
  errors: ErrorCode[];
  /** The row the caller may follow; 404 NOT_FOUND otherwise. */
  find(ctx: RouteContext<z.output<P>, unknown, unknown>): Promise<Row>;
  parts(deps: ApiDeps): GenerationStreamParts<Row>;
}) {
  return defineRoute({
    method: 'GET',
    path: route.path,
    tag: route.tag,
    summary: route.summary,
    description: `${route.description} Every event has an id: reconnect with Last-Event-ID (or ?lastEventId=) to get only the events missed, the current progress first. A reconnect after the final event answers 204 No Content, which stops EventSource.`,
    ...route.access,
    params: route.params,
    query: resumeQuery,
    events: route.events,
    alsoAnswers: { 204: null },
    errors: route.errors,
    async handler(ctx) {
      const row = await route.find(ctx as RouteContext<z.output<P>, unknown, unknown>);
      await answerGenerationStream(ctx.deps, ctx.res, route.parts(ctx.deps), row, lastEventId(ctx.req, ctx.query.lastEventId));
      return handled;
    },
  });
}

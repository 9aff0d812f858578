import { z } from 'zod';
import { buildOpenApi } from '../openapi.ts';
import { JSON_TYPE, sendAnswer } from '../http/representation.ts';
import { handled, defineRoute, type CachePolicy, type Route } from '../http/route.ts';

/** The document changes only with a release: kept an hour, then revalidated by its ETag (the document's hash). */
const documentCache: CachePolicy = { scope: 'public', maxAgeSeconds: 3600 };

/**
 * The route serving the OpenAPI document of `documented()`, built on the first request. The list is
 * passed in (not imported) because it includes this route itself.
 */
export function openApiRoute(documented: () => Route[]): Route {
  let document: string | undefined;
  return defineRoute({
    method: 'GET',
    path: '/api/openapi.json',
    tag: 'System',
    summary: 'This OpenAPI 3.1 document (public, not wrapped in {data})',
    auth: 'public',
    rateLimited: false,
    cache: documentCache,
    media: { 'application/json': z.looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.looseObject({}) }) },
    async handler(ctx) {
      document ??= JSON.stringify(buildOpenApi(documented(), ctx.deps.version));
      await sendAnswer(ctx, document, { contentType: JSON_TYPE, cache: documentCache });
      return handled;
    },
  });
}

import { z } from 'zod';
import { buildOpenApi } from '../openapi.ts';
import { handled, defineRoute, type Route } from '../http/route.ts';
import { sendJson } from '../http/respond.ts';

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
    media: { 'application/json': z.looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.looseObject({}) }) },
    async handler({ res, deps }) {
      document ??= JSON.stringify(buildOpenApi(documented(), deps.version));
      sendJson(res, 200, JSON.parse(document));
      return handled;
    },
  });
}

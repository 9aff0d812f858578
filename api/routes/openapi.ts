import { z } from 'zod';
import type { buildOpenApi } from '../openapi.ts';
import { publicOrigin } from '../http/publicOrigin.ts';
import { JSON_TYPE, sendAnswer } from '../http/representation.ts';
import { handled, defineRoute, type CachePolicy, type Route } from '../http/route.ts';

/** The document changes only with a release: kept an hour, then revalidated by its ETag (the document's hash). */
const documentCache: CachePolicy = { scope: 'public', maxAgeSeconds: 3600 };

/**
 * The route serving the OpenAPI document of `documented()`, built on the first request, with this
 * server's URL. The list is passed in (not imported) because it includes this route itself. The
 * builder is loaded then too: it brings the MCP SDK's types (for /mcp's protocol version) with it.
 */
export function openApiRoute(documented: () => Route[]): Route {
  let document: ReturnType<typeof buildOpenApi> | undefined;
  return defineRoute({
    method: 'GET',
    path: '/api/openapi.json',
    tag: 'System',
    summary: 'This OpenAPI 3.1 document (public, not wrapped in {data})',
    description:
      'Its servers entry is PUBLIC_URL when set, else the origin this request was sent to (X-Forwarded-Host and X-Forwarded-Proto count only with TRUST_PROXY). /api/docs renders it.',
    auth: 'public',
    rateLimited: false,
    cache: documentCache,
    media: {
      'application/json': z.looseObject({
        openapi: z.string(),
        info: z.looseObject({}),
        servers: z.array(z.looseObject({ url: z.string() })).length(1),
        paths: z.looseObject({}),
      }),
    },
    async handler(ctx) {
      const { buildOpenApi, servedAt } = await import('../openapi.ts');
      document ??= buildOpenApi(documented(), ctx.deps.version);
      await sendAnswer(ctx, JSON.stringify(servedAt(document, publicOrigin(ctx.deps.config, ctx.req))), {
        contentType: JSON_TYPE,
        cache: documentCache,
      });
      return handled;
    },
  });
}

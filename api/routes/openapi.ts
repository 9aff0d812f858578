import { z } from 'zod';
import { buildOpenApi } from '../openapi.ts';
import { handled, defineRoute } from '../http/route.ts';
import { sendJson } from '../http/respond.ts';
import { allRoutes } from './index.ts';

let document: string | undefined;

export const openApiRoute = defineRoute({
  method: 'GET',
  path: '/api/openapi.json',
  tag: 'System',
  summary: 'This OpenAPI 3.1 document (public, not wrapped in {data})',
  auth: 'public',
  rateLimited: false,
  response: z.record(z.string(), z.unknown()),
  async handler({ res, deps }) {
    document ??= JSON.stringify(buildOpenApi(allRoutes, deps.version));
    sendJson(res, 200, JSON.parse(document));
    return handled;
  },
});

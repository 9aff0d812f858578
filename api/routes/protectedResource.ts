/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728) of /mcp and of the REST API. The MCP authorization
 * specification has a client that gets a 401 read this document to find the authorization server that
 * issues its tokens. This service has none: its bearer tokens are API keys issued out of band (from the
 * account, `afterimage keys create`), so the document leaves `authorization_servers` out (optional in
 * RFC 9728), which tells a client that no OAuth login can get a token here, and `resource_documentation`
 * says where to read how to get a key.
 */
import { z } from 'zod';
import { publicOrigin } from '../http/publicOrigin.ts';
import { sendJson } from '../http/representation.ts';
import { defineRoute, handled } from '../http/route.ts';
import { MCP_RESOURCE_METADATA_PATH } from '../mcp/handler.ts';

const metadata = z.object({
  resource: z.string().describe('the protected resource: the /mcp endpoint, or the service for the REST API'),
  resource_name: z.string(),
  bearer_methods_supported: z
    .array(z.literal('header'))
    .describe('the key goes in Authorization: Bearer (or X-API-Key), never in a URL or body'),
  resource_documentation: z.string().describe('how to get an API key and use it'),
});

const metadataRoute = (path: string, resourcePath: string, name: string) =>
  defineRoute({
    method: 'GET',
    path,
    tag: 'AI assistants (MCP)',
    summary: `OAuth 2.0 Protected Resource Metadata (RFC 9728) of ${resourcePath === '' ? 'the REST API' : resourcePath}: bearer API keys issued out of band, no authorization server`,
    description:
      'No authorization_servers: tokens are not issued by OAuth here. Get an API key from your account (`afterimage keys create` on the server) and send it as Authorization: Bearer tsk_… (or X-API-Key). Not wrapped in {data}.',
    auth: 'public',
    rateLimited: false,
    media: { 'application/json': metadata },
    async handler({ req, res, deps }) {
      const origin = publicOrigin(deps.config, req);
      const body: z.output<typeof metadata> = {
        resource: `${origin}${resourcePath}`,
        resource_name: name,
        bearer_methods_supported: ['header'],
        resource_documentation: `${origin}/api/docs`,
      };
      sendJson(res, 200, body, { 'Cache-Control': 'public, max-age=3600' });
      return handled;
    },
  });

export const protectedResourceRoutes = [
  metadataRoute(MCP_RESOURCE_METADATA_PATH, '/mcp', 'Afterimage MCP server'),
  metadataRoute('/.well-known/oauth-protected-resource', '', 'Afterimage API'),
];

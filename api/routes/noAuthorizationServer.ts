/**
 * What an OAuth client finds where it looks for an authorization server. The protected resource
 * metadata (protectedResource.ts) names none, but the MCP SDK's client then takes the service itself
 * for one: it asks `/.well-known/oauth-authorization-server` and `/.well-known/openid-configuration`
 * (with the resource's path after them or, for OpenID, before), and on 4xx registers itself with
 * `POST /register`, the sign-up form. Each answers an OAuth error (RFC 6749 §5.2, RFC 7591 §3.2.2) in
 * JSON, whose `error_description` the client shows: API keys are issued out of band, and where. Not
 * routes of the OpenAPI document: these bodies are OAuth's, not the `{error:{code,message}}` envelope.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { publicOrigin } from '../http/publicOrigin.ts';
import { sendJson } from '../http/representation.ts';
import type { ApiDeps } from '../http/route.ts';

/** Where clients look for authorization server metadata (RFC 8414 §3.1, OpenID Connect Discovery §4), any resource path included. */
export const AUTHORIZATION_SERVER_METADATA_PATHS = [
  '/.well-known/oauth-authorization-server',
  '/.well-known/oauth-authorization-server/*',
  '/.well-known/openid-configuration',
  '/.well-known/openid-configuration/*',
  '/mcp/.well-known/openid-configuration',
];

const outOfBand = (deps: ApiDeps, req: IncomingMessage) => {
  const origin = publicOrigin(deps.config, req);
  return (
    `API keys are issued out of band: sign in at ${origin}/account and create one there (or ask the operator: ` +
    `afterimage keys create), then send it as Authorization: Bearer tsk_… (or X-API-Key). This service has no OAuth ` +
    `authorization server and registers no clients; see ${origin}/api/docs`
  );
};

/** GET of an authorization server's metadata: 404, so discovery ends, with the reason for whoever reads it. */
export const noAuthorizationServerMetadata = (deps: ApiDeps) => (req: IncomingMessage, res: ServerResponse) =>
  sendJson(res, 404, { error: 'invalid_request', error_description: outOfBand(deps, req) }, { 'Cache-Control': 'public, max-age=3600' });

/** A client that sends or wants JSON: not a person at the sign-up form (a browser posts a form and accepts HTML). */
const jsonClient = (req: IncomingMessage) =>
  /^application\/json\b/i.test(req.headers['content-type'] ?? '') || /\bapplication\/json\b/i.test(req.headers.accept ?? '');

/** POST /register from a JSON client (dynamic client registration, RFC 7591): refused in OAuth's terms; the form's posts go on to the page. */
export const refuseClientRegistration = (deps: ApiDeps) => (req: IncomingMessage, res: ServerResponse, next: () => void) => {
  if (!jsonClient(req)) return next();
  sendJson(res, 403, { error: 'access_denied', error_description: outOfBand(deps, req) }, { 'Cache-Control': 'no-store' });
};

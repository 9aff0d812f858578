import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError } from '../../core/errors.ts';
import { authenticate } from '../http/guard.ts';
import { readJsonBody } from '../http/input.ts';
import { publicOrigin } from '../http/publicOrigin.ts';
import { sendJson } from '../http/representation.ts';
import type { ApiDeps } from '../http/route.ts';
import type { KeyCaller } from './context.ts';

/** Where /mcp's metadata lives: the well-known prefix inserted before the resource's path (RFC 9728 §3.1). */
export const MCP_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource/mcp';

type Request = IncomingMessage & { id: string };

/** A JSON-RPC error outside any request (the transport's own shape), with the HTTP status that goes with it. */
const rpcError = (res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}) =>
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null }, headers);

/** Whether any message of the body asks for progress: only those need an event stream as their answer. */
const wantsProgress = (body: unknown) =>
  (Array.isArray(body) ? body : [body]).some(
    (message) => (message as { params?: { _meta?: { progressToken?: unknown } } })?.params?._meta?.progressToken !== undefined,
  );

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export interface OriginRule {
  /** Exact origins allowed (PUBLIC_URL's and CORS_ORIGINS). */
  origins: string[];
  /** The service listens on a loopback address: pages served from a loopback origin (any port) are local software. */
  loopback: boolean;
}

/**
 * The MCP transport's DNS-rebinding rule: a browser page may call /mcp only from an allowed origin
 * (a rebinding attack shows the attacker's host name in Origin, never a loopback one). Clients that
 * send no Origin (desktop assistants, CLIs, servers) are not browsers and pass: the API key decides.
 */
export function originAllowed(origin: string | undefined, rule: OriginRule): boolean {
  if (origin === undefined) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  return (
    rule.origins.includes(url.origin.toLowerCase()) ||
    (rule.loopback && LOOPBACK.has(url.hostname) && (url.protocol === 'http:' || url.protocol === 'https:'))
  );
}

/** The rule for a configuration: PUBLIC_URL's origin and the CORS_ORIGINS, and loopback origins when HOST is a loopback address. */
export const originRule = (config: { PUBLIC_URL?: string | undefined; HOST: string; CORS_ORIGINS?: readonly string[] }): OriginRule => ({
  origins: [...(config.PUBLIC_URL ? [new URL(config.PUBLIC_URL).origin.toLowerCase()] : []), ...(config.CORS_ORIGINS ?? [])],
  loopback: LOOPBACK.has(config.HOST),
});

/**
 * Who calls /mcp, as the REST API decides it: no key or a bad one is 401, a tier without API access 403.
 * The 401's challenge names the resource metadata (RFC 9728, as the MCP authorization specification
 * asks), which says there is no authorization server: a client learns that the key is issued out of
 * band instead of starting an OAuth login that cannot succeed. Answers undefined when it has answered.
 */
async function identify(deps: ApiDeps, req: Request, res: ServerResponse): Promise<KeyCaller | undefined> {
  try {
    const caller = await authenticate(deps, req, 'key');
    if (caller.kind !== 'key') throw new AppError('API_KEY_REQUIRED', 'an API key is required');
    (res as ServerResponse & { userId?: string }).userId = caller.userId;
    return caller;
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    const metadataUrl = `${publicOrigin(deps.config, req)}${MCP_RESOURCE_METADATA_PATH}`;
    // RFC 6750 §3: a request without credentials gets no error code, only where to learn more.
    const challenge =
      `Bearer realm="afterimage", resource_metadata="${metadataUrl}"` +
      (error.code === 'API_KEY_REQUIRED' ? '' : `, error="invalid_token", error_description="${error.message.replace(/["\\]/g, '')}"`);
    const howTo =
      error.code === 'API_KEY_REQUIRED'
        ? '; there is no OAuth login here: API keys are issued from your account (afterimage keys create)'
        : '';
    rpcError(
      res,
      error.status,
      -32001,
      `${error.code}: ${error.message}${howTo}`,
      error.status === 401 ? { 'WWW-Authenticate': challenge } : {},
    );
    return undefined;
  }
}

/**
 * The MCP server and the SDK's transport, loaded at the first POST (once: later requests wait on no
 * import): the SDK, with its JSON Schema validator, costs every API process a few hundred
 * milliseconds of start-up, and most never see /mcp.
 */
const importMcp = () => Promise.all([import('./server.ts'), import('@modelcontextprotocol/sdk/server/streamableHttp.js')]);
let mcpModules: ReturnType<typeof importMcp> | undefined;
const loadMcp = () => (mcpModules ??= importMcp());

/**
 * POST, GET and DELETE /mcp: the MCP Streamable HTTP transport, stateless. Every POST gets a fresh
 * server and transport, so any API process behind a load balancer can answer any request (no
 * sticky sessions, nothing to lose when a process goes). GET (a standalone event stream) and DELETE
 * (ending a session) have nothing to do without sessions: 405, as the transport spec allows.
 */
export function mcpHandler(deps: ApiDeps) {
  const origins = originRule(deps.config);
  return async (req: Request, res: ServerResponse): Promise<void> => {
    const origin = req.headers.origin;
    if (!originAllowed(origin, origins))
      return rpcError(
        res,
        403,
        -32000,
        `FORBIDDEN: requests from the origin ${origin} are not allowed (DNS rebinding protection); desktop and server clients send no Origin`,
      );
    const caller = await identify(deps, req, res);
    if (!caller) return;
    if (req.method !== 'POST')
      return rpcError(
        res,
        405,
        -32000,
        `${req.method} /mcp is not supported: this server is stateless (no sessions, no standalone stream); POST JSON-RPC messages`,
        { Allow: 'POST' },
      );
    let body: unknown;
    try {
      body = await readJsonBody(req, deps.config.BODY_LIMIT_BYTES);
    } catch (error) {
      if (error instanceof AppError) return rpcError(res, error.status, -32700, `Parse error: ${error.message}`);
      throw error;
    }
    const [{ createMcpServer }, { StreamableHTTPServerTransport }] = await loadMcp();
    const server = createMcpServer({
      deps,
      caller,
      log: deps.log.child({ reqId: req.id }),
      requestId: req.id,
      origin: publicOrigin(deps.config, req),
    });
    // JSON answers unless progress was asked for: those stream their notifications before the result.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !wantsProgress(body) });
    const stream = { end: () => void transport.close() };
    deps.openStreams.add(stream);
    res.on('close', () => {
      deps.openStreams.delete(stream);
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };
}

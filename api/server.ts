import { randomUUID } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import polka, { type Middleware, type Polka, type Request as PolkaRequest } from 'polka';
import { AppError } from '../core/errors.ts';
import { answerClientError } from './http/clientError.ts';
import { cors } from './http/cors.ts';
import { authenticate, callerUserId, type Caller, guarded, type GuardedRequest } from './http/guard.ts';
import { readJsonBody, parseInput, parseQuery } from './http/input.ts';
import { sendFailure } from './http/failure.ts';
import { securityHeaders } from './http/securityHeaders.ts';
import { isJsonText } from '../core/text/jsonText.ts';
import { remembered } from '../core/remembered.ts';
import { privateByDefault, API_CALLER_HEADERS, JSON_TYPE, sendAnswer, sendError } from './http/representation.ts';
import { streamTokenOf, handled, isReply, pathPattern, type ApiDeps, type Route } from './http/route.ts';
import { httpDuration, httpRequests } from '../core/metrics.ts';
import { mcpHandler } from './mcp/handler.ts';
import { allRoutes } from './routes/index.ts';
import { METRICS_PATH, metricsRoute } from './routes/metrics.ts';
import {
  AUTHORIZATION_SERVER_METADATA_PATHS,
  noAuthorizationServerMetadata,
  refuseClientRegistration,
} from './routes/noAuthorizationServer.ts';
import { sendAsset } from './web/assets.ts';
import { sendErrorPage, wantsHtml } from './web/errorPage.tsx';
import { servePage, type Page } from './web/page.tsx';
import { allPages } from './web/pages/index.ts';

/** `routePattern`: the pattern the request matched (`/api/videos/:id`), for the metrics: a raw path would make a series per id. */
type Request = PolkaRequest & { id: string; routePattern?: string };

/** `handler`, naming the route pattern it serves on the request. */
const routed =
  <H extends (req: Request, res: ServerResponse, next: () => void) => unknown>(pattern: string, handler: H) =>
  (req: Request, res: ServerResponse, next: () => void) => {
    req.routePattern = pattern;
    return handler(req, res, next);
  };

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * How long a client may take to send a request (Node's requestTimeout: from its first byte until the
 * body is in, not the answer, so long event streams and downloads are untouched) and its headers; a
 * client trickling bytes gets 408 instead of holding a connection for Node's default 5 minutes. 30 s
 * takes the default 1 MiB body at 35 kB/s. Checked every 2 s (Node's default: every 30 s).
 */
const RECEIVE_LIMITS = { requestTimeout: 30_000, headersTimeout: 10_000, connectionsCheckingInterval: 2_000 };

/** Node's receive limits, in ms; a test shortens them (the 408 in a second instead of 30), the services keep RECEIVE_LIMITS. */
export type ReceiveLimits = typeof RECEIVE_LIMITS;

/** The JSON body of a route that takes one; none at all (or zero bytes) is the caller's error unless the route's body is optional. */
async function requestBody(req: Request, route: Route, limitBytes: number): Promise<unknown> {
  const body = await readJsonBody(req, limitBytes);
  if (body !== undefined || route.optionalBody) return body ?? {};
  throw new AppError('INVALID_INPUT', 'body: required; send a JSON object with Content-Type: application/json');
}

/** Authentication, then the guard chain (access, the charge; api/http/guard.ts) around validation and the handler. */
function dispatch(route: Route, deps: ApiDeps) {
  const handle = dispatchUnguarded(route, deps);
  // polka takes a falsy rejection for "no error" and would answer 404: never let one through.
  return (req: Request, res: ServerResponse) =>
    handle(req, res).catch((error: unknown) => Promise.reject(error ?? new Error('handler failed without a reason')));
}

function dispatchUnguarded(route: Route, deps: ApiDeps) {
  const countsLate = route.cache !== undefined;
  // Every answer but a read everybody may keep is kept by no cache, errors included; it varies on the key where the route takes one.
  const callerHeaders = route.cache?.scope === 'public' ? undefined : route.auth === 'public' ? [] : API_CALLER_HEADERS;
  return async (req: Request, res: ServerResponse) => {
    if (callerHeaders) privateByDefault(res, callerHeaders);
    const caller = await authenticate(deps, req, route.auth, route.apiAccess !== false, streamTokenOf(route, req));
    (res as ServerResponse & { userId?: string }).userId = callerUserId(caller) ?? undefined;
    await guarded(deps, caller, route, (request) => validateAndRun(route, deps, req, res, caller, request), { res, countsLate });
  };
}

/** Validation, the handler, and its answer: counted as it is sent (a 429 replaces it), unless it is a 304. */
async function validateAndRun(route: Route, deps: ApiDeps, req: Request, res: ServerResponse, caller: Caller, request: GuardedRequest) {
  const params = route.params && parseInput(route.params, req.params, 'path');
  const query = route.query && parseQuery(route.query, req.query);
  const body = route.body ? parseInput(route.body, await requestBody(req, route, deps.config.BODY_LIMIT_BYTES), 'body') : undefined;
  // One object for the handler and the answer: the request's context is made once per request.
  const ctx = {
    req,
    res,
    params,
    query,
    body,
    caller,
    deps,
    log: deps.log.child({ reqId: req.id }),
    charge: request.charge,
    countRequest: request.countRequest,
    waiveRequest: request.waiveRequest,
  };
  const result = await route.handler(ctx);
  if (result === handled) return;
  const { status = route.status ?? 200, data, headers } = isReply(result) ? result : { data: result };
  const answer = isJsonText(data) ? `{"data":${data.text}}` : JSON.stringify({ data });
  await sendAnswer(ctx, answer, { status, headers, contentType: JSON_TYPE, cache: route.cache });
}

/** Path patterns as regular expressions, to tell an unknown path (404) from a wrong method (405). */
function methodsByPattern(routes: Array<Pick<Route, 'path' | 'method'>>): Array<{ pattern: RegExp; methods: string[] }> {
  const grouped = new Map<string, string[]>();
  for (const route of routes) grouped.set(route.path, [...(grouped.get(route.path) ?? []), route.method]);
  return [...grouped].map(([path, methods]) => ({ pattern: pathPattern(path), methods }));
}

/**
 * polka finds a request's handlers by testing every route's pattern in turn (about 70 with the pages),
 * and the answer depends on method and path alone: remembered for the paths clients repeat, with a
 * copy of the params each time, since polka decodes them in place.
 */
function rememberRouteLookups(app: Pick<Polka<Request>, 'find'>): void {
  const find = app.find.bind(app);
  const lookup = remembered((key: string) => find(key.slice(0, key.indexOf(' ')) as never, key.slice(key.indexOf(' ') + 1)), 10_000);
  app.find = (method, path) => {
    const found = lookup(`${method} ${path}`);
    return { params: { ...found.params }, handlers: found.handlers };
  };
}

export function createApi(deps: ApiDeps, routes: Route[] = allRoutes, pages: Page[] = allPages, receiveLimits = RECEIVE_LIMITS) {
  const patterns = methodsByPattern([...routes, ...pages]);
  const app = polka<Request>({
    server: createServer(receiveLimits),
    onError: (error, req, res) => (wantsHtml(req) ? sendErrorPage(req, res, error, deps) : sendFailure(error, req, res, deps.log)),
    onNoMatch: (req, res) => {
      const allowed = patterns.find((entry) => entry.pattern.test(req.path))?.methods;
      if (wantsHtml(req)) {
        const message = allowed ? `${req.method} is not supported on ${req.path}` : `there is no page at ${req.path}`;
        void sendErrorPage(
          req,
          res,
          new AppError('NOT_FOUND', message, { status: allowed ? 405 : 404, headers: allowed ? { Allow: allowed.join(', ') } : {} }),
          deps,
        );
      } else if (allowed) {
        sendError(res, 405, 'NOT_FOUND', `${req.method} is not supported on ${req.path}; use ${allowed.join(' or ')}`, {
          headers: { Allow: allowed.join(', ') },
        });
      } else {
        sendError(res, 404, 'NOT_FOUND', `no endpoint ${req.method} ${req.path}; see /api/openapi.json`);
      }
    },
  });

  rememberRouteLookups(app);
  const answerCors = cors(deps.config.CORS_ORIGINS);
  const everyAnswer = Object.entries(securityHeaders(deps.config));
  // One middleware (each is a turn of polka's loop on every request): the request's id, the headers of
  // every answer (api/http/securityHeaders.ts) and the log line, then CORS.
  app.use((req: Request, res: ServerResponse, next) => {
    const given = req.headers['x-request-id'];
    req.id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    res.setHeader('X-Request-Id', req.id);
    for (const [name, value] of everyAnswer) res.setHeader(name, value);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      deps.log.info('request', {
        reqId: req.id,
        method: req.method,
        path: req.path,
        status: res.statusCode,
        ms,
        userId: (res as ServerResponse & { userId?: string }).userId,
      });
      const route = req.routePattern ?? 'unmatched';
      httpRequests.inc({ method: req.method, route, status: String(res.statusCode) });
      httpDuration.observe({ method: req.method, route }, ms / 1000);
    });
    if (!answerCors(req, res)) next();
  });

  // The MCP server (api/mcp/handler.ts): every method, so GET and DELETE get the transport's 405.
  app.all('/mcp', routed('/mcp', mcpHandler(deps)) as unknown as Middleware<Request>);
  for (const route of routes) {
    const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    app[method](route.path, routed(route.path, dispatch(route, deps)) as unknown as Middleware<Request>);
  }
  // Prometheus's scrape (api/routes/metrics.ts), only when a token is configured: off, it is a path like any unknown one.
  if (deps.config.METRICS_TOKEN)
    app.get(METRICS_PATH, routed(METRICS_PATH, metricsRoute(deps, deps.config.METRICS_TOKEN)) as unknown as Middleware<Request>);
  // Where OAuth clients look for an authorization server, and their registration before the sign-up form's (api/routes/noAuthorizationServer.ts).
  for (const path of AUTHORIZATION_SERVER_METADATA_PATHS)
    app.get(path, routed(path, noAuthorizationServerMetadata(deps)) as unknown as Middleware<Request>);
  app.post('/register', routed('/register', refuseClientRegistration(deps)) as unknown as Middleware<Request>);
  // The web app: pages for people on the same server, and their hashed CSS and JavaScript.
  for (const page of pages)
    app[page.method === 'GET' ? 'get' : 'post'](page.path, routed(page.path, servePage(page, deps)) as unknown as Middleware<Request>);
  app.get(
    '/assets/*',
    routed('/assets/*', (req, res, next) => (sendAsset(req.path, res) ? undefined : next())) as unknown as Middleware<Request>,
  );
  return app;
}

/** Listens until `close()`, which stops accepting, lets requests in flight finish, then ends idle connections. */
export async function startApi(
  deps: Omit<ApiDeps, 'openStreams'>,
  port: number,
  host: string,
  options: { receiveLimits?: ReceiveLimits } = {},
): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  const openStreams = new Set<{ end(): void }>();
  const app = createApi({ ...deps, openStreams }, allRoutes, allPages, options.receiveLimits);
  await new Promise<void>((resolve, reject) => {
    app.listen({ port, host }, () => resolve());
    app.server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(`port ${port} on ${host} is already in use; stop what uses it or set PORT to another port`)
          : error,
      ),
    );
  });
  const server = app.server as Server;
  server.keepAliveTimeout = 5_000;
  server.on('clientError', answerClientError(deps.log, securityHeaders(deps.config)));
  const address = server.address();
  return {
    server,
    port: typeof address === 'object' && address ? address.port : port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        openStreams.forEach((stream) => stream.end());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 10_000).unref();
      }),
  };
}

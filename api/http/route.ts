import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { ApiKeyCache } from '../../core/accounts/cachedApiKeys.ts';
import type { Pause } from '../../core/accounts/signIn.ts';
import type { Config } from '../../core/config.ts';
import type { Sql } from '../../core/db/database.ts';
import { type ErrorCode, AppError } from '../../core/errors.ts';
import type { EventVocabulary } from '../../core/events/defineEvent.ts';
import type { Logger } from '../../core/log.ts';
import type { JsonText } from '../../core/text/jsonText.ts';
import type { FeatureName, LimitName, ScopeLabel } from '../../core/schemas.ts';
import type { Services } from '../../core/services/buildServices.ts';
import type { TierCache } from '../../core/tiers/loadTiers.ts';
import type { EventHub } from '../sse/hub.ts';
import {
  type Caller,
  type RouteAuth,
  type StreamTokenUse,
  checkAccess,
  type ChargeUnits,
  type Guarded,
  type GuardedRequest,
  type RequestLimit,
} from './guard.ts';
import { mintStreamToken, STREAM_TOKEN_MINUTES } from '../../core/keys.ts';

/**
 * What every route may use; built once per API process. The services (video sources, full-text
 * search, the stenogram store) come from the composition root, core/services/buildServices.ts.
 */
export interface ApiDeps extends Pick<Services, 'sources' | 'search' | 'stenogramStore' | 'serverKey'> {
  config: Config;
  sql: Sql;
  /**
   * Where usage counters are written: a pool without synchronous commit, since a crash may forget the
   * last instant of counts but must not make every request wait for a disk flush. Its statements
   * autocommit: a charge is not part of (nor undone with) the work's own transaction.
   */
  counterSql: Sql;
  tiers: TierCache;
  /** API key lookups kept by this process, dropped at once when keys, users or tiers change (core/accounts/cachedApiKeys.ts). */
  apiKeys: ApiKeyCache;
  log: Logger;
  version: string;
  startedAt: Date;
  /** Fans the event log out to SSE streams (one LISTEN connection per process). */
  hub: EventHub;
  /** Event streams open on this server, ended at shutdown. */
  openStreams: Set<{ end(): void }>;
  /** Replaces the database clock for quota windows (tests of midnight UTC); unset in production. */
  clock?: () => Date;
  /** Replaces the wait of a slowed-down sign-in (tests record it instead); unset in production. */
  pause?: Pause;
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** What a handler gets of the guard chain (api/http/guard.ts): charge counts units of a limit the route declares in `charges`, with the request, in one statement; countRequest and waiveRequest are for an answer it writes itself. */
export interface RouteContext<P, Q, B> extends GuardedRequest {
  req: IncomingMessage & { id: string };
  res: ServerResponse;
  params: P;
  query: Q;
  body: B;
  caller: Caller;
  deps: ApiDeps;
  log: Logger;
}

/** What writing an answer needs of a request: the exchange and the request's counting. */
export type Exchange = Pick<RouteContext<unknown, unknown, unknown>, 'req' | 'res' | 'countRequest' | 'waiveRequest'>;

/**
 * Who may keep a read's answer (api/http/representation.ts): private answers depend on the key or its
 * tier and are revalidated before each reuse; public ones are everybody's, kept maxAgeSeconds.
 */
export type CachePolicy = { scope: 'private' } | { scope: 'public'; maxAgeSeconds: number };
export const privateCache: CachePolicy = { scope: 'private' };
/**
 * Pages and sitemaps are the same for everybody: kept 5 minutes, then revalidated by ETag (a hash of
 * the page) or, for a summary page, Last-Modified (when the summary was generated). A crawler's
 * revalidation that finds nothing changed is a 304 and counts nothing.
 */
export const PUBLIC_PAGE_CACHE: CachePolicy = { scope: 'public', maxAgeSeconds: 300 };

const replyTag = Symbol('reply');
/** A reply other than `{data}` with the route's status: another status or extra headers. */
export interface Reply<T> {
  [replyTag]: true;
  status?: number;
  headers?: Record<string, string>;
  data: T;
}
export const reply = <T>(data: T, options: { status?: number; headers?: Record<string, string> } = {}): Reply<T> => ({
  [replyTag]: true,
  ...options,
  data,
});
export const isReply = (value: unknown): value is Reply<unknown> => typeof value === 'object' && value !== null && replyTag in value;
/** The schema of a `media` body that is bytes (a zip, a video): documented with no schema, checked by its media type. */
export const binaryBody = z.custom<Uint8Array>((value) => value instanceof Uint8Array);
/** Returned by a handler that wrote the response itself (plain text, streams). */
export const handled = Symbol('handled');

type Schema = z.ZodType;
type Out<S> = S extends z.ZodType ? z.output<S> : undefined;
type Answers = Record<number, Schema | null>;
/** The replies `alsoAnswers` allows: each carries the data of one of its schemas. */
type OtherReply<A extends Answers> = { [S in keyof A]: Reply<A[S] extends Schema ? z.output<A[S]> : undefined> }[keyof A];

/**
 * One route: its contract (validated input, documented output) and its handler. The same schemas
 * validate requests and generate the OpenAPI document, so the two cannot drift apart.
 */
export interface Route<
  P extends Schema | undefined = Schema | undefined,
  Q extends Schema | undefined = Schema | undefined,
  B extends Schema | undefined = Schema | undefined,
  R extends Schema = Schema,
  A extends Answers = Answers,
> {
  method: Method;
  path: string;
  summary: string;
  description?: string;
  /** Its group in the OpenAPI document: one of api/tags.ts, which describes each. */
  tag: string;
  auth: RouteAuth;
  /** Least key scope needed (keys only). */
  scope?: ScopeLabel;
  admin?: boolean;
  feature?: FeatureName;
  /** false: a valid key of a tier without API access is served too (it may read what its own tier allows). */
  apiAccess?: false;
  /** Counted against the caller's request limit (default true). */
  rateLimited?: boolean;
  /** The per-minute limit that counts this route's requests (default requestsPerMinute; public pages: pageRequestsPerMinute). */
  requestLimit?: RequestLimit;
  /** The limits the handler may charge (ctx.charge); the request is counted with the first charge, in one statement (api/http/guard.ts). */
  charges?: readonly LimitName[];
  /**
   * A cacheable read: its 200 carries a strong ETag (and Cache-Control, Vary), If-None-Match answers
   * 304 with no body, and the request is counted only once the answer is not a 304, which counts nothing.
   */
  cache?: CachePolicy;
  params?: P;
  query?: Q;
  body?: B;
  /** The body may be left out (read as `{}`); otherwise a route with a body schema answers 400 to a request without one. */
  optionalBody?: true;
  /** What a success carries in `{data}` (application/json); absent when the answer is only `media` or `events`. */
  response?: R;
  /** Success bodies sent as they are, not in `{data}`: per media type, the body's schema (`binaryBody` for bytes). */
  media?: Record<string, z.ZodType>;
  /** The events of a text/event-stream response. */
  events?: EventVocabulary;
  status?: number;
  /** Success statuses besides `status`, sent with `reply(…, {status})`: per status, what `{data}` holds (null: no body, as 304). */
  alsoAnswers?: A;
  /** A success status whose reply carries a Location header, and what it points to. */
  location?: { status: number; description: string };
  /** Answers with api/http/sendFile.ts: documents its request headers and its range and conditional answers (206, 304, 412, 416). */
  servesFile?: true;
  errors?: ErrorCode[];
  /** Answers `{data}` with the value, or with JSON text standing for one (core/text/jsonText.ts), sent as it is. */
  handler(
    ctx: RouteContext<Out<P>, Out<Q>, Out<B>>,
  ): Promise<z.output<R> | JsonText<z.output<R>> | Reply<z.output<R>> | OtherReply<A> | typeof handled>;
}

/** A route's path (`/api/x/:id`) as a regular expression matching the paths it answers (a trailing slash allowed). */
export const pathPattern = (path: string) =>
  new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z]+/g, '[^/]+')}/?$`);

/** The query of a route that takes no parameters: any parameter is unknown, so a typo never goes unnoticed. */
const noParameters = z.strictObject({});

/**
 * The query of a page shared as a link (HTML, sitemaps): ignored, since whoever shares a link may
 * append tracking parameters (utm_source, fbclid) the page cannot know.
 */
export const ignoredQuery = z.looseObject({});

/** A route; one without a query schema refuses every query parameter. */
export const defineRoute = <
  P extends Schema | undefined = undefined,
  Q extends Schema | undefined = undefined,
  B extends Schema | undefined = undefined,
  R extends Schema = Schema,
  A extends Answers = Record<never, never>,
>(
  route: Route<P, Q, B, R, A>,
) => ({ ...route, query: route.query ?? noParameters }) as unknown as Route;

// ---------------------------------------------------------------------------------------------
// Actions: what a caller may do, written once (api/actions/) and exposed three ways. A REST route, a
// web page and an MCP tool each parse their own wire format into an action's input and present its
// answer their own way (JSON, HTML, text for a model); the action holds the rules between: who may
// (access), what it costs (charges), and the work. The surface guards with the action's access
// (`...action.access`); `perform` checks it again, so no page or tool can apply weaker rules than the
// route exposing the same action.
// ---------------------------------------------------------------------------------------------

/** What an action gets of the request that performs it, whatever surface that request came through. */
export interface ActionContext {
  deps: ApiDeps;
  caller: Caller;
  /** The guard's charge: counts units of a limit the action declares in `access.charges`. */
  charge: ChargeUnits;
  log: Logger;
}

export interface Action<I, O> {
  /** How a refusal names it ("generating a summary"). */
  what: string;
  /** Who may perform it and the limits it may charge: a route, page or tool exposing it declares the same (`...action.access`). */
  access: Guarded;
  run(ctx: ActionContext, input: I): Promise<O>;
}

/** An action, its access kept as written (so a surface can read `access.charges` as a list). */
export const defineAction = <I, O, const G extends Guarded>(action: Action<I, O> & { access: G }): Action<I, O> & { access: G } => action;

/** Performs `action` for the context's caller: its access first (403 as the route would answer), then the work. */
export function perform<I, O>(action: Action<I, O>, ctx: ActionContext, input: I): Promise<O> {
  checkAccess(ctx.caller, action.access, action.what);
  return action.run(ctx, input);
}

/** Routes a stream token opens: event streams read with GET, as a browser's EventSource reads them. */
export const opensWithStreamToken = (route: Pick<Route, 'method' | 'events'>) => route.method === 'GET' && route.events !== undefined;

/** The `?token=` of a request to an event stream, with the path it was sent to; undefined when none was sent or the route takes none. */
export function streamTokenOf(
  route: Route,
  req: IncomingMessage & { path: string; query: Record<string, unknown> },
): StreamTokenUse | undefined {
  if (!opensWithStreamToken(route)) return undefined;
  const given = req.query.token;
  if (given === undefined) return undefined;
  if (typeof given !== 'string') throw new AppError('INVALID_INPUT', 'token: send one stream token');
  return { token: given, path: req.path.replace(/(.)\/$/, '$1') };
}

/** The `token` query parameter of an event stream route (authentication reads it; this documents it). */
export const streamTokenParam = z
  .string()
  .max(64)
  .optional()
  .describe(
    `a stream token for this stream (POST /api/stream-tokens, or sseToken/streamToken where a stream is started), in place of the API key, for clients that cannot send headers (a browser's EventSource); valid ${STREAM_TOKEN_MINUTES} minutes`,
  );

export const streamTokenObject = z
  .object({
    token: z.string().describe('opens only this stream, as the key that minted it, until expiresAt; keep it out of logs and shared links'),
    url: z.string().describe('the stream path with ?token=: what to give an EventSource'),
    expiresAt: z.string().describe('ISO 8601; a later reconnect needs a new token'),
  })
  .describe(
    `a short-lived token (${STREAM_TOKEN_MINUTES} minutes) that opens one event stream without the API key, for a browser's EventSource`,
  );

/** A stream token for `streamPath`, minted by the caller's key (stream tokens always act as a key). */
export async function issueStreamToken(
  deps: Pick<ApiDeps, 'sql'>,
  caller: Caller,
  streamPath: string,
): Promise<z.output<typeof streamTokenObject>> {
  if (caller.kind !== 'key') throw new AppError('API_KEY_REQUIRED', 'stream tokens are minted with an API key');
  const minted = await mintStreamToken(deps.sql, caller.keyId, streamPath);
  return { token: minted.token, url: `${streamPath}?token=${minted.token}`, expiresAt: minted.expiresAt.toISOString() };
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import type { Config } from '../../core/config.ts';
import type { Sql } from '../../core/db/database.ts';
import type { ErrorCode } from '../../core/errors.ts';
import type { EventVocabulary } from '../../core/events/defineEvent.ts';
import type { SearchBackend } from '../../core/fts/backend.ts';
import type { Logger } from '../../core/log.ts';
import type { FeatureName, ScopeLabel } from '../../core/schemas.ts';
import type { VideoSource } from '../../core/sources/types.ts';
import type { StenogramStore } from '../../core/stenograms/store.ts';
import type { TierCache } from '../../core/tiers/loadTiers.ts';
import type { EventHub } from '../sse/hub.ts';
import type { Caller, RouteAuth } from './auth.ts';

/** What every route may use; built once per API process. */
export interface ApiDeps {
  config: Config;
  sql: Sql;
  /**
   * Where usage counters are written: a pool without synchronous commit, since a crash may forget the
   * last instant of counts but must not make every request wait for a disk flush. Defaults to sql.
   */
  counterSql?: Sql;
  tiers: TierCache;
  log: Logger;
  version: string;
  startedAt: Date;
  /** Fans the event log out to SSE streams (one LISTEN connection per process). */
  hub: EventHub;
  sources: VideoSource[];
  /** Full-text search: Postgres, or Typesense when configured. */
  search: SearchBackend;
  /** Event streams open on this server, ended at shutdown. */
  openStreams: Set<{ end(): void }>;
  /** Where stenograms' Markdown lives (STENOGRAM_STORE). */
  stenogramStore: StenogramStore;
  /** Replaces the database clock for quota windows (tests of midnight UTC); unset in production. */
  clock?: () => Date;
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteContext<P, Q, B> {
  req: IncomingMessage & { id: string };
  res: ServerResponse;
  params: P;
  query: Q;
  body: B;
  caller: Caller;
  deps: ApiDeps;
  log: Logger;
}

const replyTag = Symbol('reply');
/** A reply other than `{data}` with the route's status: another status or extra headers. */
export interface Reply<T> { [replyTag]: true; status?: number; headers?: Record<string, string>; data: T }
export const reply = <T>(data: T, options: { status?: number; headers?: Record<string, string> } = {}): Reply<T> => ({ [replyTag]: true, ...options, data });
export const isReply = (value: unknown): value is Reply<unknown> => typeof value === 'object' && value !== null && replyTag in value;
/** Returned by a handler that wrote the response itself (plain text, streams). */
export const handled = Symbol('handled');

type Schema = z.ZodType;
type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

/**
 * One route: its contract (validated input, documented output) and its handler. The same schemas
 * validate requests and generate the OpenAPI document, so the two cannot drift apart.
 */
export interface Route<P extends Schema | undefined = Schema | undefined, Q extends Schema | undefined = Schema | undefined, B extends Schema | undefined = Schema | undefined, R extends Schema = Schema> {
  method: Method;
  path: string;
  summary: string;
  description?: string;
  tag: string;
  auth: RouteAuth;
  /** Least key scope needed (keys only). */
  scope?: ScopeLabel;
  admin?: boolean;
  feature?: FeatureName;
  /** Counted against the caller's requestsPerMinute (default true). */
  rateLimited?: boolean;
  params?: P;
  query?: Q;
  body?: B;
  response: R;
  /** The events of a text/event-stream response, documented instead of `response`. */
  events?: EventVocabulary;
  status?: number;
  errors?: ErrorCode[];
  handler(ctx: RouteContext<Out<P>, Out<Q>, Out<B>>): Promise<z.output<R> | Reply<z.output<R>> | typeof handled>;
}

export const defineRoute = <P extends Schema | undefined = undefined, Q extends Schema | undefined = undefined, B extends Schema | undefined = undefined, R extends Schema = Schema>(
  route: Route<P, Q, B, R>,
) => route as unknown as Route;

import type { Logger } from '../../core/log.ts';
import type { Caller, ChargeUnits } from '../http/guard.ts';
import type { ApiDeps } from '../http/route.ts';

/** A caller with a key: /mcp takes no anonymous calls. */
export type KeyCaller = Extract<Caller, { kind: 'key' }>;

/** What every tool, resource and prompt of one /mcp request may use. */
export interface McpContext {
  deps: ApiDeps;
  caller: KeyCaller;
  log: Logger;
  requestId: string;
  /** Where the caller reaches this service (api/http/publicOrigin.ts), for absolute URLs such as a watchlist's feedUrl. */
  origin: string;
}

/** One tool call or resource read: the request's context and its charge (api/http/guard.ts). */
export interface McpCall extends McpContext {
  /** Counts units of a limit the tool or resource declares in `charges`, with the call's requestsPerMinute, in one statement; 429 RATE_LIMITED when refused. */
  charge: ChargeUnits;
}

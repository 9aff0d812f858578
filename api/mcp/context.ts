import type { Logger } from '../../core/log.ts';
import type { Caller } from '../http/auth.ts';
import type { ApiDeps } from '../http/route.ts';

/** A caller with a key: /mcp takes no anonymous calls. */
export type KeyCaller = Extract<Caller, { kind: 'key' }>;

/** What every tool, resource and prompt of one /mcp request may use. */
export interface McpContext {
  deps: ApiDeps;
  caller: KeyCaller;
  log: Logger;
  requestId: string;
}

/** Where usage counters are written (see ApiDeps.counterSql). */
export const counterSql = (ctx: McpContext) => ctx.deps.counterSql;

import { Logger as GraphileLogger } from 'graphile-worker';
import type { Logger } from './log.ts';

/** Routes graphile-worker's own messages into our structured log. */
export function graphileLogger(log: Logger): GraphileLogger {
  return new GraphileLogger((scope) => (level, message, meta) => {
    const fields = { component: 'graphile-worker', ...scope, ...(meta ?? {}) };
    const method = level === 'error' ? 'error' : level === 'warning' ? 'warn' : level === 'info' ? 'info' : 'debug';
    log[method](message, fields);
  });
}

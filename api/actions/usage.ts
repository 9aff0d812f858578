/** The caller's tier, flags, limits and use of each: GET /api/features, the account page and the get_usage tool. */
import type { Sql } from '../../core/db/database.ts';
import { scopeName } from '../../core/schemas.ts';
import { usageReport } from '../../core/usage/usageReport.ts';
import { type Caller, limitsEnforcedFor, quotaSubject } from '../http/guard.ts';
import { defineAction } from '../http/route.ts';

export const callerUsage = (sql: Sql, caller: Caller) =>
  usageReport(
    sql,
    caller.tier,
    caller.kind === 'anonymous'
      ? null
      : {
          userId: caller.userId,
          email: caller.email,
          isAdmin: caller.isAdmin,
          keyScope: caller.kind === 'key' ? scopeName(caller.scope) : null,
        },
    (rule) => quotaSubject(caller, rule),
    limitsEnforcedFor(caller),
  );

export const readUsage = defineAction({
  what: 'usage',
  access: {},
  run: ({ deps, caller }) => callerUsage(deps.sql, caller),
});

import { scopeName } from '../../core/schemas.ts';
import { usageReport, usageReportSchema } from '../../core/usage/usageReport.ts';
import type { Caller } from '../http/auth.ts';
import { limitsEnforcedFor, quotaSubject } from '../http/guard.ts';
import { defineRoute } from '../http/route.ts';

/** What GET /api/features and the get_usage tool answer for a caller. */
export const callerUsage = (sql: Parameters<typeof usageReport>[0], caller: Caller) =>
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

export const featuresRoute = defineRoute({
  method: 'GET',
  path: '/api/features',
  tag: 'System',
  summary: 'Feature flags, limits and current usage of the caller',
  description:
    "With a key: the key owner's tier and usage, whatever the tier (a key of a tier without API access may read this, and nothing else). Without a key: the anonymous tier, counted per client address. An administrator's use is counted and shown but never refused (limitsEnforced: false).",
  auth: 'optional',
  apiAccess: false,
  response: usageReportSchema,
  async handler({ caller, deps }) {
    return callerUsage(deps.sql, caller);
  },
});

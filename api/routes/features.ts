import { usageReportSchema } from '../../core/usage/usageReport.ts';
import { perform } from '../http/route.ts';
import { readUsage } from '../actions/usage.ts';
import { defineRoute } from '../http/route.ts';

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
  async handler(ctx) {
    return perform(readUsage, ctx, undefined);
  },
});

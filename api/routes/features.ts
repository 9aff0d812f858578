import { z } from 'zod';
import { featureName, limitName, scopeName, tierName, type LimitName } from '../../core/schemas.ts';
import { readQuotas } from '../../core/usage/consumeQuota.ts';
import { quotaSubject } from '../http/quota.ts';
import { defineRoute } from '../http/route.ts';

const usageSchema = z.object({
  description: z.string(),
  unit: z.string(),
  window: z.enum(['sliding', 'utc_day']).describe('sliding: a rolling window; utc_day: resets at midnight UTC'),
  windowSeconds: z.number().int(),
  countedPer: z.enum(['user', 'key']),
  max: z.number().int().nullable().describe('null means unlimited'),
  used: z.number().int(),
  remaining: z.number().int().nullable(),
  resetSeconds: z.number().int().describe('seconds until the current window bucket ends'),
});

export const featuresRoute = defineRoute({
  method: 'GET',
  path: '/api/features',
  tag: 'System',
  summary: 'Feature flags, limits and current usage of the caller',
  description: 'With a key: the key owner\'s tier and usage. Without a key: the anonymous tier, counted per client address.',
  auth: 'optional',
  response: z.object({
    tier: z.object({ name: tierName, displayName: z.string() }),
    account: z.object({ userId: z.string(), email: z.string(), isAdmin: z.boolean(), keyScope: z.string() }).nullable(),
    features: z.record(featureName, z.boolean()),
    limits: z.record(limitName, usageSchema),
  }),
  async handler({ caller, deps }) {
    const rules = Object.values(caller.tier.limits);
    const states = await readQuotas(deps.sql, rules.map((rule) => ({ subject: quotaSubject(caller, rule), rule })));
    return {
      tier: { name: caller.tier.name, displayName: caller.tier.displayName },
      account: caller.kind === 'key' ? { userId: caller.userId, email: caller.email, isAdmin: caller.isAdmin, keyScope: scopeName(caller.scope) } : null,
      features: caller.tier.features,
      limits: Object.fromEntries(
        rules.map((rule, index) => {
          const state = states[index]!;
          return [rule.name, { description: rule.description, unit: rule.unit, window: rule.window, windowSeconds: rule.windowSeconds, countedPer: rule.countedPer, max: rule.max, used: state.used, remaining: state.remaining, resetSeconds: state.resetSeconds }];
        }),
      ) as Record<LimitName, z.infer<typeof usageSchema>>,
    };
  },
});

import { z } from 'zod';
import type { Sql } from '../db/database.ts';
import { featureName, keyedObject, limitName, tierName, type LimitName, type LimitRule, type Tier } from '../schemas.ts';
import { readQuotas } from './consumeQuota.ts';

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

const accountSchema = z.object({
  userId: z.string(),
  email: z.string(),
  isAdmin: z.boolean(),
  keyScope: z.string().nullable().describe('the scope of the key asking; null for a person signed in on the website, who has no key scope'),
});

/** The caller's tier, feature flags, and every limit with its use (GET /api/features, get_usage). */
export const usageReportSchema = z.object({
  tier: z.object({ name: tierName, displayName: z.string() }),
  account: accountSchema.nullable(),
  features: keyedObject(featureName, z.boolean()),
  limits: keyedObject(limitName, usageSchema),
  limitsEnforced: z
    .boolean()
    .describe(
      'an addition to the spec. false for an administrator: their use is counted and shown here, but no limit refuses them (no 429)',
    ),
});

/** `subjectOf` names whose counter a limit uses (the key's for per-key limits, else the user's or the address's). */
export async function usageReport(
  sql: Sql,
  tier: Tier,
  account: z.infer<typeof accountSchema> | null,
  subjectOf: (rule: LimitRule) => string,
  limitsEnforced: boolean,
): Promise<z.infer<typeof usageReportSchema>> {
  const rules = Object.values(tier.limits);
  const states = await readQuotas(
    sql,
    rules.map((rule) => ({ subject: subjectOf(rule), rule })),
  );
  return {
    tier: { name: tier.name, displayName: tier.displayName },
    account,
    features: tier.features,
    limits: Object.fromEntries(
      rules.map((rule, index) => {
        const state = states[index]!;
        return [
          rule.name,
          {
            description: rule.description,
            unit: rule.unit,
            window: rule.window,
            windowSeconds: rule.windowSeconds,
            countedPer: rule.countedPer,
            max: rule.max,
            used: state.used,
            remaining: state.remaining,
            resetSeconds: state.resetSeconds,
          },
        ];
      }),
    ) as Record<LimitName, z.infer<typeof usageSchema>>,
    limitsEnforced,
  };
}

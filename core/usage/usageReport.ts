import { z } from 'zod';
import type { Sql } from '../db/database.ts';
import {
  allowanceName,
  featureName,
  keyedObject,
  limitName,
  tierName,
  type AllowanceName,
  type LimitName,
  type LimitRule,
  type Tier,
} from '../schemas.ts';
import { heldAllowances } from '../watchlists/allowances.ts';
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

const allowanceSchema = z.object({
  description: z.string(),
  unit: z.string(),
  max: z.number().int().nullable().describe('how many may be held at once; null means unlimited'),
  held: z.number().int().describe('how many are held now'),
  remaining: z.number().int().nullable().describe('how many more may be added; null means unlimited (and for an administrator)'),
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
  allowances: keyedObject(allowanceName, allowanceSchema).describe(
    'an addition to the spec: what the caller may hold at once (watchlists, watched items, webhook endpoints), unlike limits, which count per window',
  ),
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
  const [states, held] = await Promise.all([
    readQuotas(
      sql,
      rules.map((rule) => ({ subject: subjectOf(rule), rule })),
    ),
    account ? heldAllowances(sql, account.userId) : undefined,
  ]);
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
    allowances: Object.fromEntries(
      Object.values(tier.allowances).map((rule) => {
        const holding = held?.[rule.name] ?? 0;
        return [
          rule.name,
          {
            description: rule.description,
            unit: rule.unit,
            max: rule.max,
            held: holding,
            remaining: rule.max === null || !limitsEnforced ? null : Math.max(0, rule.max - holding),
          },
        ];
      }),
    ) as Record<AllowanceName, z.infer<typeof allowanceSchema>>,
    limitsEnforced,
  };
}

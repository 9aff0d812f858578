import { z } from 'zod';
import type { Sql } from '../db/database.ts';
import { allowanceName, featureName, INT4_MAX, keyedObject, limitName, scopeLabel, scopeLevel, type TierName } from '../schemas.ts';

export const tierChanges = z.strictObject({
  apiAccess: z.boolean().optional(),
  maxKeyScope: scopeLabel.optional(),
  features: keyedObject(featureName, z.boolean()).partial().optional(),
  limits: keyedObject(limitName, z.number().int().nonnegative().max(2_147_483_647).nullable())
    .partial()
    .optional()
    .describe('new maximum per limit; null makes it unlimited, 0 forbids'),
  allowances: keyedObject(allowanceName, z.number().int().nonnegative().max(INT4_MAX).nullable())
    .partial()
    .optional()
    .describe('new maximum a user may hold per allowance; null makes it unlimited, 0 none. What is held already is kept.'),
});
export type TierChanges = z.infer<typeof tierChanges>;

/** Applies an operator's edit to one tier in a single transaction. Keys above a lowered scope are capped at use. */
export async function updateTier(sql: Sql, name: TierName, changes: TierChanges): Promise<void> {
  await sql.begin(async (tx) => {
    if (changes.apiAccess !== undefined || changes.maxKeyScope !== undefined) {
      await tx`
        update tiers set
          api_access = coalesce(${changes.apiAccess ?? null}::boolean, api_access),
          max_key_scope = coalesce(${changes.maxKeyScope ? scopeLevel(changes.maxKeyScope) : null}::smallint, max_key_scope),
          updated_at = now()
        where name = ${name}`;
    }
    for (const [feature, enabled] of Object.entries(changes.features ?? {})) {
      await tx`update tier_features set enabled = ${enabled!} where tier = ${name} and feature = ${feature}`;
    }
    for (const [limit, max] of Object.entries(changes.limits ?? {})) {
      await tx`update tier_limits set max_count = ${max ?? null} where tier = ${name} and limit_name = ${limit}`;
    }
    for (const [allowance, max] of Object.entries(changes.allowances ?? {})) {
      await tx`update tier_allowances set max_count = ${max ?? null} where tier = ${name} and allowance_name = ${allowance}`;
    }
  });
}

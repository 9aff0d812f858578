import type { Sql } from '../db/database.ts';
import { scopeName, tier as tierSchema, type Tier, type TierName } from '../schemas.ts';

/** All tiers with their feature flags, limits and allowances, lowest rank first. */
export async function loadTiers(sql: Sql): Promise<Tier[]> {
  const rows = await sql`
    select t.name, t.display_name as "displayName", t.rank, t.api_access as "apiAccess", t.max_key_scope as "maxKeyScope",
      to_json(t.updated_at)#>>'{}' as "updatedAt",
      (select coalesce(jsonb_object_agg(tf.feature, tf.enabled), '{}') from tier_features tf where tf.tier = t.name) as features,
      (select coalesce(jsonb_object_agg(l.name, jsonb_build_object(
          'name', l.name, 'description', l.description, 'unit', l.unit, 'window', l.window_kind,
          'windowSeconds', l.window_seconds, 'countedPer', l.counted_per, 'max', tl.max_count)), '{}')
        from tier_limits tl join limit_definitions l on l.name = tl.limit_name where tl.tier = t.name) as limits,
      (select coalesce(jsonb_object_agg(a.name, jsonb_build_object(
          'name', a.name, 'description', a.description, 'unit', a.unit, 'max', ta.max_count)), '{}')
        from tier_allowances ta join allowance_definitions a on a.name = ta.allowance_name where ta.tier = t.name) as allowances
    from tiers t order by t.rank`;
  return rows.map((row) => tierSchema.parse({ ...row, maxKeyScope: scopeName(row.maxKeyScope) }));
}

/**
 * Tiers change rarely and are read on every request, so each process keeps them for a few seconds:
 * an operator's edit reaches every API process within `ttlMs`.
 */
export function cachedTiers(sql: Sql, ttlMs = 5_000) {
  let cached: { at: number; tiers: Promise<Map<TierName, Tier>> } | undefined;
  return {
    get(): Promise<Map<TierName, Tier>> {
      if (!cached || Date.now() - cached.at > ttlMs) {
        const tiers = loadTiers(sql).then((list) => new Map(list.map((tier) => [tier.name, tier])));
        cached = { at: Date.now(), tiers };
        tiers.catch(() => {
          cached = undefined;
        });
      }
      return cached.tiers;
    },
    invalidate() {
      cached = undefined;
    },
  };
}
export type TierCache = ReturnType<typeof cachedTiers>;

import { z } from 'zod';
import { notFound } from '../../core/errors.ts';
import { tier, tierName } from '../../core/schemas.ts';
import { loadTiers } from '../../core/tiers/loadTiers.ts';
import { tierChanges, updateTier } from '../../core/tiers/updateTier.ts';
import { defineRoute } from '../http/route.ts';

export const listTiersRoute = defineRoute({
  method: 'GET',
  path: '/api/tiers',
  tag: 'System',
  summary: 'All tiers side by side: API access, key scope, feature flags and limits',
  description:
    "Public. Every tier names every feature and every limit (max null: unlimited, 0: none); GET /api/features says which tier is the caller's and what it has used.",
  auth: 'public',
  // The same for everybody; an operator's change shows within a minute.
  cache: { scope: 'public', maxAgeSeconds: 60 },
  response: z.object({ tiers: z.array(tier) }),
  async handler({ deps }) {
    return { tiers: [...(await deps.tiers.get()).values()] };
  },
});

export const updateTierRoute = defineRoute({
  method: 'PATCH',
  path: '/api/tiers/:name',
  tag: 'System',
  summary: "Change a tier's API access, key scope, feature flags or limits (administrators)",
  description: 'Takes effect in every API process within 5 seconds.',
  auth: 'key',
  admin: true,
  params: z.strictObject({ name: tierName }),
  body: tierChanges,
  response: tier,
  errors: ['INVALID_INPUT', 'FORBIDDEN', 'NOT_FOUND'],
  async handler({ params, body, deps }) {
    await updateTier(deps.sql, params.name, body);
    deps.tiers.invalidate();
    const updated = (await loadTiers(deps.sql)).find((entry) => entry.name === params.name);
    if (!updated) throw notFound(`no tier ${params.name}`);
    return updated;
  },
});

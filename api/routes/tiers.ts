import { z } from 'zod';
import { tier, tierName } from '../../core/schemas.ts';
import { tierChanges } from '../../core/tiers/updateTier.ts';
import { changeTier, listTiers } from '../actions/system.ts';
import { defineRoute, perform } from '../http/route.ts';

export const listTiersRoute = defineRoute({
  method: 'GET',
  path: '/api/tiers',
  tag: 'System',
  summary: 'All tiers side by side: API access, key scope, feature flags, limits and allowances',
  description:
    "Public. Every tier names every feature, every limit and every allowance (what a user may hold at once: watchlists, watched items, webhook endpoints; max null: unlimited, 0: none); GET /api/features says which tier is the caller's and what it has used and holds.",
  auth: 'public',
  ...listTiers.access,
  // The same for everybody; an operator's change shows within a minute.
  cache: { scope: 'public', maxAgeSeconds: 60 },
  response: z.object({ tiers: z.array(tier) }),
  async handler(ctx) {
    return { tiers: await perform(listTiers, ctx, undefined) };
  },
});

export const updateTierRoute = defineRoute({
  method: 'PATCH',
  path: '/api/tiers/:name',
  tag: 'System',
  summary: "Change a tier's API access, key scope, feature flags, limits or allowances (administrators)",
  description:
    'Takes effect in every API process within 5 seconds. A lowered allowance keeps what users hold already and refuses them more.',
  auth: 'key',
  ...changeTier.access,
  params: z.strictObject({ name: tierName }),
  body: tierChanges,
  response: tier,
  errors: ['INVALID_INPUT', 'FORBIDDEN', 'NOT_FOUND'],
  async handler(ctx) {
    return perform(changeTier, ctx, { name: ctx.params.name, changes: ctx.body });
  },
});

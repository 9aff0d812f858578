import { AppError } from '../../core/errors.ts';
import { scopeLevel, type FeatureName, type ScopeLabel } from '../../core/schemas.ts';
import type { Caller } from './auth.ts';

/** What a route or an MCP tool asks of its caller beyond a valid key. */
export interface Access {
  admin?: boolean | undefined;
  scope?: ScopeLabel | undefined;
  feature?: FeatureName | undefined;
}

/**
 * Refuses (403 FORBIDDEN or FEATURE_DISABLED) a caller whose key, account or tier falls short of `access`.
 * Scopes are a key's alone: a signed-in person is limited by their account and tier only.
 */
export function checkAccess(caller: Caller, access: Access, what = 'this endpoint'): void {
  if (access.admin && (caller.kind === 'anonymous' || !caller.isAdmin))
    throw new AppError('FORBIDDEN', `${what} is for administrators only`);
  if (caller.kind === 'key') {
    if (access.scope && caller.scope < scopeLevel(access.scope)) {
      throw new AppError('FORBIDDEN', `${what} needs an API key with ${access.scope}+ scope; this key has L${caller.scope}`);
    }
  }
  if (access.feature && !caller.tier.features[access.feature]) {
    throw new AppError('FEATURE_DISABLED', `${access.feature} is not part of the ${caller.tier.displayName} tier`, {
      details: { feature: access.feature },
    });
  }
}

import type { Sql } from '../db/database.ts';
import { emailSkeleton } from '../email/lookAlikes.ts';
import { issueApiKey, type CreatedApiKey } from './createApiKey.ts';
import { createSignInLink } from './createSignInLink.ts';

const FIRST_ADMIN_EMAIL = 'admin@afterimage.localhost';
const BOOTSTRAP_LOCK = 7_246_154;

/**
 * On a database with no users at all, creates a Pro administrator with an L4 key so a newcomer can
 * call the API at once, and a one-time sign-in link for the website (the administrator has no password
 * until they set one). Returns both (to be shown once), or undefined when there were users already.
 */
export type FirstAdmin = CreatedApiKey & { email: string; signInToken: string; signInExpiresAt: Date };

export async function bootstrapAdmin(sql: Sql): Promise<FirstAdmin | undefined> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${BOOTSTRAP_LOCK})`;
    const [any] = await tx`select 1 from users limit 1`;
    if (any) return undefined;
    const skeleton = await emailSkeleton(FIRST_ADMIN_EMAIL);
    const [user] = await tx<
      { id: string }[]
    >`insert into users (email, email_skeleton, tier, is_admin) values (${FIRST_ADMIN_EMAIL}, ${skeleton}, 'pro', true) returning id`;
    const key = await issueApiKey(tx, { userId: user!.id, scope: 'L4' });
    const link = await createSignInLink(tx, user!.id);
    return { ...key, email: FIRST_ADMIN_EMAIL, signInToken: link.token, signInExpiresAt: link.expiresAt };
  });
}

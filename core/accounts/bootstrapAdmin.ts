import type { Sql } from '../db/database.ts';
import { issueApiKey, type CreatedApiKey } from './createApiKey.ts';

const FIRST_ADMIN_EMAIL = 'admin@afterimage.localhost';
const BOOTSTRAP_LOCK = 7_246_154;

/**
 * On a database with no users at all, creates a Pro administrator with an L4 key so a newcomer can
 * call the API at once. Returns the key (to be shown once), or undefined when there were users already.
 */
export async function bootstrapAdmin(sql: Sql): Promise<CreatedApiKey | undefined> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${BOOTSTRAP_LOCK})`;
    const [any] = await tx`select 1 from users limit 1`;
    if (any) return undefined;
    const [user] = await tx<{ id: string }[]>`insert into users (email, tier, is_admin) values (${FIRST_ADMIN_EMAIL}, 'pro', true) returning id`;
    return issueApiKey(tx, { userId: user!.id, scope: 'L4' });
  });
}

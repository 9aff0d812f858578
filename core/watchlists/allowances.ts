import { AppError } from '../errors.ts';
import type { Queryable } from '../db/database.ts';
import type { AllowanceName } from '../schemas.ts';

/** How many of each allowance a user holds now: one count each, over all of their watchlists. */
const HELD: Record<AllowanceName, string> = {
  watchlists: 'select count(*) from watchlists where owner_id = u.id',
  watchlistItems: 'select count(*) from watchlist_items i join watchlists w on w.id = i.watchlist_id where w.owner_id = u.id',
  webhooks: 'select count(*) from webhook_endpoints e join watchlists w on w.id = e.watchlist_id where w.owner_id = u.id',
};

/** How many of each allowance the user holds now (GET /api/features, the account page). */
export async function heldAllowances(sql: Queryable, userId: string): Promise<Record<AllowanceName, number>> {
  const names = Object.keys(HELD) as AllowanceName[];
  const [row] = await sql.unsafe<Record<AllowanceName, number>[]>(
    `select ${names.map((name) => `(${HELD[name]})::int as "${name}"`).join(', ')} from users u where u.id = $1`,
    [userId],
  );
  return row ?? (Object.fromEntries(names.map((name) => [name, 0])) as Record<AllowanceName, number>);
}

/**
 * Refuses (403) one more of `allowance` when the owner's tier allows no more; call it in the
 * transaction that adds it. The owner's row stays locked until that transaction ends, so two
 * requests racing for the last one cannot both have it. Administrators' holdings are not limited,
 * as their limits are not.
 */
export async function holdOneMore(tx: Queryable, ownerId: string, allowance: AllowanceName, adding = 1): Promise<void> {
  // Locked first, counted in the next statement: a statement that waited for the lock still sees what
  // it saw when it began, so counting in it would miss what the transaction holding the lock added.
  await tx`select 1 from users where id = ${ownerId} for update`;
  const [row] = await tx.unsafe<{ max: number | null; held: number; isAdmin: boolean; unit: string; tier: string }[]>(
    `select ta.max_count as max, (${HELD[allowance]})::int as held, u.is_admin as "isAdmin", d.unit, t.display_name as tier
     from users u
     join tiers t on t.name = u.tier
     join allowance_definitions d on d.name = $2
     left join tier_allowances ta on ta.tier = u.tier and ta.allowance_name = $2
     where u.id = $1`,
    [ownerId, allowance],
  );
  if (!row || row.isAdmin || row.max === null || row.held + adding <= row.max) return;
  throw new AppError(
    'FORBIDDEN',
    row.max === 0
      ? `the ${row.tier} tier includes no ${row.unit}`
      : `the ${row.tier} tier allows ${row.max} ${row.unit} and you have ${row.held}: remove one first, or ask for a higher tier`,
    { details: { allowance, max: row.max, held: row.held } },
  );
}

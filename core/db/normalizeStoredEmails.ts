/**
 * The data step of sql/043_email_forms.sql: every stored address is rewritten in the one form
 * (normalizeEmail) and gets its look-alike skeleton. Accounts whose addresses become the same (`josé`
 * stored precomposed and decomposed) are not merged: the one already in that form keeps the address,
 * else the oldest; the others stay as stored, so they no longer sign in with a password (their keys
 * still work), and are reported for the operator to delete or rename. Accounts that look alike, and
 * addresses that mix scripts, are reported and left as they are.
 */
import { emailSkeleton, mixedScripts } from '../email/lookAlikes.ts';
import { normalizeEmail } from '../email/normalizeEmail.ts';
import type { Logger } from '../log.ts';
import type { Queryable } from './database.ts';

interface StoredUser {
  id: string;
  email: string;
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

export async function normalizeStoredEmails(tx: Queryable, log: Logger): Promise<void> {
  const users = await tx<StoredUser[]>`select id::text, email from users order by created_at, id`;
  const rewritten: StoredUser[] = [];
  for (const [form, same] of groupBy(users, (user) => normalizeEmail(user.email))) {
    const keeper = same.find((user) => user.email === form) ?? same[0]!;
    if (keeper.email !== form) rewritten.push({ id: keeper.id, email: form });
    const others = same.filter((user) => user !== keeper);
    if (others.length > 0)
      log.warn('accounts whose emails are one address: the first keeps it, the others stay as stored and cannot sign in with a password', {
        address: form,
        kept: keeper.id,
        others: others.map((user) => ({ id: user.id, email: user.email })),
      });
  }
  await tx`
    update users u set email = r.email from unnest(${rewritten.map((user) => user.id)}::uuid[], ${rewritten.map((user) => user.email)}::text[]) as r(id, email)
    where u.id = r.id`;
  const skeletons = await Promise.all(
    users.map(async (user) => ({
      id: user.id,
      email: normalizeEmail(user.email),
      skeleton: await emailSkeleton(normalizeEmail(user.email)),
    })),
  );
  await tx`
    update users u set email_skeleton = r.skeleton
    from unnest(${skeletons.map((user) => user.id)}::uuid[], ${skeletons.map((user) => user.skeleton)}::text[]) as r(id, skeleton)
    where u.id = r.id`;
  for (const alike of groupBy(skeletons, (user) => user.skeleton).values()) {
    const addresses = new Set(alike.map((user) => user.email));
    if (addresses.size > 1) log.warn('accounts whose emails look alike: check that they are different people', { emails: [...addresses] });
  }
  for (const user of skeletons) {
    const mixed = await mixedScripts(user.email);
    if (mixed) log.warn('an account email mixes scripts', { id: user.id, email: user.email, ...mixed });
  }
  if (rewritten.length > 0) log.info('account emails normalised', { rewritten: rewritten.length });
}
